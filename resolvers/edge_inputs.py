"""The inputs of the edge mutations: addEdge's and each of an addEdges batch.

Both name only the relationship; the namespace is the operation's argument, as
for every edge operation (edges, deleteEdge). addEdge's input still accepts its
deprecated `namespace` for one release (resolvers.spellings).
"""

from __future__ import annotations

import strawberry
from strawberry.scalars import JSON

from memlattice.core.errors import ValidationError
from memlattice.resolvers.planned_inputs import planned
from memlattice.resolvers.spellings import VOCABULARY_NOTE, either
from memlattice.resolvers.types import EdgeType


@planned
@strawberry.input(description="The relationship addEdge makes; the namespace is addEdge's"
                  " argument, as for every edge operation.")
class EdgeInput:
    source_id: strawberry.ID = strawberry.field(
        description="The memory the relationship starts from.")
    target_id: strawberry.ID = strawberry.field(
        description="The memory it points to (same namespace).")
    type: EdgeType = strawberry.field(description="What the relationship says.")
    metadata: JSON | None = strawberry.field(
        default=None, description=(
            "A JSON object of the caller's own; adding the same relationship again with other"
            " metadata replaces them."))
    namespace: str | None = strawberry.field(
        default=None, description="Deprecated: the namespace, now addEdge's own argument.",
        deprecation_reason="Pass `namespace` to addEdge, as addEdges, edges and deleteEdge"
        " take it.")

    def deprecation_notes(self) -> list[str]:
        """`extensions.notes` for a caller still sending `input.namespace`."""
        if self.namespace is None:
            return []
        return [f"`input.namespace` of addEdge is deprecated: pass `namespace` as addEdge's"
                f" argument. {VOCABULARY_NOTE}"]

    def namespace_of(self, argument: str | None) -> str:
        """The namespace given as addEdge's argument, or (deprecated) inside the input."""
        namespace = either("namespace", argument, "input.namespace", self.namespace)
        if namespace is None:
            raise ValidationError("addEdge needs its namespace argument", field="namespace")
        return str(namespace)


@planned
@strawberry.input(description="One relationship of an addEdges batch.")
class EdgeSpecInput:
    source_id: strawberry.ID = strawberry.field(
        description="The memory the relationship starts from.")
    target_id: strawberry.ID = strawberry.field(
        description="The memory it points to (same namespace).")
    type: EdgeType = strawberry.field(description="What the relationship says.")
    metadata: JSON | None = strawberry.field(
        default=None, description="A JSON object of the caller's own.")
