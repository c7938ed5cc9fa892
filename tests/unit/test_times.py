"""The supported instants: every one Python's UTC datetime holds, and no other."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlattice.core.model import MemoryInput, as_utc
from memlattice.core.times import MAX_INSTANT, MIN_INSTANT, OutOfRange, parse_instant, to_utc

OFFSETS = st.integers(-(24 * 60 - 1), 24 * 60 - 1).map(
    lambda m: timezone(timedelta(minutes=m)))


@given(st.datetimes(), OFFSETS)
def test_every_written_time_converts_or_is_out_of_range(local: datetime,
                                                        offset: timezone) -> None:
    value = local.replace(tzinfo=offset)
    try:
        converted = to_utc(value)
    except OutOfRange:
        assert not (MIN_INSTANT.replace(tzinfo=None) + offset.utcoffset(None)
                    <= local <= MAX_INSTANT.replace(tzinfo=None) + offset.utcoffset(None))
        return
    assert converted == value and converted.tzinfo is UTC


@pytest.mark.parametrize("text", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00",
                                  "9999-12-31T24:00:00"])
def test_the_probe_s_edges_are_refused(text: str) -> None:
    with pytest.raises(OutOfRange, match="supported range"):
        parse_instant(text)


def test_the_ends_themselves_parse() -> None:
    assert parse_instant("0001-01-01T00:00:00Z") == MIN_INSTANT
    assert parse_instant("0001-01-01T10:00:00+10:00") == MIN_INSTANT
    assert parse_instant("9999-12-31T23:59:59.999999Z") == MAX_INSTANT
    assert parse_instant("2024-05-01") == datetime(2024, 5, 1, tzinfo=UTC)


def test_models_report_out_of_range_times_as_validation() -> None:
    edge = datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14)))
    with pytest.raises(OutOfRange):
        as_utc(edge)
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="supported range"):
        MemoryInput(namespace="a", content="x", now=edge)
