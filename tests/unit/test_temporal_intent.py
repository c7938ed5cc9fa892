"""Temporal intent: whether a query asks about time, and the time it names."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memlattice.core.event_time import EventRange
from memlattice.core.temporal_intent import TemporalIntent, temporal_intent

# Thursday 15 June 2023.
NOW = datetime(2023, 6, 15, 10, 0, tzinfo=UTC)


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


@pytest.mark.parametrize("query", [
    "When did Caroline go to the LGBTQ support group?",
    "when is the party",
    "So when was that?",
    "What year did Melanie start painting?",
    "In which month did they move?",
    "How long ago was her birthday?",
    "How long has Melanie been married?",
    "Since when has he played guitar?",
    "How many years did she teach?",
])
def test_questions_whose_answer_is_a_time(query: str) -> None:
    intent = temporal_intent(query, NOW)
    assert intent is not None and intent.asks_time
    assert intent.named is None and intent.window() == (None, None)


@pytest.mark.parametrize("query", [
    "What does Caroline like?",
    "Would Caroline pursue writing as a career?",
    "What did she say when she moved?",  # a conjunction, not a question about time
    "May I see the painting?",
    "How many dogs does she have?",
])
def test_queries_that_say_nothing_of_time(query: str) -> None:
    assert temporal_intent(query, NOW) is None


@pytest.mark.parametrize(("query", "relation", "named", "window"), [
    ("What did Melanie paint in 2023?", "during",
     (day(2023, 1, 1), day(2024, 1, 1)), (day(2023, 1, 1), day(2024, 1, 1))),
    ("what did I do yesterday", "during",
     (day(2023, 6, 14), day(2023, 6, 15)), (day(2023, 6, 14), day(2023, 6, 15))),
    ("Where did we go last week?", "during",
     (day(2023, 6, 5), day(2023, 6, 12)), (day(2023, 6, 5), day(2023, 6, 12))),
    ("What happened before last week?", "before",
     (day(2023, 6, 5), day(2023, 6, 12)), (None, day(2023, 6, 5))),
    ("events after 2021", "after",
     (day(2021, 1, 1), day(2022, 1, 1)), (day(2022, 1, 1), None)),
    ("Where did they go since May 2023?", "since",
     (day(2023, 5, 1), day(2023, 6, 1)), (day(2023, 5, 1), None)),
    ("what did she read until March 2023", "until",
     (day(2023, 3, 1), day(2023, 4, 1)), (None, day(2023, 4, 1))),
    ("What did John do the week before August 3, 2023?", "during",
     (day(2023, 7, 27), day(2023, 8, 3)), (day(2023, 7, 27), day(2023, 8, 3))),
    ("anything prior to 7 May?", "before",
     (day(2023, 5, 7), day(2023, 5, 8)), (None, day(2023, 5, 7))),
])
def test_a_named_time_resolves_against_now(
        query: str, relation: str,
        named: tuple[datetime, datetime],
        window: tuple[datetime | None, datetime | None]) -> None:
    intent = temporal_intent(query, NOW)
    assert intent is not None
    assert intent.relation == relation
    assert intent.named is not None and (intent.named.start, intent.named.end) == named
    assert intent.window() == window


def test_asking_and_naming_together() -> None:
    intent = temporal_intent("When in 2022 did she adopt the dog?", NOW)
    assert intent == TemporalIntent(
        asks_time=True, relation="during",
        named=EventRange(start=day(2022, 1, 1), end=day(2023, 1, 1), granularity="year"))


def test_ordering_against_an_event_names_no_time() -> None:
    intent = temporal_intent("What did she do after the concert?", NOW)
    assert intent == TemporalIntent(asks_time=False, relation="after", named=None)
    assert intent.window() == (None, None)


def test_now_decides_relative_times() -> None:
    later = temporal_intent("what happened last month", day(2024, 1, 10))
    assert later is not None and later.named is not None
    assert (later.named.start, later.named.end) == (day(2023, 12, 1), day(2024, 1, 1))
