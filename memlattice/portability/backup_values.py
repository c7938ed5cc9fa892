"""Neo4j property values as JSON and back, exactly, for `memlattice backup`.

A backup carries every property of every node and relationship without
knowing what they mean, so the encoding is by value type, not by name. JSON
already holds null, booleans, integers, strings and lists of them; a float
is written by Python's `repr`, which reads back to the same bits. What JSON
lacks is tagged as a one-key-plus-value object (a property value is never a
map in Neo4j, so an object is always a tag):

| value | encoded |
|---|---|
| a list of 8 or more floats (embeddings) | `{"$": "f64", "v": <base64 of little-endian float64s>}` |
| DateTime / LocalDateTime | `{"$": "datetime", "v": <wall time, ns>, "tz": <offset s>}` (no `tz`: local); in a named zone `{"$": "datetime", "utc": <UTC time>, "tz": <name>}` |
| Date, Time, LocalTime, Duration | `{"$": "date" \\| "time" \\| "localtime" \\| "duration", "v": <ISO 8601>}` (`tz` for Time) |
| bytes | `{"$": "bytes", "v": <base64>}` |
| a point | `{"$": "point", "srid": n, "v": [coordinates]}` |
| a Neo4j vector | `{"$": "vector", "dtype": "f32"..., "v": <base64, big-endian>}` |

Pure code, no I/O: tests/unit/test_backup_values.py round-trips every type.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
from array import array
from collections.abc import Collection, Mapping
from typing import Any

import pytz
from neo4j import time as neo4j_time
from neo4j.spatial import Point
from neo4j.vector import Vector

# Below this length a float list stays readable JSON (scores, weights).
PACKED_FLOATS_MIN = 8


class BackupValueError(ValueError):
    """A value in a backup file that is not one this module writes."""


def _zone_name(tzinfo: Any) -> str | None:
    """A named zone's name (pytz, as the driver returns them); UTC counts as an offset."""
    name = getattr(tzinfo, "zone", None)
    return name if isinstance(name, str) and name != "UTC" else None


def _offset_seconds(value: Any) -> int:
    offset = value.utcoffset()
    return int(offset.total_seconds()) if offset is not None else 0


def _offset(seconds: int) -> dt.tzinfo:
    return dt.timezone(dt.timedelta(seconds=seconds))


def _pack(values: list[float]) -> str:
    packed = array("d", values)
    if packed.itemsize != 8:  # pragma: no cover - every CPython platform has 8-byte doubles
        raise BackupValueError("this platform's double is not 8 bytes")
    import sys

    if sys.byteorder != "little":  # pragma: no cover
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode("ascii")


def _unpack(text: str) -> list[float]:
    import sys

    packed = array("d")
    packed.frombytes(base64.b64decode(text))
    if sys.byteorder != "little":  # pragma: no cover
        packed.byteswap()
    return packed.tolist()


def encode(value: Any) -> Any:
    """A property value (as the driver returns it) as JSON-ready data."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$": "float", "v": repr(value)}
    if isinstance(value, list):
        if len(value) >= PACKED_FLOATS_MIN and all(type(v) is float for v in value):
            return {"$": "f64", "v": _pack(value)}
        return [encode(v) for v in value]
    if isinstance(value, neo4j_time.DateTime):
        if value.tzinfo is None:
            return {"$": "datetime", "v": value.iso_format()}
        zone = _zone_name(value.tzinfo)
        if zone is not None:  # the instant in UTC, then the zone: no DST fold to guess
            utc = value.astimezone(pytz.UTC).replace(tzinfo=None)
            return {"$": "datetime", "utc": utc.iso_format(), "tz": zone}
        return {"$": "datetime", "v": value.replace(tzinfo=None).iso_format(),
                "tz": _offset_seconds(value)}
    if isinstance(value, neo4j_time.Date):
        return {"$": "date", "v": value.iso_format()}
    if isinstance(value, neo4j_time.Time):
        if value.tzinfo is None:
            return {"$": "localtime", "v": value.iso_format()}
        return {"$": "time", "v": value.replace(tzinfo=None).iso_format(),
                "tz": _offset_seconds(value)}
    if isinstance(value, neo4j_time.Duration):
        return {"$": "duration", "months": value.months, "days": value.days,
                "seconds": value.seconds, "nanoseconds": value.nanoseconds}
    if isinstance(value, bytes | bytearray):
        return {"$": "bytes", "v": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, Point):
        return {"$": "point", "srid": value.srid, "v": list(value)}
    if isinstance(value, Vector):
        return {"$": "vector", "dtype": value.dtype.value,
                "v": base64.b64encode(value.raw()).decode("ascii")}
    raise BackupValueError(f"a property value of type {type(value).__name__} has no encoding")


def decode(data: Any) -> Any:
    """The driver value `encode` was given (what a query parameter sends back as-is)."""
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict) or "$" not in data:
        raise BackupValueError(f"not an encoded property value: {data!r:.80}")
    tag = data["$"]
    if tag == "f64":
        return _unpack(data["v"])
    if tag == "float":
        return float(data["v"])
    if tag == "datetime":
        if "utc" in data:  # a named zone, hydrated as the driver does
            instant = neo4j_time.DateTime.from_iso_format(data["utc"]).replace(tzinfo=pytz.UTC)
            return instant.as_timezone(pytz.timezone(data["tz"]))
        value = neo4j_time.DateTime.from_iso_format(data["v"])
        return value.replace(tzinfo=_offset(data["tz"])) if "tz" in data else value
    if tag == "date":
        return neo4j_time.Date.from_iso_format(data["v"])
    if tag == "localtime":
        return neo4j_time.Time.from_iso_format(data["v"])
    if tag == "time":
        return neo4j_time.Time.from_iso_format(data["v"]).replace(tzinfo=_offset(data["tz"]))
    if tag == "duration":
        return neo4j_time.Duration(months=data["months"], days=data["days"],
                                   seconds=data["seconds"], nanoseconds=data["nanoseconds"])
    if tag == "bytes":
        return base64.b64decode(data["v"])
    if tag == "point":
        from neo4j.spatial import CartesianPoint, WGS84Point

        kind = WGS84Point if data["srid"] in (4326, 4979) else CartesianPoint
        return kind(data["v"])
    if tag == "vector":
        return Vector.from_bytes(base64.b64decode(data["v"]), data["dtype"])
    raise BackupValueError(f"unknown value tag {tag!r}")


def encode_properties(properties: dict[str, Any]) -> dict[str, Any]:
    return {name: encode(value) for name, value in properties.items()}


def decode_properties(data: dict[str, Any]) -> dict[str, Any]:
    return {name: decode(value) for name, value in data.items()}


def embedding_model_of(labels: Collection[str], props: Mapping[str, Any]) -> str | None:
    """The model a memory node's primary vector names (`embeddingModel`): None for
    another node, a memory without a vector, or one naming no model. The backup's
    `end` line counts these and restore's check counts them again, by this one rule."""
    if "Memory" not in labels:
        return None
    if props.get("embeddingDimension") is None and props.get("embedding") is None:
        return None
    model = props.get("embeddingModel")
    return model if isinstance(model, str) else None

