"""Event time: time expressions in a memory's text, resolved against the memory's own time."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlattice.core.event_time import (
    MAX_MENTIONS,
    EventRange,
    event_range,
    find_event_times,
    may_name_a_time,
    range_of,
)

# Monday 8 May 2023, 13:56 UTC: the time of LoCoMo's first session.
AT = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


@pytest.mark.parametrize(("text", "start", "end", "granularity"), [
    ("I went there yesterday", day(2023, 5, 7), day(2023, 5, 8), "day"),
    ("We had a blast last night!", day(2023, 5, 7), day(2023, 5, 8), "day"),
    ("Painted a lake this morning", day(2023, 5, 8), day(2023, 5, 9), "day"),
    ("I'll call you tomorrow", day(2023, 5, 9), day(2023, 5, 10), "day"),
    ("the day before yesterday it rained", day(2023, 5, 6), day(2023, 5, 7), "day"),
    ("We hiked last Saturday", day(2023, 5, 6), day(2023, 5, 7), "day"),
    ("I ran a charity race on Sunday", day(2023, 5, 7), day(2023, 5, 8), "day"),
    ("a couple of days ago I fell", day(2023, 5, 6), day(2023, 5, 7), "day"),
    ("I moved in May 2023", day(2023, 5, 1), day(2023, 6, 1), "month"),
    ("We met on 7 May", day(2023, 5, 7), day(2023, 5, 8), "day"),
    ("Caroline said on March 3 that", day(2023, 3, 3), day(2023, 3, 4), "day"),
    ("the 7th of May, 2021 was sunny", day(2021, 5, 7), day(2021, 5, 8), "day"),
    ("Sept 2022 was busy", day(2022, 9, 1), day(2022, 10, 1), "month"),
    ("It was 2022.", day(2022, 1, 1), day(2023, 1, 1), "year"),
    ("back in 2019, I was a teacher", day(2019, 1, 1), day(2020, 1, 1), "year"),
    ("I quit two years ago", day(2021, 1, 1), day(2022, 1, 1), "year"),
    ("ten years ago I started", day(2013, 1, 1), day(2014, 1, 1), "year"),
    ("I start a new job next month", day(2023, 6, 1), day(2023, 7, 1), "month"),
    ("I read a lot last month", day(2023, 4, 1), day(2023, 5, 1), "month"),
    # ISO weeks start on Monday: AT is a Monday, so last week is 1-7 May.
    ("Last week I went camping", day(2023, 5, 1), day(2023, 5, 8), "week"),
    ("the past week was hard", day(2023, 5, 1), day(2023, 5, 8), "week"),
    ("We're going camping this weekend", day(2023, 5, 13), day(2023, 5, 15), "day"),
    ("Last weekend we went to the beach", day(2023, 5, 6), day(2023, 5, 8), "day"),
    ("see 2023-04-01 in the log", day(2023, 4, 1), day(2023, 4, 2), "day"),
    # A date moved: "N units" lands in the unit holding that day, "the unit" is
    # the unit-long stretch next to the date.
    ("got a puppy two weeks before August 11, 2023", day(2023, 7, 24), day(2023, 7, 31),
     "week"),
    ("the week before August 3, 2023", day(2023, 7, 27), day(2023, 8, 3), "week"),
    ("the day after 7 May 2023", day(2023, 5, 8), day(2023, 5, 9), "day"),
    ("three days before 2023-05-10", day(2023, 5, 7), day(2023, 5, 8), "day"),
    ("a month after May 2022", day(2022, 6, 1), day(2022, 7, 1), "month"),
])
def test_one_expression_resolves_against_the_memory_time(
        text: str, start: datetime, end: datetime, granularity: str) -> None:
    assert event_range(text, AT) == EventRange(start=start, end=end,
                                               granularity=granularity)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", [
    "Hey Mel! Good to see you! How have you been?",
    "May I ask what you painted?",      # a verb, not the month
    "I have 2000 followers now",        # a number, not a year
    "I saw 3 dogs and 12 cats",
    "Mar is my best friend",            # a name, not March
    "we march on, may it last",         # lower-case month words are words
    "I finished the course in 5 days",  # a duration, not a time
])
def test_a_text_without_a_time_expression_has_no_event_time(text: str) -> None:
    assert find_event_times(text, AT) == []
    assert event_range(text, AT) is None


def test_the_cheap_pass_answers_for_texts_without_candidates() -> None:
    assert may_name_a_time("I went there yesterday")
    assert not may_name_a_time("I like green tea")
    assert not may_name_a_time("May I ask what you painted?")


def test_a_date_without_a_year_is_the_latest_one_not_after_the_memory() -> None:
    # Said on 1 May 2023, "7 May" is last year's; said on 8 May, this year's.
    assert event_range("on 7 May", day(2023, 5, 1)).start == day(2022, 5, 7)  # type: ignore[union-attr]
    assert event_range("on 7 May", AT).start == day(2023, 5, 7)  # type: ignore[union-attr]


def test_the_range_depends_on_the_memory_time_not_the_clock() -> None:
    later = AT + timedelta(days=400)
    assert event_range("yesterday", later).start == day(2024, 6, 10)  # type: ignore[union-attr]


def test_the_memory_time_is_read_in_utc() -> None:
    # 01:00 on 9 May at UTC+3 is 22:00 on 8 May UTC: yesterday is 7 May.
    local = datetime(2023, 5, 9, 1, 0, tzinfo=timezone(timedelta(hours=3)))
    assert event_range("yesterday", local).start == day(2023, 5, 7)  # type: ignore[union-attr]


def test_several_expressions_give_the_range_spanning_them() -> None:
    text = "I moved here in 2019 and started the job last month"
    mentions = find_event_times(text, AT)
    assert [m.text for m in mentions] == ["in 2019", "last month"]
    assert [text[slice(*m.span)] for m in mentions] == ["in 2019", "last month"]
    assert event_range(text, AT) == EventRange(start=day(2019, 1, 1), end=day(2023, 5, 1),
                                               granularity="year")


def test_a_long_list_of_dates_is_cut() -> None:
    text = " ".join(f"2023-01-{d:02d}" for d in range(1, 32))
    many = f"{text} {text}"
    assert len(find_event_times(many, AT)) == MAX_MENTIONS


@pytest.mark.parametrize(("granularity", "start", "end"), [
    ("day", day(2024, 2, 29), day(2024, 3, 1)),
    ("week", day(2024, 2, 26), day(2024, 3, 4)),
    ("month", day(2024, 2, 1), day(2024, 3, 1)),
    ("year", day(2024, 1, 1), day(2025, 1, 1)),
])
def test_range_of_each_granularity(granularity: str, start: datetime, end: datetime) -> None:
    assert range_of(date(2024, 2, 29), granularity) == EventRange(  # type: ignore[arg-type]
        start=start, end=end, granularity=granularity)  # type: ignore[arg-type]


def test_december_rolls_into_the_next_year() -> None:
    assert range_of(date(2023, 12, 31), "month").end == day(2024, 1, 1)


@settings(max_examples=60, deadline=None)
@given(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
       st.sampled_from(["yesterday", "next year", "last week", "in 2022", "two years ago",
                        "tomorrow", "next month", "on 7 May"]))
def test_any_memory_time_gives_a_well_formed_range_or_none(at: datetime, text: str) -> None:
    found = event_range(text, at.replace(tzinfo=UTC))
    if found is not None:
        assert found.start < found.end
        assert found.start.tzinfo is UTC and found.end.tzinfo is UTC


def test_overlaps_is_half_open() -> None:
    may = EventRange(start=day(2023, 5, 1), end=day(2023, 6, 1), granularity="month")
    assert may.overlaps(day(2023, 5, 31), None)
    assert not may.overlaps(day(2023, 6, 1), None)
    assert not may.overlaps(None, day(2023, 5, 1))
    assert may.overlaps(None, None)


WORDS = ["in", "on", "the", "last", "next", "this", "past", "a", "two", "3", "12th", "of",
         "May", "march", "Sept", "Saturday", "weekend", "week", "month", "year", "ago",
         "before", "after", "2022", "2023-05-07", "yesterday", "night", "morning", "since",
         "couple", ",", ".", "I", "went"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=12))
def test_the_cheap_gate_never_hides_a_candidate(words: list[str]) -> None:
    from memlattice.core.event_time import _CANDIDATES, _has_trigger

    text = " ".join(words)
    if _CANDIDATES.search(text):
        assert _has_trigger(text), text
