"""Times sent as epoch parts stand for exactly the instant they came from."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from memlattice.graph.codec import epoch_parts

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30),
                    timezones=st.sampled_from([UTC, timezone(timedelta(hours=-5, minutes=-30))])))
def test_parts_rebuild_the_same_instant(value: datetime) -> None:
    parts = epoch_parts(value)
    assert parts is not None
    seconds, nanos = parts
    assert 0 <= nanos < 1_000_000_000 and nanos % 1000 == 0
    assert EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000) == value


def test_before_1970_the_nanosecond_part_stays_positive() -> None:
    assert epoch_parts(EPOCH - timedelta(microseconds=1)) == [-1, 999_999_000]
    assert epoch_parts(None) is None

