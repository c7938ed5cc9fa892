"""The time signal of recall: whether a candidate happened when the query says.

"What did Melanie paint in May 2023?" names a time (memlattice.core.temporal_intent
reads it, and how the events sought stand to it: during, before, after, since,
until). A memory is in that window when its event time (what its own words say
it is about: memlattice.core.event_time) overlaps it, or, when its words name no
time, when it was recorded in it: a turn written in May 2023 without a date is
most likely about May 2023.

The signal is 1 or 0 per candidate. Fusion standardises it over the pool
(memlattice.search.fusion), so it weighs in proportion to how much it
separates this query's candidates: when every candidate is in the window (all
memories are from 2023) or none is, it says nothing. A query that names no
time gives no signal at all.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from memlattice.core.temporal_intent import TemporalIntent


@dataclass(frozen=True)
class Timing:
    """When a memory happened as far as its words say (event start and end), and
    when it was recorded."""

    event_start: datetime | None = None
    event_end: datetime | None = None
    recorded: datetime | None = None


def in_window(timing: Timing, after: datetime | None, before: datetime | None) -> bool | None:
    """Whether the memory's event time, else its recording time, lies in [after,
    before) (None: open); None when it has neither."""
    if timing.event_start is not None:
        end = timing.event_end or timing.event_start
        return (after is None or end > after) and (before is None or timing.event_start < before)
    if timing.recorded is not None:
        return (after is None or timing.recorded >= after) and (
            before is None or timing.recorded < before)
    return None


def temporal_signal(intent: TemporalIntent | None,
                    timings: Mapping[str, Timing]) -> dict[str, float | None] | None:
    """Per candidate id, 1.0 when it lies in the window the query names and 0.0 when
    not (None when its time is unknown); None when the query names no time."""
    if intent is None or intent.named is None:
        return None
    after, before = intent.window()
    signal: dict[str, float | None] = {}
    for id, timing in timings.items():
        inside = in_window(timing, after, before)
        signal[id] = None if inside is None else float(inside)
    return signal
