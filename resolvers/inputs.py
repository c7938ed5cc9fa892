"""GraphQL input types and their conversion into validated domain inputs.

Every conversion goes through `memlattice.core.model.validated`, so a bad input
raises the project's ValidationError (code VALIDATION) before anything runs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.scalars import JSON

from memlattice.core import model
from memlattice.core.errors import ValidationError
from memlattice.core.memory_fields import WRITE_FIELDS
from memlattice.resolvers import glossary as g
from memlattice.resolvers.planned_inputs import planned
from memlattice.resolvers.scalars import Vector
from memlattice.resolvers.types import Scope, Sensitivity, Status


def _set(obj: Any, *names: str) -> dict[str, Any]:
    """The fields the caller actually sent (UNSET ones are left out)."""
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(obj, name, strawberry.UNSET)
        if value is not strawberry.UNSET:
            out[name] = value
    return out


_SCOPE_FIELDS = ("scope", "agent_id", "user_id", "session_id", "task_id")
# What `MemoryInput.to_domain` passes on besides namespace and content (core.memory_fields).
_WRITE_FIELDS = tuple(f.name for f in WRITE_FIELDS if f.name not in ("namespace", "content"))


@planned
@strawberry.input(description="A memory to write. Omit `embedding` to have the server embed.")
class MemoryInput:
    namespace: str = strawberry.field(description=g.NAMESPACE)
    content: str = strawberry.field(description=g.CONTENT)
    id: strawberry.ID | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "An id of the caller's choosing (1-128 characters, e.g. to replay an export); "
            "omitted: the server makes one. An id already in use is CONFLICT."))
    memory_type: str | None = strawberry.field(
        default=strawberry.UNSET,
        description="A lower-case type name; 'note' by default. 'fact' on writeMemory stores"
        " a fact as storeFact does; the types of typed records (episodic, working, semantic,"
        " competence, plan_graph), and 'fact' elsewhere, are refused: write those with"
        " writeRecord / storeFact.",
    )
    key: str | None = strawberry.field(default=strawberry.UNSET, description=g.KEY)
    value: JSON | None = strawberry.field(default=strawberry.UNSET, description=g.VALUE)
    summary: str | None = strawberry.field(default=strawberry.UNSET, description=g.SUMMARY)
    tags: list[str] | None = strawberry.field(default=strawberry.UNSET, description=g.TAGS)
    metadata: JSON | None = strawberry.field(default=strawberry.UNSET, description=g.METADATA)
    scope: Scope | None = strawberry.field(default=strawberry.UNSET, description=g.SCOPE)
    agent_id: str | None = strawberry.field(default=strawberry.UNSET, description=g.AGENT_ID)
    user_id: str | None = strawberry.field(default=strawberry.UNSET, description=g.USER_ID)
    session_id: str | None = strawberry.field(default=strawberry.UNSET, description=g.SESSION_ID)
    task_id: str | None = strawberry.field(default=strawberry.UNSET, description=g.TASK_ID)
    confidence: float | None = strawberry.field(default=strawberry.UNSET, description=g.CONFIDENCE)
    sensitivity: Sensitivity | None = strawberry.field(
        default=strawberry.UNSET, description="LOW by default; at most the key's clearance.")
    salience: float | None = strawberry.field(default=strawberry.UNSET, description=g.SALIENCE)
    source: str | None = strawberry.field(default=strawberry.UNSET, description=g.SOURCE)
    source_type: str | None = strawberry.field(default=strawberry.UNSET, description=g.SOURCE_TYPE)
    extraction_method: str | None = strawberry.field(
        default=strawberry.UNSET, description=g.EXTRACTION_METHOD)
    provenance: JSON | None = strawberry.field(default=strawberry.UNSET, description=g.PROVENANCE)
    expires_at: datetime | None = strawberry.field(
        default=strawberry.UNSET, description=g.EXPIRES_AT)
    embedding: Vector | None = strawberry.field(default=strawberry.UNSET, description=g.EMBEDDING)
    embedding_model: str | None = strawberry.field(
        default=strawberry.UNSET, description=g.EMBEDDING_MODEL)
    now: datetime | None = strawberry.field(
        default=strawberry.UNSET,
        description="Creation time to record instead of the server clock (imports, replays).",
    )
    allow_duplicate: bool | None = strawberry.field(
        default=strawberry.UNSET,
        description="writeMemory/writeMemories: store a new memory even when an active one"
        " of the same namespace and scope says the same (normalised). By default such a"
        " write reinforces that memory and returns it with `duplicateOf` set.",
    )

    def to_domain(self) -> model.MemoryInput:
        data = {k: v for k, v in _set(self, *_WRITE_FIELDS).items() if v is not None}
        return model.validated(model.MemoryInput, namespace=self.namespace,
                               content=self.content, **data)


@planned
@strawberry.input(description="Fields to change; unset fields stay, null clears.")
class MemoryPatchInput:
    key: str | None = strawberry.field(default=strawberry.UNSET, description=g.KEY)
    content: str | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "New text (up to 100,000 characters); the memory is embedded again unless "
            "`embedding` is given too. Cannot be cleared."))
    value: JSON | None = strawberry.field(default=strawberry.UNSET, description=g.VALUE)
    summary: str | None = strawberry.field(default=strawberry.UNSET, description=g.SUMMARY)
    tags: list[str] | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "Replaces the tags (null cannot clear them: send [])."))
    metadata: JSON | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "Replaces the metadata object (null cannot clear it: send {})."))
    confidence: float | None = strawberry.field(
        default=strawberry.UNSET, description="A new confidence in [0, 1]; cannot be cleared.")
    sensitivity: Sensitivity | None = strawberry.field(
        default=strawberry.UNSET, description="At most the key's clearance.")
    salience: float | None = strawberry.field(default=strawberry.UNSET, description=g.SALIENCE)
    source: str | None = strawberry.field(default=strawberry.UNSET, description=g.SOURCE)
    source_type: str | None = strawberry.field(default=strawberry.UNSET, description=g.SOURCE_TYPE)
    extraction_method: str | None = strawberry.field(
        default=strawberry.UNSET, description=g.EXTRACTION_METHOD)
    provenance: JSON | None = strawberry.field(default=strawberry.UNSET, description=g.PROVENANCE)
    expires_at: datetime | None = strawberry.field(
        default=strawberry.UNSET, description=g.EXPIRES_AT)
    embedding: Vector | None = strawberry.field(default=strawberry.UNSET, description=g.EMBEDDING)
    embedding_model: str | None = strawberry.field(
        default=strawberry.UNSET, description=g.EMBEDDING_MODEL)

    def to_domain(self) -> model.MemoryPatch:
        data = _set(self, *model.MemoryPatch.model_fields)
        for required in ("content", "tags", "metadata", "confidence", "sensitivity"):
            if required in data and data[required] is None:
                raise ValidationError(f"{model.camel(required)} cannot be cleared",
                                            field=model.camel(required))
        return model.validated(model.MemoryPatch, **data)


@planned
@strawberry.input(description="Which memories to list or search; namespace is required.")
class MemoryFilterInput:
    namespace: str = strawberry.field(description=g.NAMESPACE)
    scope: Scope | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "Only memories of this visibility level (equality, unlike SearchInput.scope)."))
    agent_id: str | None = strawberry.field(
        default=strawberry.UNSET, description="Only memories of this agent.")
    user_id: str | None = strawberry.field(
        default=strawberry.UNSET, description="Only memories of this user.")
    session_id: str | None = strawberry.field(
        default=strawberry.UNSET, description="Only memories of this session.")
    task_id: str | None = strawberry.field(
        default=strawberry.UNSET, description="Only memories of this task.")
    statuses: list[Status] | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "Only memories in these states; [ACTIVE] by default, where a search about the"
            " past also shows the superseded states of confirmed updates. Not with asOf."))
    key: str | None = strawberry.field(
        default=strawberry.UNSET, description="Only memories with exactly this key.")
    tags_any: list[str] | None = strawberry.field(
        default=strawberry.UNSET, description="Only memories carrying at least one of these tags.")
    tags_all: list[str] | None = strawberry.field(
        default=strawberry.UNSET, description="Only memories carrying every one of these tags.")
    metadata: JSON | None = strawberry.field(
        default=strawberry.UNSET, description="Equality on top-level metadata keys."
    )
    source_type: str | None = strawberry.field(
        default=strawberry.UNSET, description="Only memories with exactly this sourceType.")
    created_after: datetime | None = strawberry.field(
        default=strawberry.UNSET, description="Only memories created at or after this instant.")
    created_before: datetime | None = strawberry.field(
        default=strawberry.UNSET, description="Only memories created before this instant.")
    event_after: datetime | None = strawberry.field(
        default=strawberry.UNSET,
        description="Keeps memories whose event time [eventStart, eventEnd) ends after this"
        " instant; a memory without event time is left out.")
    event_before: datetime | None = strawberry.field(
        default=strawberry.UNSET,
        description="Keeps memories whose event time starts before this instant; a memory"
        " without event time is left out.")
    memory_types: list[str] | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "Only memories of these memoryTypes (e.g. [\"note\", \"fact\"])."))
    min_confidence: float | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "Only memories whose confidence is at least this, in [0, 1]."))
    as_of: datetime | None = strawberry.field(
        default=strawberry.UNSET,
        description="Time travel: what was believed then (recorded by then, not yet"
        " superseded, retracted, forgotten or expired then); statuses do not apply.")

    def to_domain(self) -> model.MemoryFilter:
        data = {k: v for k, v in _set(self, *model.MemoryFilter.model_fields).items()
                if v is not None}
        return model.validated(model.MemoryFilter, **data)


@planned
@strawberry.input(description="Forget by substring, or by a conjunction of the other fields.")
class ForgetPredicateInput:
    contains: str | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "Forget every memory whose content contains this text (1-1024 characters, not "
            "blank); not combined with the other fields."))
    id: strawberry.ID | None = strawberry.field(
        default=strawberry.UNSET, description="The memory with this id.")
    key: str | None = strawberry.field(
        default=strawberry.UNSET, description="Memories with this key.")
    tag: str | None = strawberry.field(
        default=strawberry.UNSET, description="Memories carrying this tag.")
    tags: list[str] | None = strawberry.field(
        default=strawberry.UNSET, description="Memories carrying every one of these tags.")
    query: str | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "Memories matching every word of this fulltext query (1-1024 characters)."))

    def to_domain(self) -> model.ForgetPredicate:
        data = {k: v for k, v in _set(self, *model.ForgetPredicate.model_fields).items()
                if v is not None}
        return model.validated(model.ForgetPredicate, **data)


__all__ = [
    "ForgetPredicateInput", "MemoryFilterInput", "MemoryInput", "MemoryPatchInput",
]
