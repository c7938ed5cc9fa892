"""Statements read from text, compared, linked; and recall's current-first order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlattice.core.statements.compare import compare
from memlattice.core.statements.contrast import Profile, contrast, profile
from memlattice.core.statements.extract import Statement, extract
from memlattice.core.statements.linking import Stated, links
from memlattice.search.currency import (
    asks_about,
    asks_for,
    asks_past,
    asks_present,
    later_of_a_source_first,
    names,
    prefer_current,
)
from memlattice.search.ranking import Scored


def one(text: str, speaker: str | None = "ines") -> Statement:
    (found,) = extract(text, speaker=speaker)
    return found


@pytest.mark.parametrize(("text", "owner", "thing", "attribute", "value"), [
    ("I live in Bergen with my partner.", "ines", (), "residence", "bergen"),
    ("We finally moved to Tromsø last month!", "ines", (), "residence", "tromsø"),
    ("Ines moved to Porto.", "ines", (), "residence", "porto"),
    ("My sister lives in Oslo.", "ines's sister", (), "residence", "oslo"),
    ("I work at Acme as a designer.", "ines", (), "employer", "acme"),
    ("My phone number is 555-0101.", "ines", ("phone", "number"), "phone", "5550101"),
    ("We have three rabbits now.", "ines", ("rabbit",), "count", "3"),
    ("We adopted a second dog", "ines", ("dog",), "count", "2"),
    ("The metrics exporter listens on 9100.", None, ("metric", "export"), "endpoint", "9100"),
    ("The standup moved to Thursdays.", None, ("standup",), "when", "thursday"),
    ("We upgraded to Postgres 16 yesterday.", "ines", ("postgr",), "version", "16"),
    ("As of Monday, the deploy target is staging-2.internal:8080.", None,
     ("deploi", "target"), "address", "staging-2.internal:8080"),
    # An occasion's word that starts a state, or "now", keeps the value a standing one.
    ("Starting today, the standup is at 11.", None, ("standup",), "number", "11"),
    ("The metrics exporter moved to port 9100 this morning.", None, ("metric", "export"),
     "number", "9100"),
    # A leading start of a state without its comma, as chats write it.
    ("From today the standup is at 11.", None, ("standup",), "number", "11"),
    ("Since April I live in Oslo.", "ines", (), "residence", "oslo"),
    ("Since April I have lived in Oslo.", "ines", (), "residence", "oslo"),
    ("As of last week my number is 555-0199.", "ines", ("number",), "phone", "5550199"),
    ("From now on the deploy target is staging-3.internal.", None, ("deploi", "target"),
     "address", "staging-3.internal"),
])
def test_a_statement_has_a_subject_an_attribute_and_a_value(
    text: str, owner: str | None, thing: tuple[str, ...], attribute: str, value: str,
) -> None:
    s = one(text)
    assert (s.owner, s.thing, s.attribute, s.value) == (owner, thing, attribute, value)


@pytest.mark.parametrize("text", [
    "Should I move to Oslo?",                      # a question
    "I'm thinking about moving to Oslo.",          # a plan
    "If we moved to Oslo, we would be closer.",    # a condition
    "I will move to Oslo next year.",              # the future
    "I used to live in Oslo.",                     # the past, not a present state
    "I visited Rome last year.",                   # an event: both visits stay true
    "She lives in Oslo.",                          # a pronoun the rules cannot resolve
    "Haha, totally!",
    "",
    # One occasion, not a standing value: another day's state is no update of it.
    "The session cache was slow yesterday.",
    "The standup is at 11 today.",
    "The build was red this morning.",
    # A possessive "'s" before the clause's own verb is not "is" (not "ledgerd is
    # metrics exporter was noisy"); a lower-case owner's thing is not read at all.
    "ledgerd's metrics exporter was noisy again",
    "the api's port is 8080",
    # A leading phrase that is not a time is not skipped to find a subject (and a
    # drive is an event).
    "From Oslo we drove to Bergen.",
    # A state that starts later does not hold now; a gerund is no time.
    "Starting next week the standup is at 11.",
    "Starting this studio isn't just a business.",
])
def test_what_asserts_no_present_state_gives_no_statement(text: str) -> None:
    assert extract(text, speaker="ines") == []


def test_first_person_without_a_speaker_is_nobody_s() -> None:
    assert extract("I live in Bergen.", speaker=None) == []


def test_a_new_value_from_the_same_subject_is_an_update_and_says_why() -> None:
    verdict = compare(one("I live in Bergen."), one("We moved to Tromsø."), same_source=True)
    assert verdict is not None and verdict.kind == "update"
    assert verdict.attribute == "residence" and verdict.subject == "ines"
    assert "'Bergen' -> 'Tromsø'" in verdict.reason  # the values as written
    assert {"live", "bergen", "moved", "tromsø"} <= set(verdict.matched)


def test_another_source_without_a_change_is_a_contradiction() -> None:
    said = one("Ines lives in Porto.", speaker="tom")
    verdict = compare(one("I live in Bergen."), said, same_source=False)
    assert verdict is not None and verdict.kind == "contradiction"


@pytest.mark.parametrize(("older", "newer"), [
    ("I live in Bergen.", "My sister lives in Oslo."),     # another subject
    ("I have a cat.", "We also adopted a dog."),          # another kind of thing
    ("I live in Bergen.", "I live in Bergen, still."),    # the same value
    ("I live in Bergen.", "I work at Acme."),             # another attribute
])
def test_no_link_between_statements_that_both_hold(older: str, newer: str) -> None:
    a, b = extract(older, speaker="ines"), extract(newer, speaker="ines")
    assert all(compare(x, y, same_source=True) is None for x in a for y in b)


def test_denying_the_old_value_updates_it() -> None:
    verdict = compare(one("I live in Bergen."), one("I don't live in Bergen anymore."),
                      same_source=True)
    assert verdict is not None and verdict.kind == "update" and "no longer" in verdict.reason


T0 = datetime(2025, 1, 1, tzinfo=UTC)


def stated(id: str, text: str, days: int) -> Stated:
    return Stated(memory_id=id, at=T0 + timedelta(days=days), source="ines",
                  statement=one(text))


def test_a_chain_of_states_links_each_state_to_the_one_before() -> None:
    a = stated("a", "I live in Bergen.", 0)
    b = stated("b", "We moved to Tromsø.", 10)
    c = stated("c", "We relocated to Oslo.", 20)
    made = links([c], [a, b])
    assert [(x.newer, x.older) for x in made] == [("c", "b")]
    made = links([b, c], [a])
    assert sorted((x.newer, x.older) for x in made) == [("b", "a"), ("c", "b")]


def test_a_statement_written_out_of_order_links_to_its_successor() -> None:
    late = stated("late", "We moved to Tromsø.", 10)
    early = stated("early", "I live in Bergen.", 0)
    assert [(x.newer, x.older) for x in links([early], [late])] == [("late", "early")]


def test_a_pair_already_linked_either_way_is_not_linked_again() -> None:
    a = stated("a", "I live in Bergen.", 0)
    b = Stated(memory_id="b", at=T0 + timedelta(days=5), source="ines",
               statement=one("We moved to Tromsø."), linked=frozenset({"a"}))
    assert links([b], [a]) == []


def scored(*ids: str) -> list[Scored]:
    return [Scored(id=id, score=1.0 - i / 10) for i, id in enumerate(ids)]


def test_the_newest_state_takes_the_place_of_the_outdated_one() -> None:
    order = prefer_current(scored("old", "x", "new"), {"old": "new"}, past=False)
    assert [s.id for s in order] == ["new", "old", "x"]
    assert order[0].score >= order[1].score


def test_a_state_the_search_missed_enters_where_the_outdated_one_stood() -> None:
    order = prefer_current(scored("x", "old"), {"old": "new"}, past=False)
    assert [s.id for s in order] == ["x", "new", "old"]
    assert order[1].expanded and order[1].path[0].type == "UPDATES"


def test_two_states_the_search_found_are_ordered_whatever_the_question() -> None:
    order = prefer_current(scored("old", "x", "new"), {"old": "new"}, past=False, asked=())
    assert [s.id for s in order] == ["new", "old", "x"]


def test_a_missing_state_enters_only_for_a_question_about_its_link() -> None:
    unasked = prefer_current(scored("x", "old"), {"old": "new"}, past=False, asked=())
    assert [s.id for s in unasked] == ["x", "old"]
    asked = prefer_current(scored("x", "old"), {"old": "new"}, past=False, asked={"old"})
    assert [s.id for s in asked] == ["x", "new", "old"]


def test_a_question_about_the_link_gets_the_state_it_asks_for_first() -> None:
    # "Where does Tom live?" after a filler outranked both of Tom's homes
    present = prefer_current(scored("x", "old", "new"), {"old": "new"}, past=False,
                             asked={"old"}, lead={"old"})
    assert [s.id for s in present] == ["new", "x", "old"]
    assert present[0].score >= present[1].score
    past = prefer_current(scored("x", "new", "old"), {"old": "new"}, past=True, lead={"old"})
    assert [s.id for s in past] == ["old", "x", "new"]
    # a question about something else keeps the order the search gave
    other = prefer_current(scored("x", "old", "new"), {"old": "new"}, past=False,
                           asked={"old"})
    assert [s.id for s in other] == ["x", "new", "old"]


def test_a_question_about_the_past_gets_the_older_state_first() -> None:
    order = prefer_current(scored("new", "x", "old"), {"old": "new"}, past=True)
    assert [s.id for s in order] == ["old", "new", "x"]


@given(st.permutations(["a", "b", "c", "d", "e"]), st.booleans())
def test_reordering_never_drops_or_duplicates_a_memory(ids: list[str], past: bool) -> None:
    order = prefer_current(scored(*ids), {"a": "b", "c": "z"}, past=past)
    assert sorted(s.id for s in order) == sorted([*ids] if past else [*ids, "z"])


@pytest.mark.parametrize(("query", "past"), [
    ("Where does Ines live?", False),
    ("Where does Ines live now?", False),
    ("Where did Ines live before?", True),
    ("What port did the exporter use at first?", True),
    ("Which phone did she use to have?", True),
    ("Where was Ines living previously?", True),
])
def test_past_questions_are_told_apart(query: str, past: bool) -> None:
    assert asks_past(query, None, T0) is past


def test_a_named_time_that_has_ended_asks_about_the_past() -> None:
    assert asks_past("Where did Ines live in 2022?", T0 - timedelta(days=300), T0)


def read(text: str, speaker: str | None = "kai") -> Profile:
    return profile(text, speaker=speaker)


@pytest.mark.parametrize(("older", "newer", "attribute"), [
    ("The search service answers on port 7700 in the cluster.",
     "After the rollout the search service moved to port 7800.", "number"),
    ("Our wiki runs Confluence 7.19 on the old box.",
     "The wiki was upgraded overnight and now runs 8.5.", "version"),
    ("The weekly planning call is at 14:00 on Tuesdays.",
     "From next week the planning call is moved to 15:30.", "time"),
    ("Support escalations for the payments queue go to Aino.",
     "Since Monday, Bruno took over the payments queue escalations.", "name"),
])
def test_contrast_reads_another_value_of_the_same_subject_with_a_word_of_change(
    older: str, newer: str, attribute: str,
) -> None:
    verdict = contrast(read(older, "ops"), read(newer, "ops"), same_source=True)
    assert verdict is not None and verdict.kind == "update"
    assert verdict.attribute == attribute


@pytest.mark.parametrize(("older", "newer"), [
    # no word of change: two facts, not one fact twice
    ("The search service answers on port 7700.", "The billing service answers on port 7800."),
    # a question and a plan assert nothing
    ("The planning call is at 14:00.", "Should we move the planning call to 15:30?"),
    ("The planning call is at 14:00.", "Maybe we could move the planning call to 15:30."),
    # one more, not another
    ("We have a hamster named Fig.", "We also got a parrot now, called Kiwi."),
    # nothing shared but a new name
    ("I moved into a flat near Holmen.", "My cousin Ada just moved to Dublin."),
    # a name the change does not lead to: who said it went fine, not where it went
    ("Our billing service runs in the Frankfurt region; Dana reviews its deploys.",
     "We switched the billing service to a bigger queue yesterday, Marek said it went fine."),
])
def test_contrast_links_nothing_that_both_holds_or_asserts_nothing(older: str,
                                                                   newer: str) -> None:
    assert contrast(read(older), read(newer), same_source=True) is None


def test_only_a_question_about_the_updated_attribute_is_reordered() -> None:
    link = ["ines", "residence", "live", "in", "bergen", "moved", "tromsø"]
    assert asks_about("Where does Ines live?", link)
    assert asks_about("Is she still in Bergen?", link)
    assert not asks_about("What did Caroline paint last summer?", link)
    assert not asks_about(None, link)


@pytest.mark.parametrize(("query", "attribute", "asked"), [
    ("Who is Marco's employer now?", "name", True),
    ("Where does Ines live?", "residence", True),
    ("When is the platform standup?", "time", True),
    ("What time is the standup now?", "when", True),
    ("How many rabbits does Lea have?", "count", True),
    ("Which version of Postgres runs the orders cluster?", "version", True),
    ("Where does Ines live?", "time", False),
    ("What does Hannah drink in the morning?", "name", False),  # "what" names no kind
    (None, "name", False),
])
def test_a_question_word_asks_for_a_kind_of_value(query: str | None, attribute: str,
                                                  asked: bool) -> None:
    assert asks_for(query, attribute) is asked


def test_a_question_names_a_speaker_as_a_word() -> None:
    assert names("Who is Marco's employer now?", "Marco")
    assert names("Where does Mei Lin work?", "Mei Lin")
    assert not names("Where does Mei work?", "Mei Lin")
    assert not names("Who is the Marcos team lead?", "Marco")
    assert not names("Who is it?", None)



# What a chat says besides facts: names spoken to someone, dates of past events,
# opinions, common verbs. Each once made links in real conversations.
@pytest.mark.parametrize(("older", "newer"), [
    # names spoken to the listener are not values
    ("Thanks, Priya! My garden looks lovely this spring.",
     "Hey Tomas, since the storm my garden is a mess."),
    # "took" alone is among English's commonest verbs, not a replacement
    ("We drove to Lisbon for the garden show.", "I took the kids to the Porto garden show."),
    # counts of different things
    ("I keep three chickens in the yard.", "We now have four goats in the yard."),
    # the speaker's home, then someone else's
    ("We're renting a flat in Aarhus.", "My brother moved to Odense, into a flat by the canal."),
])
def test_contrast_reads_no_update_into_chat(older: str, newer: str) -> None:
    assert contrast(read(older), read(newer), same_source=True) is None


def test_a_particle_verb_of_replacement_needs_its_particle() -> None:
    older, newer = read("The billing pager is carried by Dana.", "ops"), read(
        "Dana handed the billing pager over to Emil.", "ops")
    verdict = contrast(older, newer, same_source=True)
    assert verdict is not None and "emil" in verdict.matched and "handed over" in newer.change


def test_a_count_that_leaves_out_what_it_counts_counts_what_was_counted() -> None:
    verdict = contrast(read("I have two rabbits at home."), read("Three now, since spring."),
                       same_source=True)
    assert verdict is not None and verdict.attribute == "count"


def test_the_weekday_of_a_past_event_is_no_value() -> None:
    assert ("when", "friday") not in read("We went hiking last Friday.").values
    assert ("when", "friday") in read("The retro moved to Friday.").values


def test_an_opinion_is_no_statement_of_fact() -> None:
    assert extract("The colours are so bold.", speaker="kai") == []
    assert extract("Your painting is awesome.", speaker="kai") == []


def test_joining_a_group_is_no_employer() -> None:
    assert not [s for s in extract("I joined a hiking group.", speaker="kai")
                if s.attribute == "employer"]
    assert [s for s in extract("I joined Kinova last month.", speaker="kai")
            if s.attribute == "employer"]


def test_a_name_both_memories_state_is_who_they_are_about() -> None:
    older = read("Account owner: Lotte Brandt, buyer, based in the Ghent office.", "crm")
    newer = read("Lotte Brandt transferred to the Antwerp warehouse this spring.", "crm")
    verdict = contrast(older, newer, same_source=True)
    assert verdict is not None and "antwerp" in verdict.matched
    # ... but a name that only ends another ("Gare de Lyon") is another name.
    assert contrast(read("I live near Gare de Lyon in Paris.", "lea"),
                    read("My brother Paul just moved to Lyon.", "lea"), same_source=True) is None


def test_a_value_ended_without_a_new_one_links_nothing() -> None:
    # "We sold the Primavera" names no new value: on scenarios written blind, reading
    # such an ending as an update was right once in six, so it is not read.
    assert contrast(read("I ride a Vespa Primavera to the studio."),
                    read("We sold the Primavera last week."), same_source=True) is None


def test_a_bare_number_is_new_only_where_a_change_leads_to_it() -> None:
    assert contrast(read("The exporter listens on port 9100.", "ops"),
                    read("After the migration the exporter port changed to 9200.", "ops"),
                    same_source=True) is not None
    assert contrast(read("The exporter listens on port 9100.", "ops"),
                    read("Since the migration the exporter served 9200 scrapes.", "ops"),
                    same_source=True) is None


def test_a_rule_that_starts_now_states_the_present() -> None:
    older, newer = read("Invoices go to billing@kestrel.io, please."), read(
        "All invoices should go to ap@kestrel.io from now on.")
    assert newer.values and contrast(older, newer, same_source=True) is not None
    assert not read("Invoices should go to ap@kestrel.io.").values


def test_a_host_name_s_words_are_its_topic() -> None:
    verdict = contrast(read("The ledger API answers at ledger.int.kestrel.io:9443.", "ops"),
                       read("Callers must now use ledger-v2.int.kestrel.io on 443.", "ops"),
                       same_source=True)
    assert verdict is not None and "ledger" in verdict.matched


@pytest.mark.parametrize(("query", "present"), [
    ("Where does Tom live?", True), ("Who is on call for storage?", True),
    ("Who owns the billing service?", True), ("What book is Jon currently reading?", True),
    ("Where did Tom go last summer?", False), ("Which cities has Jon visited?", False),
    ("What was the first thing she painted?", False), ("Address?", False),
])
def test_a_question_s_tense_says_whether_it_asks_about_the_present(query: str,
                                                                  present: bool) -> None:
    assert asks_present(query) is present


def test_a_later_statement_of_the_same_source_goes_first_when_about_as_relevant() -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    said = {"old": ("tom", t0), "new": ("tom", t0 + timedelta(days=90)),
            "other": ("ana", t0 + timedelta(days=200)), "far": ("tom", t0 + timedelta(days=300))}
    ranked = [Scored("old", 1.0), Scored("new", 0.85), Scored("other", 0.8), Scored("far", 0.5)]
    order = [s.id for s in later_of_a_source_first(ranked, said, within=0.8)]
    # Tom's later statement goes first; Ana's is another source; the far one is
    # outside the window and much weaker.
    assert order == ["new", "old", "other", "far"]
    assert [s.id for s in later_of_a_source_first(ranked, said, within=0.9)] == [
        "old", "new", "other", "far"]


@given(st.permutations(["a", "b", "c", "d"]), st.floats(0.1, 1))
def test_the_later_first_order_keeps_every_memory(ids: list[str], within: float) -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    said = {x: ("s", t0 + timedelta(days=i)) for i, x in enumerate(ids)}
    ranked = [Scored(x, 1.0 - 0.1 * i) for i, x in enumerate(ids)]
    assert sorted(s.id for s in later_of_a_source_first(ranked, said, within=within)) == sorted(ids)


def test_a_reading_changes_only_where_a_change_leads_to_it() -> None:
    # Two readings of a measure both stand: "87%" then "64%" is a time series.
    assert contrast(read("The cache hit rate is 87% today.", "ops"),
                    read("Since the new image the cache hit rate is 64%.", "ops"),
                    same_source=True) is None
    # A setting moved to a new value is an update.
    verdict = contrast(read("The cache size cap is 40% of memory.", "ops"),
                       read("We raised the cache size cap to 60%.", "ops"), same_source=True)
    assert verdict is not None and verdict.attribute == "reading"


def test_an_age_in_a_tool_s_output_is_a_reading_not_a_setting() -> None:
    # "212d" in kubectl's AGE column is how long something ran, not its value:
    # it changes on its own, so it is new only where a change leads to it.
    older = read("$ kubectl get deploy search-gateway\nNAME READY AGE\n"
                 "search-gateway 3/3 212d", "tool")
    assert ("reading", "212d") in older.values
    verdict = contrast(older, read("We upgraded search-gateway: replicas are now 5 "
                                   "after 14d of tests.", "tool"), same_source=True)
    assert verdict is None or "212d" not in verdict.matched


def test_a_reason_shows_the_values_as_written_not_their_comparable_form() -> None:
    verdict = compare(one("The standup is at 9:30."), one("The standup moved to 11:00."),
                      same_source=True)
    assert verdict is not None and "'9:30' -> '11:00'" in verdict.reason
    # The comparable forms still decide: "06:30" and "6:30" say the same.
    assert compare(one("The standup is at 06:30."), one("The standup is at 6:30."),
                   same_source=True) is None
