"""Answer types: what a question asks for, and whether a memory holds it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memlattice.core.search_config import SearchConfig
from memlattice.search.answer_types import (
    NAME,
    NUMBER,
    PLACE,
    TIME,
    answers_nothing_asked,
    asked_kinds,
    held_kinds,
)
from memlattice.search.ranking import Candidate, base_scores


@pytest.mark.parametrize(("query", "kinds"), [
    ("Where does Tom live?", {PLACE}),
    ("Who is on call for storage?", {NAME}),
    ("Whose dog is Pepper?", {NAME}),
    ("When is the platform sync?", set()),  # a turn's own date often answers "when"
    ("What time is the standup?", {TIME}),
    ("How many cats does Greta have?", {NUMBER}),
    ("How long has Ines lived in Bergen?", {NUMBER, TIME}),
    ("What does Melanie paint?", set()),  # "what" alone types nothing
    # the noun asked about names a kind of value
    ("What is Chloe's phone number?", {NUMBER}),
    ("Which port does the metrics exporter listen on?", {NUMBER}),
    ("What's the rate limit on /search?", {NUMBER}),
    ("What is the geocoding API endpoint?", {PLACE}),
    ("Which email did Ana use previously?", {PLACE}),
    ("What book is Jon reading?", set()),
    ("Why did the deploy fail?", set()),
    (None, set()),
])
def test_a_question_word_asks_for_a_kind_of_answer(query: str | None, kinds: set[str]) -> None:
    assert asked_kinds(query) == kinds


@pytest.mark.parametrize(("text", "held", "lacks"), [
    ("Tom: We're renting a terrace in Leeds, Headingley.", {NAME, PLACE}, set()),
    ("Tom: Missed it, we were viewing houses all day.", {TIME}, {NAME, PLACE}),
    ("ops-agent: The session cache runs at 10.0.3.12:6379.", {PLACE, NUMBER}, set()),
    ("ops-agent: Session cache hit ratio 97%.", {NUMBER}, {PLACE, NAME}),
    ("Greta: we have two cats", {NUMBER}, {NAME}),
    ("Caroline: I went to the support group yesterday.", {TIME}, {NUMBER}),
    # the speaker's label and a sentence's first word are no names
    ("Melanie: Wow, that is so cool!", set(), {NAME, PLACE}),
])
def test_a_memory_holds_the_kinds_its_shape_shows(text: str, held: set[str],
                                                   lacks: set[str]) -> None:
    kinds = held_kinds(text)
    assert held <= kinds and not lacks & kinds


def test_only_a_memory_lacking_every_asked_kind_answers_nothing() -> None:
    assert answers_nothing_asked(frozenset({PLACE}), frozenset({TIME}))
    assert not answers_nothing_asked(frozenset({NUMBER, TIME}), frozenset({TIME}))
    assert not answers_nothing_asked(frozenset(), frozenset())  # nothing asked


def test_a_memory_that_holds_the_asked_kind_ranks_above_one_with_the_same_evidence() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    same = {"similarity": 0.6, "fts": 2.0, "created_at": now}
    candidates = [
        Candidate(id="filler", held=held_kinds("Tom: Missed it, viewing houses all day."),
                  **same),
        Candidate(id="answer", held=held_kinds("Tom: We're renting a terrace in Leeds."),
                  **same),
        Candidate(id="other", similarity=0.1, fts=0.2, created_at=now)]

    def order(discount: float) -> list[float]:
        return [s.score for s in base_scores(candidates, SearchConfig(
            answer_discount=discount), now=now, query="Where does Tom live?")][:2]

    assert [s.id for s in base_scores(candidates, SearchConfig(answer_discount=0.3),
                                      now=now, query="Where does Tom live?")][:2] == [
        "answer", "filler"]
    off = order(0.0)
    assert off[0] == off[1]
