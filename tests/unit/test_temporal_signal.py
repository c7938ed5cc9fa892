"""The time signal of recall (memlattice.search.temporal_signal)."""

from __future__ import annotations

from datetime import UTC, datetime

from memlattice.core.temporal_intent import temporal_intent
from memlattice.search.temporal_signal import Timing, in_window, temporal_signal

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def at(year: int, month: int = 6) -> datetime:
    return datetime(year, month, 1, tzinfo=UTC)


def test_a_memory_is_in_the_window_by_its_event_time_else_by_when_it_was_recorded() -> None:
    after, before = at(2023, 1), at(2024, 1)
    assert in_window(Timing(recorded=at(2023)), after, before)
    assert not in_window(Timing(recorded=at(2024)), after, before)
    # Words that name a time outweigh when they were written down.
    assert in_window(Timing(event_start=at(2023, 3), event_end=at(2023, 4),
                            recorded=at(2025)), after, before)
    assert not in_window(Timing(event_start=at(2021), event_end=at(2021, 7),
                                recorded=at(2023)), after, before)
    # An event range that straddles the window's edge overlaps it.
    assert in_window(Timing(event_start=at(2022, 12), event_end=at(2023, 2)), after, before)
    assert in_window(Timing(recorded=at(2020)), None, before)
    assert in_window(Timing(), after, before) is None


def test_the_signal_follows_the_relation_the_query_names() -> None:
    timings = {"old": Timing(recorded=at(2021)), "then": Timing(recorded=at(2023)),
               "new": Timing(recorded=at(2025)), "unknown": Timing()}
    during = temporal_signal(temporal_intent("what did we paint in 2023?", NOW), timings)
    assert during == {"old": 0.0, "then": 1.0, "new": 0.0, "unknown": None}
    before = temporal_signal(temporal_intent("what did we paint before 2023?", NOW), timings)
    assert before == {"old": 1.0, "then": 0.0, "new": 0.0, "unknown": None}
    after = temporal_signal(temporal_intent("what did we paint after 2023?", NOW), timings)
    assert after == {"old": 0.0, "then": 0.0, "new": 1.0, "unknown": None}


def test_no_time_named_no_signal() -> None:
    timings = {"a": Timing(recorded=at(2023))}
    assert temporal_signal(temporal_intent("when did we paint the fence?", NOW), timings) is None
    assert temporal_signal(temporal_intent("what did we paint?", NOW), timings) is None
    assert temporal_signal(None, timings) is None
