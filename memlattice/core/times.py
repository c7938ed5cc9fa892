"""The instants Memlattice accepts, and their one conversion to UTC.

Supported: every instant from `0001-01-01T00:00:00Z` to
`9999-12-31T23:59:59.999999Z`, written with any UTC offset (naive times are
taken as UTC). The bound applies to the instant, after conversion to UTC:
`0001-01-01T00:00:00+14:00` is ten hours before year 1 and is refused, as is
`9999-12-31T23:59:59-14:00`.

Why: Python's `datetime` holds years 1 to 9999 only, so converting such a time
to UTC (as every stored and compared time is) overflowed, and so did the Neo4j
driver when it packed one ("Ticks out of range"); both surfaced as INTERNAL.
Checking once, at the edge, keeps every later conversion (to UTC, to epoch
parts, to a Bolt DateTime, to a cursor) inside the range.
"""

from __future__ import annotations

from datetime import UTC, datetime

import dateutil.parser  # type: ignore[import-untyped]

MIN_INSTANT = datetime(1, 1, 1, tzinfo=UTC)
MAX_INSTANT = datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
RANGE_TEXT = "0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z"


class OutOfRange(ValueError):
    """The time is not a supported instant (see the module docstring)."""

    def __init__(self, value: object) -> None:
        super().__init__(f"{value} is outside the supported range of instants, {RANGE_TEXT}"
                         " (after conversion to UTC)")


def to_utc(value: datetime) -> datetime:
    """`value` as an aware UTC datetime; OutOfRange when UTC cannot hold it."""
    if value.tzinfo is None or value.utcoffset() is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise OutOfRange(value.isoformat()) from None


def parse_instant(text: str) -> datetime:
    """An ISO 8601 date-time (the syntax GraphQL's DateTime always accepted), in UTC.

    Raises ValueError (OutOfRange included) for text that is not one, or that
    names an instant outside the supported range.
    """
    try:
        parsed = dateutil.parser.isoparse(text)
    except OverflowError:
        # `9999-12-31T24:00:00` rolls over into year 10000.
        raise OutOfRange(text) from None
    return to_utc(parsed)
