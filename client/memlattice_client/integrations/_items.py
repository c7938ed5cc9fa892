"""How a key-value store's items live in Memlattice, with no I/O and no framework.

An item `(namespace tuple, key) -> JSON object` is one memory:

- its namespace is the tuple's labels joined by `/` under the store's optional
  root (`("users", "alice")` under root `agents/bot` is `agents/bot/users/alice`),
  so an API key bound to `agents/bot/*` bounds the store too;
- its id is derived from that namespace and the key (a UUID of its own, as the
  server derives a conversation turn's), so a get is one read by id and two
  puts of one key meet on the id: the second is refused with CONFLICT and
  updates instead;
- `key` is the item's key, `value` the object as given, and `metadata` a copy
  of its top-level fields whose names the API accepts, so that an equality
  filter runs in Neo4j (`meta.<field>`); every filter is still checked here
  against the value itself, which also covers operators and nested objects;
- `content` (what search embeds and ranks) is the text of the indexed fields,
  or the object's JSON when none is configured or none has text.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from memlattice_client._models import Memory

# Ids of store items: a UUID of their own, so a derived id never collides with another's.
_ITEMS = uuid.UUID("3b0e8a52-9d61-4f3e-b7c2-51a0d6e4f9a7")
SEPARATOR = "/"
OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})


def namespace_of(root: str | None, labels: tuple[str, ...]) -> str:
    """The Memlattice namespace of a label tuple. A label holding `/` would be read
    back as two, so it is refused here (ValueError); the server checks the rest."""
    for label in labels:
        if SEPARATOR in label:
            raise ValueError(f"namespace label {label!r} contains {SEPARATOR!r}, which"
                             " separates Memlattice namespace segments")
    return SEPARATOR.join([*([root] if root else []), *labels])


def labels_of(root: str | None, namespace: str) -> tuple[str, ...] | None:
    """The label tuple of a Memlattice namespace, or None when it is outside the root."""
    if not root:
        return tuple(namespace.split(SEPARATOR))
    if not namespace.startswith(root + SEPARATOR):
        return None
    return tuple(namespace[len(root) + 1:].split(SEPARATOR))


def item_id(namespace: str, key: str) -> str:
    """The memory id of item `key` in `namespace`: the same pair, the same id."""
    return str(uuid.uuid5(_ITEMS, f"{namespace}\x1f{key}"))


def is_name(text: str) -> bool:
    """Whether the API surely takes `text` as a name (stricter than its rule, which
    also admits inner non-ASCII spaces): 1 to 128 printable characters, no outer
    whitespace."""
    return 0 < len(text) <= 128 and text == text.strip() and text.isprintable()


def filterable(value: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata copy of a value: its top-level fields whose names are names."""
    return {k: v for k, v in value.items() if is_name(k)}


def content_of(value: Mapping[str, Any], texts: list[str]) -> str:
    """What the memory says: the indexed fields' texts, else the value's JSON."""
    text = "\n".join(t for t in texts if t.strip())
    return text or json.dumps(value, ensure_ascii=False, sort_keys=True)


def value_of(memory: Memory) -> dict[str, Any]:
    """An item's value: the memory's `value` object, or (for a memory written some
    other way, such as a conversation turn) its content."""
    if isinstance(memory.value, dict):
        return memory.value
    return {"content": memory.content}


def server_filter(flt: Mapping[str, Any] | None) -> dict[str, Any]:
    """The part of a filter Memlattice can check as metadata equality: top-level
    fields equal to a string, number or boolean, or a list of them (`{"$eq": x}`
    too). Nested objects match as a subset, `None` also matches a missing field and
    operators compare, so those are left to `matches`."""
    out: dict[str, Any] = {}
    for field, wanted in (flt or {}).items():
        if isinstance(wanted, Mapping) and set(wanted) == {"$eq"}:
            wanted = wanted["$eq"]
        if is_name(field) and (_scalar(wanted) or (
                isinstance(wanted, list | tuple) and all(map(_scalar, wanted)))):
            out[field] = list(wanted) if isinstance(wanted, tuple) else wanted
    return out


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def matches(value: Mapping[str, Any], flt: Mapping[str, Any] | None) -> bool:
    """Whether an item's value passes a filter as LangGraph's own stores read one:
    equality (a nested object matches as a subset), or `$eq`, `$ne`, `$gt`, `$gte`,
    `$lt`, `$lte`. An unknown operator is a ValueError."""
    return all(_compare(value.get(field), wanted) for field, wanted in (flt or {}).items())


def _compare(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_operator(actual, op, operand) for op, operand in wanted.items())
        return isinstance(actual, Mapping) and all(
            _compare(actual.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (isinstance(actual, list | tuple) and len(actual) == len(wanted)
                and all(_compare(a, w) for a, w in zip(actual, wanted, strict=True)))
    return bool(actual == wanted)


def _operator(actual: Any, op: str, operand: Any) -> bool:
    if op not in OPERATORS:
        raise ValueError(f"unknown filter operator {op!r}; use one of {sorted(OPERATORS)}")
    if op == "$eq":
        return bool(actual == operand)
    if op == "$ne":
        return bool(actual != operand)
    if not isinstance(actual, int | float) or isinstance(actual, bool):
        return False  # a missing or non-numeric field is neither above nor below
    bound = float(operand)
    return {"$gt": actual > bound, "$gte": actual >= bound,
            "$lt": actual < bound, "$lte": actual <= bound}[op]
