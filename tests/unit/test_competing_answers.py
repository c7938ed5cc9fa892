"""Two statements that answer a typed question differently: the later first
(memlattice.search.currency.competing_answers, answer_types.held_values)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memlattice.search.answer_types import NAME, NUMBER, PLACE, TIME, held_kinds, held_values
from memlattice.search.currency import competing_answers, later_of_a_source_first, query_names
from memlattice.search.ranking import Scored

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_memory_holds_values_of_each_kind() -> None:
    held = held_values("ops: the exporter moved to metrics-2.internal:9256 on October 24")
    assert "metrics-2.internal:9256" in held[PLACE]  # the whole address
    assert {"october", "24"} <= held[TIME]  # a date's day is part of its time
    assert "24" in held[NUMBER]
    assert held_values("Ana: ugh, range anxiety is real though") == {
        "name": frozenset(), "place": frozenset(), "time": frozenset(), "number": frozenset()}


@given(st.text(max_size=80))
def test_a_memory_holds_a_value_of_every_kind_it_holds(text: str) -> None:
    values = held_values(text)
    assert all(values[kind] for kind in held_kinds(text) & {TIME, NUMBER})


def test_a_name_opening_a_sentence_is_a_value_but_a_month_is_not() -> None:
    held = held_values("Priya: Rotterdam since January, windier than I'd like")
    assert held[PLACE] == {"rotterdam"}
    assert held_values("ops: Checking the logs. Updated the file.")[NAME] == frozenset()
    # The kinds that rank a memory are read as before: a capital inside a sentence.
    assert PLACE not in held_kinds("Priya: Rotterdam it is, windier than expected")


def test_a_question_names_the_capitalised_words_after_its_first() -> None:
    assert query_names("Which city is Priya living in?") == {"priya"}
    assert query_names("Where does Ines live?") == {"ines"}
    assert query_names("Who owns payments-api?") == frozenset()


TEXTS = {
    "old": "ci: Dockerfile: FROM python:3.11-slim | image built in 3m12s",
    "new": "ci: image rebuilt on python:3.13-slim, 430/430 tests green",
    "filler": "ci: cache warmed, nothing else to report",
    "other": "ci: the docs site image uses Node, unchanged",
}


def test_two_statements_compete_when_they_give_different_values_of_the_asked_kind() -> None:
    competes = competing_answers("Which Python version does the image run on?", TEXTS)
    assert competes("old", "new")
    # A later remark that gives no value of the kind asked answers nothing.
    assert not competes("old", "filler")
    # One that does not name what the question names is about something else.
    assert not competes("old", "other")


def test_a_question_that_types_nothing_or_names_someone_absent_moves_nothing() -> None:
    texts = {"a": "Grace: my favourite food is Thai", "b": "Grace: these days it is sushi"}
    assert not competing_answers("What is Grace's favourite food?", texts)("a", "b")
    homes = {"a": "Ines: I live in Bergen", "b": "Ines: we settled in Tromsø last weekend",
             "c": "Leo: and Romy's birthday is Feb 3",
             "d": "Ines: My sister lives in Oslo, she visits often."}
    competes = competing_answers("Where does Ines live?", homes)
    assert competes("a", "b")
    assert not competes("a", "c")
    # A later statement of the same source about someone else answers for them.
    assert not competes("b", "d")


def test_a_value_said_to_go_on_or_added_replaces_nothing() -> None:
    texts = {"a": "Ruairi: I joined a volleyball league, games Wednesday nights",
             "b": "Ruairi: still doing parkrun Saturdays too btw",
             "c": "Ruairi: the league moved our games to Thursday nights"}
    competes = competing_answers("When are Ruairi's volleyball games?", texts)
    # Both hold a time, but "still" and "too" keep the earlier one on.
    assert not competes("a", "b")
    assert competes("a", "c")


def test_the_name_a_question_asks_about_is_no_answer() -> None:
    texts = {"a": "Leo: my sister Romy moved to Linz", "b": "Leo: Romy's birthday is Feb 3"}
    # "Romy" is who the question is about; "b" holds no other place.
    assert not competing_answers("Which city is Romy's flat in?", texts)("a", "b")


def test_only_competing_statements_of_a_source_change_places() -> None:
    said = {"old": ("ci", T0), "new": ("ci", T0 + timedelta(days=90)),
            "filler": ("ci", T0 + timedelta(days=91))}
    ranked = [Scored("old", 1.0), Scored("filler", 0.95), Scored("new", 0.9)]
    competes = competing_answers("Which Python version does the image run on?", TEXTS)
    order = later_of_a_source_first(ranked, said, within=0.8, competes=competes)
    assert [s.id for s in order] == ["new", "old", "filler"]
    assert order[0].score == 1.0  # it takes the place and the score of the one it passes
    # Without a competition every later statement of the source would pass.
    assert later_of_a_source_first(ranked, said, within=0.8)[0].id != "old"
