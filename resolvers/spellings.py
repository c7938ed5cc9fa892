"""Deprecated spellings of the API, accepted for one release (docs/api.md, "One
vocabulary"): the input types take both names and turn them into one value here,
so resolvers and services only ever see the current one."""

from __future__ import annotations

from typing import Any

from memlattice.core.errors import ValidationError

# Ends every `extensions.notes` entry about an old spelling.
VOCABULARY_NOTE = ("The old spelling is removed in the next release (docs/api.md,"
                   " One vocabulary).")


def either(new: str, new_value: Any, old: str, old_value: Any) -> Any:
    """The value given under the current spelling or its deprecated one; both at once
    is refused (VALIDATION), since neither could silently win."""
    if new_value is not None and old_value is not None:
        raise ValidationError(f"give {new} or its deprecated spelling {old}, not both",
                              fields=[new, old])
    return new_value if new_value is not None else old_value
