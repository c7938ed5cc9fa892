"""Every Neo4j property type survives the backup encoding exactly (through JSON text)."""

from __future__ import annotations

import json
import math
import random
from datetime import UTC, timedelta, timezone
from typing import Any

import pytest
import pytz
from neo4j import time as neo4j_time
from neo4j.spatial import CartesianPoint, WGS84Point
from neo4j.vector import Vector

from memlattice.portability.backup_values import (
    PACKED_FLOATS_MIN,
    BackupValueError,
    decode,
    decode_properties,
    encode,
    encode_properties,
)

rng = random.Random(7)
VALUES: list[Any] = [
    None, True, False, 0, -(2**63), 2**63 - 1, 0.1, -0.0, 1e-310, "", "tëxt ✓ \u2028",
    [], [1, 2, 3], ["a", "b"], [True, False], [0.5, 0.25],
    [rng.uniform(-1, 1) for _ in range(256)],
    neo4j_time.DateTime(2026, 11, 26, 21, 6, 55, 123456789, tzinfo=UTC),
    neo4j_time.DateTime(2026, 3, 29, 2, 30, 0, 1, tzinfo=timezone(timedelta(hours=-3, minutes=-30))),
    # A named zone as the driver hydrates one (pytz): a UTC instant shown in the zone.
    neo4j_time.DateTime(2026, 7, 1, 12, 0, 0, 5, tzinfo=pytz.UTC).as_timezone(
        pytz.timezone("Europe/Lisbon")),
    neo4j_time.DateTime(2026, 10, 25, 1, 30, 0, 7, tzinfo=pytz.UTC).as_timezone(
        pytz.timezone("Europe/Lisbon")),  # inside the autumn fold
    neo4j_time.DateTime(1999, 12, 31, 23, 59, 59, 999999999),
    neo4j_time.Date(2024, 2, 29),
    neo4j_time.Time(13, 14, 15, 16),
    neo4j_time.Time(1, 2, 3, 4, tzinfo=timezone(timedelta(hours=5))),
    neo4j_time.Duration(months=14, days=3, seconds=7, nanoseconds=9),
    b"\x00\xffbytes",
    CartesianPoint((1.5, -2.0)), WGS84Point((9.1, 38.7, 100.0)),
    [neo4j_time.Date(2020, 1, 1), neo4j_time.Date(2021, 1, 1)],
    Vector([0.5, -1.25, 3.0], "f32"),
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_a_value_round_trips_through_json_text(value: Any) -> None:
    back = decode(json.loads(json.dumps(encode(value))))
    if isinstance(value, Vector):
        assert (back.dtype, back.raw()) == (value.dtype, value.raw())
        return
    assert back == value and type(back) is type(value)
    if isinstance(value, float):
        assert math.copysign(1, back) == math.copysign(1, value)
    if isinstance(value, neo4j_time.DateTime | neo4j_time.Time):
        assert back.utcoffset() == value.utcoffset() and back.nanosecond == value.nanosecond
        assert back.iso_format() == value.iso_format()


def test_long_float_lists_are_packed_and_keep_every_bit() -> None:
    floats = [rng.gauss(0, 1) for _ in range(PACKED_FLOATS_MIN)]
    encoded = encode(floats)
    assert encoded["$"] == "f64"
    assert [x.hex() for x in decode(encoded)] == [x.hex() for x in floats]
    assert encode(floats[:-1]) == floats[:-1]  # short lists stay readable


def test_a_named_zone_keeps_its_name() -> None:
    value = neo4j_time.DateTime(2026, 1, 1, tzinfo=pytz.UTC).as_timezone(
        pytz.timezone("America/New_York"))
    assert encode(value)["tz"] == "America/New_York"
    assert decode(encode(value)).tzinfo.zone == "America/New_York"


def test_non_finite_floats_round_trip() -> None:
    for value in (math.inf, -math.inf):
        assert decode(json.loads(json.dumps(encode(value)))) == value
    assert math.isnan(decode(encode(math.nan)))


def test_properties_round_trip_and_unknown_data_is_refused() -> None:
    props = {"content": "x", "embedding": [0.1] * 16, "at": VALUES[17]}
    assert decode_properties(json.loads(json.dumps(encode_properties(props)))) == props
    for bad in ({"no": "tag"}, {"$": "nope", "v": 1}):
        with pytest.raises(BackupValueError):
            decode(bad)
    with pytest.raises(BackupValueError):
        encode(object())
