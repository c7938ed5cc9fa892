"""Old keyword spellings, accepted for one release with a DeprecationWarning.

The API settled on one vocabulary (docs/api.md, "One vocabulary"): a search's
query vector is `embedding`, as on every write, and who is asking is given as
`agent_id` / `user_id` / `session_id` / `task_id` beside `scope`, as a write
names whom a memory belongs to. `search(vector=..., context={...})` still works
for a release; it warns, and the client sends the current names, so the server
never sees the deprecated fields from this client.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from pydantic.alias_generators import to_snake

CALLER_IDS = ("agent_id", "user_id", "session_id", "task_id")
# Frames from `warnings.warn` up to the caller: `_deprecated`,
# `current_search_options`, the builder (`_operations.search`), the client's
# method wrapper; so the warning names the caller's line.
_CALLER_FRAME = 5


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"search({old}=...) is deprecated; use {new}= (the same value)",
                  DeprecationWarning, stacklevel=_CALLER_FRAME)


def current_search_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """`search`'s keyword options with the deprecated spellings moved to the current
    ones; giving both spellings of one thing is a TypeError, as two values for one
    argument are in Python."""
    fields = dict(options)
    if "vector" in fields:
        _deprecated("vector", "embedding")
        if "embedding" in fields:
            raise TypeError("search() got embedding= and its deprecated spelling vector=")
        fields["embedding"] = fields.pop("vector")
    if "context" in fields:
        _deprecated("context", "agent_id/user_id/session_id/task_id")
        context = {to_snake(k): v for k, v in (fields.pop("context") or {}).items()}
        both = sorted(name for name in context if name in fields)
        if both:
            raise TypeError(f"search() got {', '.join(both)} both as keywords and in the"
                            " deprecated context=")
        unknown = sorted(set(context) - set(CALLER_IDS))
        if unknown:
            raise TypeError(f"search() context= holds unknown ids: {', '.join(unknown)}")
        fields.update(context)
    return fields
