"""When the thing a memory tells of happened: its event time, apart from system time.

A memory's `createdAt` says when it was recorded; "I went there yesterday",
recorded on 8 May 2023, tells of 7 May. Recall that answers "when did …" or "what
happened in 2023" needs the second. This module finds the time expressions of a
text and resolves them against the memory's own time (the `at` a conversation
turn carries, else when it was written) into a half-open UTC range
[start, end) at the granularity the words give: a day, an ISO week (Monday
first), a calendar month or a calendar year.

Pure (no I/O) and cheap: a regular-expression pass picks the few candidate
spans (most texts have none and cost a few microseconds), and only those spans
go to dateparser (a well-kept parser of relative and absolute dates), cached per
(span, day). A text with no time expression has no event time.

Conventions, for the cases words leave open:
- a date without a year ("7 May", "Saturday") is the latest one not after the
  memory's day (dateparser's `PREFER_DATES_FROM=past`): memories mostly tell of
  what has happened; "next …" and "tomorrow" point forward;
- several expressions in one text give one range spanning them all (so a
  filter on event time never misses a memory that names a matching time);
- a bare year counts only where it reads as a time ("in 2022", "2022.", "since
  2019"), not in "2000 followers".
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import Any, Literal

from dateutil.relativedelta import relativedelta  # type: ignore[import-untyped]

Granularity = Literal["day", "week", "month", "year"]


@dataclass(frozen=True)
class EventRange:
    """A half-open UTC range [start, end) and the granularity its words gave."""

    start: datetime
    end: datetime
    granularity: Granularity

    def overlaps(self, after: datetime | None, before: datetime | None) -> bool:
        """Whether some of the range lies in [after, before) (None: unbounded)."""
        return (after is None or self.end > after) and (before is None or self.start < before)


@dataclass(frozen=True)
class TimeMention:
    """One time expression as found in a text: its words, where, and what it names."""

    text: str
    span: tuple[int, int]
    range: EventRange


_MONTHS = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|March|Mar|April|Apr|May|June|Jun|July|Jul"
           r"|Aug(?:ust)?|Sept(?:ember)?|Sep|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
_WEEKDAYS = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_COUNT = (r"(?:\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
          r"|a\s+couple\s+of)")
_ORDINAL = r"\d{1,2}(?:st|nd|rd|th)?"
_YEAR = r"(?:19|20)\d{2}"
# Words before a bare month or year that make it read as a time; they are dropped
# before parsing (dateparser reads "in 2022" as a duration).
_CUES = (r"(?:back\s+in|in|since|until|till|by|of|from|during|before|after|around|circa"
         r"|early|late|mid|summer|winter|spring|fall|autumn)")

# A day or month with a year, a day or both.
_DATE = (rf"(?:the\s+)?{_ORDINAL}\s+(?:of\s+)?{_MONTHS}\b(?:,?\s+{_YEAR}\b)?"
         rf"|{_MONTHS}\.?\s+{_ORDINAL}\b(?:,?\s+{_YEAR}\b)?"
         rf"|{_MONTHS}\.?,?\s+{_YEAR}\b")

# Longest forms first: the alternation takes the first that matches at a position.
# Month names and weekdays must be capitalised ("may", "march" are verbs too).
_CANDIDATES = re.compile(
    rf"(?i:\b(?:{_COUNT}|the)\s+(?:day|week|month|year)s?\s+(?:before|after)\s+)"
    rf"(?:{_DATE}|\d{{4}}-\d{{2}}-\d{{2}}\b)"
    r"|(?i:\bthe\s+day\s+before\s+yesterday\b)"
    r"|(?i:\b(?:yesterday|today|tonight|tomorrow|last\s+night"
    r"|this\s+(?:morning|afternoon|evening))\b)"
    rf"|(?i:\b{_COUNT}\s+(?:day|week|month|year)s?\s+ago\b)"
    r"|(?i:\b(?:last|this|next|past|previous|coming)\s+(?:week(?:end)?|month|year)\b)"
    rf"|(?i:\b(?:last|this|next|past|previous|coming)\s+){_WEEKDAYS}\b"
    r"|\b\d{4}-\d{2}-\d{2}\b"
    rf"|(?i:\b(?:{_CUES}|on|last|this)\s+)(?:{_DATE}|{_MONTHS}\b)"
    rf"|\b(?:{_DATE})"
    rf"|\b(?!May\b){_MONTHS}\b"
    rf"|(?i:\bon\s+){_WEEKDAYS}\b"
    rf"|\b{_WEEKDAYS}\b"
    rf"|(?i:\b(?:{_CUES}|year)\s+){_YEAR}\b"
    rf"|\b{_YEAR}(?=\s*(?:[.,;:!?)]|$))"
)
# Every candidate holds a digit, one of these words (any case) or one of these name
# starts (capitalised): substring tests, far cheaper than the pattern above, skip the
# many texts that hold none.
_DIGIT = re.compile(r"\d")
_TIME_WORDS = ("yesterday", "today", "tonight", "tomorrow", "night", "morning", "afternoon",
               "evening", "ago", "week", "month", "year")
_NAME_STARTS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                "Dec", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
# Short month forms that are common words or names unless a day or year goes with them.
_AMBIGUOUS_ALONE = {"mar", "jan", "jun", "jul", "sep", "oct", "nov", "dec", "aug", "feb", "apr"}

# Phrasings dateparser does not know, in one it does (same meaning).
_REWRITES = (
    (re.compile(rf"^(?i:(?:{_CUES}|year|last|this|on)\s+)(?={_MONTHS}\b|\d)"), ""),
    (re.compile(r"^(?:past|previous)\b", re.IGNORECASE), "last"),
    (re.compile(r"^coming\b", re.IGNORECASE), "next"),
    (re.compile(r"^last\s+night$", re.IGNORECASE), "yesterday"),
    (re.compile(r"^this\s+(?:morning|afternoon|evening)$", re.IGNORECASE), "today"),
    (re.compile(r"^a\s+couple\s+of\b", re.IGNORECASE), "2"),
    (re.compile(r"^on\s+", re.IGNORECASE), ""),
)
_WEEKEND = re.compile(r"^(last|this|next)\s+weekend$", re.IGNORECASE)
# "two weeks before 11 August, 2023", "the week before 3 August": a date moved.
_OFFSET = re.compile(rf"^({_COUNT}|the)\s+(day|week|month|year)s?\s+(before|after)\s+(.+)$",
                     re.IGNORECASE)
_NUMBERS = {"a": 1, "an": 1, "the": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
            "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11,
            "twelve": 12}


# A text naming more times than this is a table or a log, not a memory of an event:
# the first ones stand for it (and bound what one write can cost).
MAX_MENTIONS = 32


def may_name_a_time(text: str) -> bool:
    """Whether `text` has a candidate time expression (the cheap pass alone): without
    one it has no event time, and resolving it costs nothing more."""
    return _has_trigger(text) and _CANDIDATES.search(text) is not None


def _has_trigger(text: str) -> bool:
    lowered = text.lower()
    return (any(word in lowered for word in _TIME_WORDS)
            or any(name in text for name in _NAME_STARTS) or _DIGIT.search(text) is not None)


def find_event_times(text: str, at: datetime) -> list[TimeMention]:
    """Every time expression of `text`, resolved against `at` (the memory's time)."""
    day = _utc(at).date()
    found: list[TimeMention] = []
    if not _has_trigger(text):
        return found
    for match in _CANDIDATES.finditer(text):
        words = match.group(0)
        if words.lower() in _AMBIGUOUS_ALONE:
            continue
        try:
            resolved = _resolve(_normalised(words), day)
        except (OverflowError, ValueError):  # a range past year 1 or 9999: no event time
            resolved = None
        if resolved is not None:
            found.append(TimeMention(text=words, span=match.span(), range=resolved))
            if len(found) == MAX_MENTIONS:
                break
    return found


def event_range(text: str, at: datetime) -> EventRange | None:
    """The event time of a memory with this text written at `at`: the range spanning
    every time expression it has (the coarsest granularity among them), or None."""
    mentions = find_event_times(text, at)
    if not mentions:
        return None
    ranges = [m.range for m in mentions]
    order: tuple[Granularity, ...] = ("day", "week", "month", "year")
    coarsest = max((r.granularity for r in ranges), key=order.index)
    return EventRange(start=min(r.start for r in ranges), end=max(r.end for r in ranges),
                      granularity=coarsest)


async def event_ranges(texts: Sequence[str], times: Sequence[datetime]
                       ) -> list[EventRange | None]:
    """Each text's event time against its memory's time, for the write paths (never
    the search path). dateparser costs a few milliseconds per text that names a time
    (and about a second to load its data on first use), so a batch that has any is
    resolved off the event loop."""
    if not any(may_name_a_time(text) for text in texts):
        return [None] * len(texts)
    return await asyncio.to_thread(
        lambda: [event_range(text, at) for text, at in zip(texts, times, strict=True)])


def _normalised(words: str) -> str:
    text = " ".join(words.split())
    for pattern, replacement in _REWRITES:
        text = pattern.sub(replacement, text)
    return text


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


@lru_cache(maxsize=4096)
def _resolve(words: str, day: date) -> EventRange | None:
    """The range `words` name, said on `day`; None when dateparser cannot read them."""
    offset = _OFFSET.match(words)
    if offset is not None:
        count, unit, way, anchor = offset.groups()
        return _moved(count, unit, way, anchor, day)
    weekend = _WEEKEND.match(words)
    if weekend is not None:
        shift = {"last": -7, "this": 0, "next": 7}[weekend.group(1).lower()]
        saturday = day - timedelta(days=day.weekday()) + timedelta(days=5 + shift)
        return _range(saturday, saturday + timedelta(days=2), "day")
    parsed = _parser(day).get_date_data(words)
    if parsed.date_obj is None:
        return None
    return range_of(parsed.date_obj.date(), _granularity(parsed.period))


def _moved(count: str, unit: str, way: str, anchor_words: str, day: date
           ) -> EventRange | None:
    """`count` `unit`s before or after the date `anchor_words` names: "the week
    before X" is the week that ends where X starts, "two weeks before X" the week
    holding the day two weeks before X."""
    anchor = _resolve(_normalised(anchor_words), day)
    if anchor is None:
        return None
    unit = unit.lower()
    number = _NUMBERS.get(count.lower()) or int(count)
    step = relativedelta(**{f"{unit}s": number})
    sign = -1 if way.lower() == "before" else 1
    granularity: Granularity = unit  # type: ignore[assignment]
    if count.lower() == "the":
        if sign < 0:
            return EventRange(start=anchor.start - step, end=anchor.start,
                              granularity=granularity)
        return EventRange(start=anchor.end, end=anchor.end + step, granularity=granularity)
    return range_of((anchor.start + sign * step).date(), granularity)


def _granularity(period: str | None) -> Granularity:
    # "time" and "part_of_day" ("tonight") are finer than a day: the day holds them.
    return period if period in ("week", "month", "year") else "day"  # type: ignore[return-value]


def range_of(day: date, granularity: Granularity) -> EventRange:
    """The day, ISO week, month or year holding `day`, as a UTC range."""
    if granularity == "week":
        monday = day - timedelta(days=day.weekday())
        return _range(monday, monday + timedelta(days=7), granularity)
    if granularity == "month":
        first = day.replace(day=1)
        following = (first.replace(year=first.year + 1, month=1) if first.month == 12
                     else first.replace(month=first.month + 1))
        return _range(first, following, granularity)
    if granularity == "year":
        return _range(date(day.year, 1, 1), date(day.year + 1, 1, 1), granularity)
    return _range(day, day + timedelta(days=1), "day")


def _range(start: date, end: date, granularity: Granularity) -> EventRange:
    return EventRange(start=datetime(start.year, start.month, start.day, tzinfo=UTC),
                      end=datetime(end.year, end.month, end.day, tzinfo=UTC),
                      granularity=granularity)


def _parser(day: date) -> Any:
    """A dateparser reader relative to noon of `day` (imported late: loading its
    language data costs about a second, which only texts with a candidate pay)."""
    from dateparser.date import DateDataParser  # type: ignore[import-untyped]

    return DateDataParser(languages=["en"], settings={
        "RELATIVE_BASE": datetime(day.year, day.month, day.day, 12),
        "PREFER_DATES_FROM": "past",
        "RETURN_TIME_AS_PERIOD": True,
    })
