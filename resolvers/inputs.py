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
from memlattice.core.search_config import PRESETS, NamespaceSettings
from memlattice.resolvers.planned_inputs import planned
from memlattice.resolvers.scalars import Vector
from memlattice.resolvers.spellings import VOCABULARY_NOTE, either
from memlattice.resolvers.types import (
    Direction,
    EdgeType,
    Scope,
    ScoringMode,
    SearchMode,
    Sensitivity,
    Status,
)


def _set(obj: Any, *names: str) -> dict[str, Any]:
    """The fields the caller actually sent (UNSET ones are left out)."""
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(obj, name, strawberry.UNSET)
        if value is not strawberry.UNSET:
            out[name] = value
    return out


_SCOPE_FIELDS = ("scope", "agent_id", "user_id", "session_id", "task_id")
# The ids of who is asking, on a SearchInput (its deprecated `context` held the same).
_CALLER_FIELDS = ("agent_id", "user_id", "session_id", "task_id")
# What `MemoryInput.to_domain` passes on besides namespace and content (core.memory_fields).
_WRITE_FIELDS = tuple(f.name for f in WRITE_FIELDS if f.name not in ("namespace", "content"))


@planned
@strawberry.input(description="A memory to write. Omit `embedding` to have the server embed.")
class MemoryInput:
    namespace: str
    content: str
    id: strawberry.ID | None = strawberry.UNSET
    memory_type: str | None = strawberry.field(
        default=strawberry.UNSET,
        description="A lower-case type name; 'note' by default. 'fact' on writeMemory stores"
        " a fact as storeFact does; the types of typed records (episodic, working, semantic,"
        " competence, plan_graph), and 'fact' elsewhere, are refused: write those with"
        " writeRecord / storeFact.",
    )
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
    sensitivity: Sensitivity | None = strawberry.field(
        default=strawberry.UNSET, description="LOW by default; at most the key's clearance.")
    salience: float | None = strawberry.UNSET
    source: str | None = strawberry.UNSET
    source_type: str | None = strawberry.UNSET
    extraction_method: str | None = strawberry.UNSET
    provenance: JSON | None = strawberry.UNSET
    expires_at: datetime | None = strawberry.UNSET
    embedding: Vector | None = strawberry.UNSET
    embedding_model: str | None = strawberry.UNSET
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
    key: str | None = strawberry.UNSET
    content: str | None = strawberry.UNSET
    value: JSON | None = strawberry.UNSET
    summary: str | None = strawberry.UNSET
    tags: list[str] | None = strawberry.UNSET
    metadata: JSON | None = strawberry.UNSET
    confidence: float | None = strawberry.UNSET
    sensitivity: Sensitivity | None = strawberry.field(
        default=strawberry.UNSET, description="At most the key's clearance.")
    salience: float | None = strawberry.UNSET
    source: str | None = strawberry.UNSET
    source_type: str | None = strawberry.UNSET
    extraction_method: str | None = strawberry.UNSET
    provenance: JSON | None = strawberry.UNSET
    expires_at: datetime | None = strawberry.UNSET
    embedding: Vector | None = strawberry.UNSET
    embedding_model: str | None = strawberry.UNSET

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
    event_after: datetime | None = strawberry.field(
        default=strawberry.UNSET,
        description="Keeps memories whose event time [eventStart, eventEnd) ends after this"
        " instant; a memory without event time is left out.")
    event_before: datetime | None = strawberry.field(
        default=strawberry.UNSET,
        description="Keeps memories whose event time starts before this instant; a memory"
        " without event time is left out.")
    memory_types: list[str] | None = strawberry.UNSET
    min_confidence: float | None = strawberry.UNSET
    as_of: datetime | None = strawberry.field(
        default=strawberry.UNSET,
        description="Time travel: what was believed then (recorded by then, not yet"
        " superseded, retracted, forgotten or expired then); statuses do not apply.")

    def to_domain(self) -> model.MemoryFilter:
        data = {k: v for k, v in _set(self, *model.MemoryFilter.model_fields).items()
                if v is not None}
        return model.validated(model.MemoryFilter, **data)


@planned
@strawberry.input(description="Deprecated with SearchInput.context: give these ids on"
                  " SearchInput itself.")
class SearchContextInput:
    agent_id: str | None = None
    user_id: str | None = None
    session_id: str | None = None
    task_id: str | None = None


@planned
@strawberry.input(description="Hybrid weights; each part is normalised to [0, 1] first.")
class WeightsInput:
    similarity: float = 0.6
    fulltext: float = 0.3
    recency: float = 0.05
    popularity: float = 0.05


@planned
@strawberry.input(description="Follow relationships from the candidates.")
class ExpansionInput:
    max_expand: int = strawberry.field(
        default=10, description="How many memories reached only through the graph may enter."
    )
    depth: int = strawberry.field(default=1, description="Hops, 1 to 3.")
    types: list[EdgeType] | None = None
    direction: Direction = Direction.BOTH
    hop_discount: float = strawberry.field(default=0.5, description="Per extra hop.")
    share: float = strawberry.field(
        default=0.5, description="Share of the best neighbour's score a memory gains."
    )
    per_seed: int = 8


@planned
@strawberry.input(description="Recall: candidates, scoring, graph expansion, cut-offs.")
class SearchInput:
    filter: MemoryFilterInput
    query: str | None = None
    embedding: Vector | None = strawberry.field(
        default=None, description="A query embedding of the configured dimension (the name"
        " every write gives a vector)."
    )
    vector: Vector | None = strawberry.field(
        default=None, deprecation_reason="Use `embedding`, the name writes use.")
    # Who is asking: the same four ids, at the same level, as a write names whom a
    # memory belongs to. (The filter's ids are equality conditions on the memories.)
    agent_id: str | None = strawberry.field(
        default=None, description="Who is asking: the agent of the caller's scope chain.")
    user_id: str | None = strawberry.field(
        default=None, description="Who is asking: the end user of the caller's scope chain.")
    session_id: str | None = strawberry.field(
        default=None, description="Who is asking: the session (within its user).")
    task_id: str | None = strawberry.field(
        default=None, description="Who is asking: the task (within its user's session).")
    context: SearchContextInput | None = strawberry.field(
        default=None, deprecation_reason="Give agentId, userId, sessionId and taskId on"
        " SearchInput itself, as writes do.")
    scope: Scope | None = strawberry.field(
        default=None, description="Search at this level and every broader one of the"
        " caller's ids."
    )
    scopes: list[Scope] | None = strawberry.field(
        default=None, description="Exactly these levels of the caller's ids (a union)."
    )
    preset: str | None = strawberry.field(
        default=None, description="Start from a named preset: " + ", ".join(PRESETS) + "."
    )
    mode: SearchMode | None = None
    scoring: ScoringMode | None = None
    weights: WeightsInput | None = None
    decay_half_life_days: float | None = None
    key_boost: float | None = None
    tag_boost: float | None = None
    use_confidence: bool | None = None
    use_salience: bool | None = None
    mmr_lambda: float | None = None
    expansion: ExpansionInput | None = None
    context_hops: int | None = strawberry.field(default=None, description=(
        "A memory's neighbours along NEXT (the turns around a conversation turn) up to this"
        " many steps either way count as weaker lexical fields of it (default 3; 0: off)."))
    context_decay: float | None = strawberry.field(default=None, description=(
        "The weight of those neighbours' words per step away (default 0.75)."))
    reranker: str | None = None
    min_score: float | None = None
    min_relevance: float | None = strawberry.field(default=None, description=(
        "Leave out hits whose relevance (evidence in [0, 1] that they answer the query,"
        " comparable across modes and queries) is below this; with no hit left the"
        " answer is empty: nothing relevant."))
    limit: int | None = None
    candidates: int | None = None
    now: datetime | None = strawberry.field(
        default=None, description="The clock for expiry and recency, for replays."
    )

    def options(self) -> dict[str, Any]:
        """The options the caller set, as `SearchConfig` fields; the service lays them
        over the namespace's defaults or `preset` (`MemoryService.configured_search`)."""
        overrides: dict[str, Any] = {
            name: getattr(self, name)
            for name in ("mode", "scoring", "decay_half_life_days", "key_boost", "tag_boost",
                         "use_confidence", "use_salience", "mmr_lambda", "reranker",
                         "min_score", "min_relevance", "limit", "candidates", "context_hops",
                         "context_decay")
            if getattr(self, name) is not None
        }
        if self.weights is not None:
            overrides["weights"] = vars(self.weights)
        if self.expansion is not None:
            expansion = dict(vars(self.expansion))
            if expansion["types"] is None:
                del expansion["types"]
            overrides["expansion"] = expansion
        return overrides

    def query_vector(self) -> tuple[float, ...] | None:
        """The query embedding, sent as `embedding` or as the deprecated `vector`."""
        given = either("embedding", self.embedding, "vector", self.vector)
        return tuple(given) if given is not None else None

    def deprecation_notes(self) -> list[str]:
        """What `extensions.notes` tells a caller still using an old spelling, so that
        it learns before the spelling is removed."""
        notes = []
        if self.vector is not None:
            notes.append(f"`vector` is deprecated: send it as `embedding`. {VOCABULARY_NOTE}")
        if self.context is not None:
            notes.append("`context` is deprecated: give agentId, userId, sessionId and taskId"
                         f" on SearchInput itself. {VOCABULARY_NOTE}")
        return notes

    def caller(self) -> dict[str, str]:
        """Who is asking: the ids given on the input, or in the deprecated `context`."""
        top = {name: getattr(self, name) for name in _CALLER_FIELDS
               if getattr(self, name) is not None}
        if self.context is None:
            return top
        if top:
            raise ValidationError(
                "give the caller's ids on SearchInput or in its deprecated context, not both",
                fields=["context", *(model.camel(name) for name in top)])
        return {k: v for k, v in vars(self.context).items() if v is not None}

    def to_filter(self) -> model.MemoryFilter:
        flt = self.filter.to_domain()
        context = model.validated(model.ScopeRef, **self.caller())
        keys = model.visible_scope_keys(context, scope=self.scope, scopes=tuple(self.scopes or ()))
        if keys is None:
            return flt
        return flt.model_copy(update={"scope_keys": keys})


@planned
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


__all__ = [
    "Direction", "ForgetPredicateInput", "MemoryFilterInput", "MemoryInput",
    "MemoryPatchInput", "SearchInput",
]


@planned
@strawberry.input(description="Search defaults of a namespace; the latest configuration wins.")
class NamespaceConfigInput:
    backend: SearchMode | None = strawberry.field(
        default=None, description="Default candidates: LEXICAL (bm25), SEMANTIC (vector), HYBRID."
    )
    scoring: ScoringMode | None = None
    weights: WeightsInput | None = None
    decay_half_life_days: float | None = None
    rrf_k: int | None = None
    embedding_model: str | None = strawberry.field(
        default=None, description="Embed and search this namespace with another model of the"
        " server's provider; its memories are re-embedded in the background while search"
        " keeps using the current vectors. Omitted: unchanged; the server's default model:"
        " back to the default vectors.")
    embedding_dimension: int | None = strawberry.field(
        default=None, description="The model's dimension; the server's by default.")
    auto_supersede: float | None = strawberry.field(
        default=None, description="Confirm update candidates found on write whose confidence"
        " is at least this (0.5 to 1): the older memory becomes SUPERSEDED at once. Unset:"
        " off, candidates wait for confirmUpdate.")

    def to_domain(self) -> NamespaceSettings:
        data = {k: v for k, v in vars(self).items() if v is not None}
        if "weights" in data:
            data["weights"] = vars(data["weights"])
        return model.validated(NamespaceSettings, **data)
