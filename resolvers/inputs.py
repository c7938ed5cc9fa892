"""GraphQL input types and their conversion into validated domain inputs.

Every conversion goes through `memlattice.model.validated`, so a bad input
raises the project's ValidationError (code VALIDATION) before anything runs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.scalars import JSON

from memlattice import model
from resolvers.types import Direction, EdgeType, Scope, SearchMode, Status


def _set(obj: Any, *names: str) -> dict[str, Any]:
    """The fields the caller actually sent (UNSET ones are left out)."""
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(obj, name)
        if value is not strawberry.UNSET:
            out[name] = value
    return out


_SCOPE_FIELDS = ("scope", "agent_id", "user_id", "session_id", "task_id")
_WRITE_FIELDS = (
    "id", "key", "value", "summary", "tags", "metadata", "confidence", "source",
    "source_type", "extraction_method", "provenance", "expires_at", "embedding",
    "embedding_model", "now", *_SCOPE_FIELDS,
)


@strawberry.input(description="A memory to write. Omit `embedding` to have the server embed.")
class MemoryInput:
    namespace: str
    content: str
    id: strawberry.ID | None = strawberry.UNSET
    key: str | None = strawberry.UNSET
    value: JSON | None = strawberry.UNSET
    summary: str | None = strawberry.UNSET
    tags: list[str] | None = strawberry.UNSET
    metadata: JSON | None = strawberry.UNSET
    scope: Scope | None = strawberry.UNSET
    agent_id: str | None = strawberry.UNSET
    user_id: str | None = strawberry.UNSET
    session_id: str | None = strawberry.UNSET
    task_id: str | None = strawberry.UNSET
    confidence: float | None = strawberry.UNSET
    source: str | None = strawberry.UNSET
    source_type: str | None = strawberry.UNSET
    extraction_method: str | None = strawberry.UNSET
    provenance: JSON | None = strawberry.UNSET
    expires_at: datetime | None = strawberry.UNSET
    embedding: list[float] | None = strawberry.UNSET
    embedding_model: str | None = strawberry.UNSET
    now: datetime | None = strawberry.field(
        default=strawberry.UNSET,
        description="Creation time to record instead of the server clock (imports, replays).",
    )

    def to_domain(self) -> model.MemoryInput:
        data = {k: v for k, v in _set(self, *_WRITE_FIELDS).items() if v is not None}
        return model.validated(model.MemoryInput, namespace=self.namespace,
                               content=self.content, **data)


@strawberry.input(description="Fields to change; unset fields stay, null clears.")
class MemoryPatchInput:
    key: str | None = strawberry.UNSET
    content: str | None = strawberry.UNSET
    value: JSON | None = strawberry.UNSET
    summary: str | None = strawberry.UNSET
    tags: list[str] | None = strawberry.UNSET
    metadata: JSON | None = strawberry.UNSET
    confidence: float | None = strawberry.UNSET
    source: str | None = strawberry.UNSET
    source_type: str | None = strawberry.UNSET
    extraction_method: str | None = strawberry.UNSET
    provenance: JSON | None = strawberry.UNSET
    expires_at: datetime | None = strawberry.UNSET
    embedding: list[float] | None = strawberry.UNSET
    embedding_model: str | None = strawberry.UNSET

    def to_domain(self) -> model.MemoryPatch:
        data = _set(self, *model.MemoryPatch.model_fields)
        for required in ("content", "tags", "metadata", "confidence"):
            if required in data and data[required] is None:
                raise model.ValidationError(f"{model.camel(required)} cannot be cleared",
                                            field=model.camel(required))
        return model.validated(model.MemoryPatch, **data)


@strawberry.input(description="Which memories to list or search; namespace is required.")
class MemoryFilterInput:
    namespace: str
    scope: Scope | None = strawberry.UNSET
    agent_id: str | None = strawberry.UNSET
    user_id: str | None = strawberry.UNSET
    session_id: str | None = strawberry.UNSET
    task_id: str | None = strawberry.UNSET
    statuses: list[Status] | None = strawberry.UNSET
    key: str | None = strawberry.UNSET
    tags_any: list[str] | None = strawberry.UNSET
    tags_all: list[str] | None = strawberry.UNSET
    metadata: JSON | None = strawberry.field(
        default=strawberry.UNSET, description="Equality on top-level metadata keys."
    )
    source_type: str | None = strawberry.UNSET
    created_after: datetime | None = strawberry.UNSET
    created_before: datetime | None = strawberry.UNSET

    def to_domain(self) -> model.MemoryFilter:
        data = {k: v for k, v in _set(self, *model.MemoryFilter.model_fields).items()
                if v is not None}
        return model.validated(model.MemoryFilter, **data)


@strawberry.input
class SearchInput:
    filter: MemoryFilterInput
    query: str | None = None
    vector: list[float] | None = strawberry.field(
        default=None, description="A query embedding of the configured dimension."
    )
    mode: SearchMode = SearchMode.HYBRID
    limit: int = 10
    now: datetime | None = strawberry.field(
        default=None, description="The clock for expiry (and recency), for replays."
    )


@strawberry.input(description="Forget by substring, or by a conjunction of the other fields.")
class ForgetPredicateInput:
    contains: str | None = strawberry.UNSET
    id: strawberry.ID | None = strawberry.UNSET
    key: str | None = strawberry.UNSET
    tag: str | None = strawberry.UNSET
    tags: list[str] | None = strawberry.UNSET
    query: str | None = strawberry.UNSET

    def to_domain(self) -> model.ForgetPredicate:
        data = {k: v for k, v in _set(self, *model.ForgetPredicate.model_fields).items()
                if v is not None}
        return model.validated(model.ForgetPredicate, **data)


@strawberry.input
class EdgeInput:
    namespace: str
    source_id: strawberry.ID
    target_id: strawberry.ID
    type: EdgeType
    metadata: JSON | None = None


__all__ = [
    "Direction", "EdgeInput", "ForgetPredicateInput", "MemoryFilterInput", "MemoryInput",
    "MemoryPatchInput", "SearchInput",
]
