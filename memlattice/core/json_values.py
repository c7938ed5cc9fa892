"""JSON values as callers send them: only what strict JSON and UTF-8 can carry.

Python's `json` reads `NaN`, `Infinity` and `1e400` (as infinity), but no
JSON document may contain them: a value stored with one comes back as text
that strict parsers (JavaScript's `JSON.parse`, Go, Rust's serde) reject.
It also reads a lone surrogate escape (`"\\ud800"`) into a string that no
UTF-8 encoder (Neo4j's driver included) can write. Every input is checked
for both before anything is written.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar

J = TypeVar("J")


def _lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def unwritable(value: Any) -> tuple[str, str] | None:
    """The first thing in `value` that JSON or UTF-8 cannot carry, as (path, what),
    the path dotted (`a.b.0`, empty for `value` itself); None when there is none.

    Iterative, so a deeply nested value cannot overflow the stack here.
    """
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return path, "NaN or infinity (JSON has no such number)"
        elif isinstance(item, str):
            if _lone_surrogate(item):
                return path, "a lone surrogate (not Unicode text)"
        elif isinstance(item, dict):
            for k, v in item.items():
                if isinstance(k, str) and _lone_surrogate(k):
                    return path, "a lone surrogate (not Unicode text) in a key"
                stack.append((f"{path}.{k}" if path else str(k), v))
        elif isinstance(item, list | tuple):
            if _finite_floats(item):
                continue  # a vector: nothing in it to report, and no path to spell per number
            stack.extend((f"{path}.{i}" if path else str(i), v) for i, v in enumerate(item))
    return None


def _finite_floats(items: list[Any] | tuple[Any, ...]) -> bool:
    """Only finite floats: what an embedding is. Checked at C speed, where walking it
    number by number (a path string each) cost more than the rest of a write's checks."""
    return bool(items) and set(map(type, items)) == {float} and all(map(math.isfinite, items))


def json_problem(value: Any) -> str | None:
    """`unwritable` as a phrase (`NaN or infinity ... at a.b`), or None."""
    found = unwritable(value)
    if found is None:
        return None
    path, what = found
    return f"{what} at {path or '(the value)'}"


def check_json(value: J, what: str = "value") -> J:
    """`value` when JSON and UTF-8 can carry it; else ValueError saying where."""
    problem = json_problem(value)
    if problem is not None:
        raise ValueError(f"{what} holds {problem}")
    return value
