"""Export encoding (pure): properties <-> JSON, times, harn paths and times."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from memlattice.core.errors import ValidationError
from memlattice.portability.foreign import harn_logs, parse_time
from memlattice.portability.importer import remapper
from memlattice.portability.values import DATETIME_TAG, from_json, to_json

INLINE = {"valueJson": "value"}


def test_properties_round_trip_through_json() -> None:
    created = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
    other = datetime(2030, 1, 1, tzinfo=timezone(timedelta(hours=2)))
    props = {"id": "m1", "createdAt": created, "validTo": other, "tags": ["a", "b"],
             "embedding": [0.5, 0.0, -1.25], "valueJson": '{"b":1,"a":[1.5,true]}',
             "version": 3, "flag": False}
    record = to_json(props, times=("createdAt",), inline=INLINE)
    assert record["createdAt"] == "2024-05-06T07:08:09.123456+00:00"
    assert record["validTo"] == {DATETIME_TAG: "2030-01-01T00:00:00+02:00"}
    assert record["value"] == {"b": 1, "a": [1.5, True]}
    text = json.dumps(record)
    back = from_json(json.loads(text), times=("createdAt",), inline=INLINE)
    assert back == props
    assert back["valueJson"] == props["valueJson"]  # key order kept, byte for byte


def test_values_neo4j_cannot_store_are_refused() -> None:
    for bad in ({"x": {"nested": 1}}, {"x": [1, "a"]}, {"x": [[1]]}, {"x": [None]}):
        with pytest.raises(ValidationError):
            from_json(bad, times=(), inline={})
    with pytest.raises(ValidationError, match="not an ISO 8601 time"):
        from_json({"createdAt": "soon"}, times=("createdAt",), inline={})
    assert from_json({"v": [1, 2.5]}, times=(), inline={}) == {"v": [1.0, 2.5]}


def test_harn_times_accept_iso_seconds_and_milliseconds() -> None:
    assert parse_time("2024-03-01T10:00:00Z", "t") == datetime(2024, 3, 1, 10, tzinfo=UTC)
    assert parse_time(1709287200, "t") == parse_time(1709287200000, "t")
    assert parse_time("2024-03-01T10:00:00", "t").tzinfo is not None
    for bad in (None, True, "tomorrow", [1]):
        with pytest.raises(ValidationError):
            parse_time(bad, "t")


def test_harn_paths_name_their_namespaces(tmp_path: Path) -> None:
    for ns in ("alpha", "team/beta"):
        log = tmp_path / ".harn" / "memory" / ns / "events.jsonl"
        log.parent.mkdir(parents=True)
        log.write_text("")
    found = harn_logs(tmp_path / ".harn", None)
    assert [ns for _, ns in found] == ["alpha", "team/beta"]
    assert harn_logs(tmp_path / ".harn", "team/beta")[0][1] == "team/beta"
    single = tmp_path / ".harn" / "memory" / "team" / "beta" / "events.jsonl"
    assert harn_logs(single, None) == [(single, "team/beta")]
    assert harn_logs(single, "elsewhere") == [(single, "elsewhere")]
    with pytest.raises(ValidationError, match="no harn log"):
        harn_logs(tmp_path / ".harn", "gamma")


def test_remapped_ids_are_deterministic_per_destination() -> None:
    a, b = remapper("ns/a", True), remapper("ns/b", True)
    assert a("m1") == a("m1") != b("m1") and a("m1") != a("m2")
    assert remapper("ns/a", False)("m1") == "m1"
