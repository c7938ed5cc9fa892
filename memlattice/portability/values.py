"""Property maps <-> JSON, losslessly, for the export format.

Neo4j properties are scalars and homogeneous lists; the export keeps them as
they are, except: times become ISO 8601 strings (under a property name a kind
declares as a time) or `{"$datetime": "..."}` (any other temporal property, so
a property added later still round-trips), and the canonical-JSON string
properties a kind names (`valueJson`, ...) are inlined as JSON under their
plain name, so an export is readable (re-encoded compactly, key order kept).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from memlattice.core.errors import ValidationError

DATETIME_TAG = "$datetime"


def compact_json(value: Any) -> str:
    """JSON as the graph keeps it: compact, keys in the order given. The export keeps
    each object's key order, so a stored string comes back byte for byte whether it
    was canonical (sorted) or built by a query."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _native(value: Any) -> Any:
    return value.to_native() if hasattr(value, "to_native") else value


def encode_time(value: Any) -> str:
    native = _native(value)
    if not isinstance(native, datetime):
        raise TypeError(f"not a datetime: {type(value).__name__}")
    return native.isoformat()


def parse_time(value: Any, name: str) -> datetime:
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be an ISO 8601 time string", field=name)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValidationError(f"{name} is not an ISO 8601 time: {value!r}", field=name) from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def to_json(props: Mapping[str, Any], *, times: Iterable[str],
            inline: Mapping[str, str]) -> dict[str, Any]:
    """A node's or relationship's properties as a JSON object (keys sorted)."""
    time_names = set(times)
    out: dict[str, Any] = {}
    for name, value in props.items():
        if name in inline:
            out[inline[name]] = None if value is None else json.loads(value)
        elif name in time_names and value is not None:
            out[name] = encode_time(value)
        elif hasattr(value, "to_native") or isinstance(value, datetime):
            out[name] = {DATETIME_TAG: encode_time(value)}
        else:
            out[name] = value
    return dict(sorted(out.items()))


def _property_value(name: str, value: Any) -> Any:
    """What Neo4j can store: a scalar or a homogeneous list of scalars."""
    if isinstance(value, dict):
        if set(value) == {DATETIME_TAG}:
            return parse_time(value[DATETIME_TAG], name)
        raise ValidationError(f"{name}: a property cannot hold a JSON object", field=name)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValidationError(f"{name}: NaN and infinity are not stored", field=name)
    if isinstance(value, list):
        kinds = {float if isinstance(v, int | float) and not isinstance(v, bool) else type(v)
                 for v in value}
        if len(kinds) > 1 or kinds & {dict, list, type(None)}:
            raise ValidationError(f"{name}: a list property holds scalars of one type",
                                  field=name)
        if kinds == {float} and any(isinstance(v, float) for v in value):
            return [float(v) for v in value]
    return value


def from_json(record: Mapping[str, Any], *, times: Iterable[str],
              inline: Mapping[str, str], skip: Iterable[str] = ()) -> dict[str, Any]:
    """The inverse of `to_json`: a property map ready to SET (None values dropped)."""
    time_names = set(times)
    plain = {v: k for k, v in inline.items()}
    skipped = set(skip)
    props: dict[str, Any] = {}
    for name, value in record.items():
        if name in skipped or value is None:
            continue
        if name in plain:
            props[plain[name]] = compact_json(value)
        elif name in time_names:
            props[name] = parse_time(value, name)
        else:
            props[name] = _property_value(name, value)
    return props
