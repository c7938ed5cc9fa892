"""Changes written as edits (diffs, arrows, corrections), and what logs and notes
say besides updates: task lists, proposals, offers, "new" things, tool output."""

from __future__ import annotations

import pytest

from memlattice.core.statements.contrast import Profile, contrast, profile
from memlattice.core.statements.edits import read_edits
from memlattice.core.statements.values import normalise, value_kind


def read(text: str, speaker: str | None = "ops") -> Profile:
    return profile(text, speaker=speaker)


def test_a_diff_puts_in_the_new_value_and_takes_out_the_old() -> None:
    edits = read_edits("$ git diff deploy/prod.env\n-UPSTREAM_TIMEOUT_MS=3000\n"
                       "+UPSTREAM_TIMEOUT_MS=5000")
    assert edits.marks == ("+/-",) and edits.targets == {"5000"}
    assert "3000" not in edits.text
    verdict = contrast(read("checkout-api waits 3000 ms (UPSTREAM_TIMEOUT_MS=3000)."),
                       read("$ git diff deploy/prod.env\n-UPSTREAM_TIMEOUT_MS=3000\n"
                            "+UPSTREAM_TIMEOUT_MS=5000", "tool"), same_source=False)
    assert verdict is not None and "5000" in verdict.matched


@pytest.mark.parametrize(("text", "marked"), [
    ('region: "eu-west-1" -> "eu-central-1"', True),
    ("the exporter port 9100 → 9256", True),
    ("Go to Settings → Profiles to add one.", False),  # a menu's path
    ("GET /accounts -> 200 (312 ms)", False),  # a request and its answer
])
def test_an_arrow_between_two_values_is_a_change(text: str, marked: bool) -> None:
    assert ("->" in read_edits(text).marks) is marked


def test_a_correction_replaces_what_it_negates() -> None:
    edits = read_edits("sorry, typo in the doc: the API port is 8081, not 8080.")
    assert edits.marks == ("not",) and edits.targets == {"8081"}
    assert read_edits("It was Tom, not me.").marks == ()
    verdict = contrast(read("ledgerd serves its API on port 8080."),
                       read("sorry, typo in the doc: ledgerd's API port is 8081, not 8080.",
                            "wanjiru"), same_source=False)
    assert verdict is not None and "8081" in verdict.matched


@pytest.mark.parametrize(("older", "newer"), [
    # a task list plans work: it states nothing yet
    ("Action items: Ilse — write the runbook; Femi — check PSP replacements.",
     "Action items: Femi — evaluate Kyverno; Ilse — move the recurring invite."),
    # a proposal, and what its colon introduces
    ("Standup is daily at 09:15 in the team huddle.",
     "Proposal from Pilar: move standup to 09:30. To be decided at the retro."),
    # an offer that asks leave to go ahead
    ("Your account is on the Basic plan at €7.99 a month.",
     "That's the Family plan at €15.99 a month; the change is effective today. "
     "Shall I go ahead?"),
    # "new" alone says a thing is recent, not that it replaced one
    ("Thread summary — Finance and Engineering on email costs.",
     "Thread summary — Re: email costs (4 new messages)."),
    # a program's capitals are no names
    ("$ kubectl get deploy search-gateway\nNAME  READY  AGE\nsearch-gateway  3/3  212d",
     "$ helm upgrade search-gateway charts/search-gateway\n"
     "Release \"search-gateway\" has been upgraded. Happy Helming!"),
])
def test_what_logs_and_notes_say_besides_updates_links_nothing(older: str,
                                                               newer: str) -> None:
    assert contrast(read(older), read(newer), same_source=True) is None


def test_new_replaces_as_someone_s() -> None:
    assert "new" in read("My new number is 0176 555 0199.", "kai").change
    assert "new" not in read("We got 4 new messages about it.", "kai").change


def test_one_time_written_two_ways_is_one_value() -> None:
    assert normalise(["06:30"], "time") == normalise(["6:30"], "time")


@pytest.mark.parametrize(("token", "kind"), [
    ("auth.internal.acme.net", "host"),
    ("values-prod.yaml", "name"),  # a file
    ("aws_redshift_cluster.wh", "name"),  # a resource, not a host: no "_" in host names
])
def test_a_host_name_is_told_from_a_file_and_a_resource(token: str, kind: str) -> None:
    assert value_kind([token], [token.capitalize() if kind == "name" else token]) == kind


def test_a_name_in_the_same_role_of_the_speaker_s_life_is_another_value() -> None:
    verdict = contrast(read("I'm a controls engineer at Festo, in Esslingen.", "sanna"),
                       read("Handed in my notice there; today's my first day at Trumpf.",
                            "sanna"), same_source=True)
    assert verdict is not None and verdict.attribute == "name"
    # ... but not without a word that the old one is gone
    assert contrast(read("I'm a controls engineer at Festo.", "sanna"),
                    read("I had lunch at Trumpf with an old friend.", "sanna"),
                    same_source=True) is None


@pytest.mark.parametrize(("older", "newer"), [
    ("Stakeholders agreed to push the 3.0 ship date to March 19.",
     "Version 3.0 will now go out on March 26."),
    ("Epic ATLAS-1 'Atlas v3' | target release: 2026-03-14",
     "Steering group agreed to slip three weeks: Atlas v3 ships 2 April 2026."),
])
def test_a_day_written_any_way_is_a_date(older: str, newer: str) -> None:
    verdict = contrast(read(older), read(newer), same_source=False)
    assert verdict is not None and verdict.attribute == "date"


def test_a_lower_case_code_is_a_name_and_a_ticket_is_not() -> None:
    verdict = contrast(read("The analytics stack lives in eu-west-1 (Ireland)."),
                       read("Cutover done: analytics now runs in eu-central-1."),
                       same_source=True)
    assert verdict is not None and verdict.attribute == "code"
    assert ("code", "chg-5521") not in read("Cutover window opened (change CHG-5521).").values


def test_an_earlier_memory_is_looked_up_by_the_identifiers_it_names() -> None:
    words = read("Steering group agreed to slip: Atlas v3 ships 2 April.").search_words()
    assert "v3" in words
    assert "new_checkout" in read("Ramped new_checkout to half of all traffic.").search_words()


def test_a_count_compounded_with_its_noun_is_a_count() -> None:
    verdict = contrast(read("sure, my two cats will love them", "greta"),
                       read("we're officially a three-cat household now", "greta"),
                       same_source=True)
    assert verdict is not None and verdict.attribute == "count"


@pytest.mark.parametrize(("older", "newer", "speakers"), [
    # a participant's name is who listens, even without the vocative's comma
    ("Yeah, good flooring matters. I'm after Marley flooring for the studio.",
     "Thanks, Gina - appreciate it! Dance keeps pushing the studio forward.",
     frozenset({"jon", "gina"})),
    # a word of change inside a title is part of the title
    ("I loved the book about LGBTQ rights by Anna Keller.",
     "I loved \"Becoming Nicole\" by Amy Ellis Nutt, a book about LGBTQ rights.",
     frozenset()),
    # a person after "pushed" makes it figurative
    ("I marched at the parade with Anna.", "The parade pushed me to march with Lena.",
     frozenset()),
])
def test_what_chats_say_of_people_and_titles_is_no_update(older: str, newer: str,
                                                         speakers: frozenset[str]) -> None:
    assert contrast(read(older, "jon"), read(newer, "jon"), same_source=True,
                    participants=speakers) is None


def test_a_setting_applied_with_a_value_is_where_the_change_leads() -> None:
    edits = read_edits("applied config: --web.listen-address=:9256 ; systemd unit"
                       " node-exporter restarted")
    assert "applied" in edits.marks and "9256" in edits.targets
    # an assignment alone, with no word that it took effect, is a reading of config
    assert read_edits("$ cat prod.env\nUPSTREAM_TIMEOUT_MS=3000").targets == frozenset()
