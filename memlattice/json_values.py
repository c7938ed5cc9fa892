"""JSON values as callers send them: only what strict JSON can carry back.

Python's `json` reads `NaN`, `Infinity` and `1e400` (as infinity), but no
JSON document may contain them: a value stored with one comes back as text
that strict parsers (JavaScript's `JSON.parse`, Go, Rust's serde) reject, so
every JSON input (metadata, value, provenance, payload, edge metadata) is
checked before anything is written.
"""

from __future__ import annotations

import math
from typing import Any


def non_finite_path(value: Any) -> str | None:
    """The path (`a.b.0`) of the first NaN or infinite number in `value`, else None.

    Iterative, so a deeply nested value cannot overflow the stack here.
    """
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return path or "(the value)"
        elif isinstance(item, dict):
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in item.items())
        elif isinstance(item, list | tuple):
            stack.extend((f"{path}.{i}" if path else str(i), v) for i, v in enumerate(item))
    return None


def check_finite(value: Any, what: str = "value") -> Any:
    """`value` when it holds only finite numbers; else ValueError naming where."""
    path = non_finite_path(value)
    if path is not None:
        raise ValueError(f"{what} holds NaN or infinity at {path}; JSON has no such number")
    return value
