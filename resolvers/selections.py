"""What an operation selected below the field being resolved, so that the graph
reads no more of each result than the caller will see (projection pushdown).

The walk goes through named and inline fragments (strawberry has expanded them)
and keeps every field it meets, whatever its `@include`/`@skip`: reading a field
the response then leaves out costs a little, leaving out one it shows would show
a default in its place.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from strawberry.types.nodes import SelectedField, Selection

from memlattice.resolvers.context import Info


def _fields(selections: Iterable[Selection]) -> Iterator[SelectedField]:
    for selection in selections:
        if isinstance(selection, SelectedField):
            yield selection
        else:  # a fragment spread or an inline fragment: its fields are selected here
            yield from _fields(selection.selections)


def selected_below(info: Info, path: Sequence[str]) -> frozenset[str]:
    """The names of the fields selected at `path` below the field `info` resolves
    (`("memory",)` in `search`: the fields of each hit's memory), every alias of
    each step merged."""
    level = [child for field in info.selected_fields for child in _fields(field.selections)]
    for name in path:
        level = [child for field in level if field.name == name
                 for child in _fields(field.selections)]
    return frozenset(field.name for field in level)
