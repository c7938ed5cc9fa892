"""GraphQL object types: read-only views over the graph's records."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.scalars import JSON

from memlattice.core import model
from memlattice.core.records.hints import Hint as DomainHint
from memlattice.core.search_config import NamespaceSettings
from memlattice.core.vector_spaces import BuildStatus
from memlattice.graph.codec import AuditEntry as DomainAuditEntry
from memlattice.graph.codec import Edge as DomainEdge
from memlattice.graph.codec import Memory as DomainMemory
from memlattice.graph.history import MemoryVersion as DomainVersion
from memlattice.graph.namespace_configs import NamespaceConfig as DomainNamespaceConfig
from memlattice.resolvers.context import Info
from memlattice.resolvers.scalars import Vector
from memlattice.services.recall import SearchHit as DomainHit
from memlattice.services.spaces import EmbeddingReport

# strawberry.enum marks a class as a GraphQL enum in place and returns the same class;
# the names are plain aliases, which mypy accepts in annotations (a call's result it
# does not).
Scope = model.Scope
Status = model.Status
Sensitivity = model.Sensitivity
EdgeType = model.EdgeType
Direction = model.Direction
SearchMode = model.SearchMode
ScoringMode = model.ScoringMode
WriteEffect = model.WriteEffect
strawberry.enum(Scope, description="Visibility level, narrowest first.")
strawberry.enum(Status)
strawberry.enum(
    Sensitivity, description="How sensitive a record is, least first; a caller sees"
    " records up to its API key's clearance.")
strawberry.enum(EdgeType, description="Relationship types between memories.")
strawberry.enum(Direction)
strawberry.enum(SearchMode, description="Which indexes give candidates.")
strawberry.enum(ScoringMode, description="How candidates are scored.")
strawberry.enum(WriteEffect, description=(
    "What a writeMemory/writeMemories input did: CREATED stored a new memory (under the"
    " input's id when it named one); REINFORCED (an input without an id) repeated an"
    " active memory, returned reinforced with duplicateOf; UNCHANGED (an input with an"
    " id) repeated the write that stored that id with the same content: nothing was"
    " written, the memory is returned as it is."))


@strawberry.type(description="A memory: one observation, fact or note an agent keeps.")
class Memory:
    id: strawberry.ID
    namespace: str
    key: str | None
    content: str
    memory_type: str
    value: JSON | None
    summary: str | None
    tags: list[str]
    metadata: JSON
    scope: Scope | None
    agent_id: str | None
    user_id: str | None
    session_id: str | None
    task_id: str | None
    status: Status
    confidence: float
    sensitivity: Sensitivity
    salience: float | None
    source: str | None
    source_type: str | None
    extraction_method: str | None
    provenance: JSON | None
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None
    version: int
    access_count: int
    last_accessed_at: datetime | None
    embedding_model: str | None
    embedding_dimension: int | None
    superseded_by: str | None
    superseded_at: datetime | None
    forgotten_at: datetime | None
    event_start: datetime | None = strawberry.field(description=(
        "Event time: when what the memory tells of happened, resolved on write from a"
        " time expression in its content (\"yesterday\", \"in May 2023\") against its"
        " createdAt; the range [eventStart, eventEnd) is a UTC day, week, month or year."
        " Null when the content names no time. Apart from createdAt (when it was"
        " recorded)."))
    event_end: datetime | None = strawberry.field(
        description="The end (exclusive) of the event time; see eventStart.")
    reinforcements: int = strawberry.field(description=(
        "How often a write of the same content (normalised) into the same namespace and"
        " scope reinforced this memory instead of storing it again."))
    last_reinforced_at: datetime | None = strawberry.field(
        description="When such a write last reinforced it.")
    duplicate_of: strawberry.ID | None = strawberry.field(default=None, description=(
        "Only on writeMemory/writeMemories results: the id of the existing memory this"
        " write repeated. The result is then that memory, reinforced, and nothing new was"
        " stored (send allowDuplicate: true to store a copy anyway); null when the write"
        " stored a new memory."))
    near_duplicates: list[Hint] = strawberry.field(default_factory=list, description=(
        "Only on writeMemory/writeMemories results for a new memory: active memories of"
        " the same namespace and scope whose vector is nearly the same (cosine >= 0.92),"
        " reported, never merged: SUPPORTS, or CONTRADICTS when they are worded alike but"
        " one negates the other or they name different numbers. Not checked for a batch"
        " that creates more than 64 memories."))
    written: WriteEffect | None = strawberry.field(default=None, description=(
        "Only on writeMemory/writeMemories results: what this write did (see WriteEffect)."
        " An input with an id is never deduplicated: it is CREATED under that id,"
        " UNCHANGED when the id already holds the same content, or refused with"
        " CONFLICT when the id belongs to another memory."))

    @strawberry.field(description="The stored vector; fetched only when asked for, batched.")
    async def embedding(self, info: Info) -> Vector | None:
        vector = await info.context.embedding_loader(self.namespace).load(str(self.id))
        return None if vector is None else Vector(tuple(vector))

    @classmethod
    def from_domain(cls, m: DomainMemory) -> Memory:
        values: dict[str, Any] = {name: getattr(m, name) for name in _MEMORY_FIELDS}
        values["id"] = strawberry.ID(m.id)
        values["tags"] = list(m.tags)
        values["duplicate_of"] = strawberry.ID(m.duplicate_of) if m.duplicate_of else None
        values["near_duplicates"] = [Hint.from_domain(h) for h in m.near_duplicates]
        return cls(**values)


_MEMORY_FIELDS = [f for f in Memory.__annotations__ if f != "embedding"]


@strawberry.type(description=(
    "A CONTRADICTS or SUPPORTS candidate found on write (records and facts also link it"
    " as a candidate relationship; a plain memory's near-duplicates are only reported)."))
class Hint:
    kind: EdgeType
    memory_id: strawberry.ID
    reason: str
    score: float

    @classmethod
    def from_domain(cls, h: DomainHint) -> Hint:
        return cls(kind=model.EdgeType(h.kind), memory_id=strawberry.ID(h.memory_id),
                   reason=h.reason, score=h.score)


@strawberry.type(description="A relationship between two memories of one namespace.")
class Edge:
    id: strawberry.ID
    type: EdgeType
    source_id: strawberry.ID
    target_id: strawberry.ID
    created_at: datetime
    metadata: JSON

    @classmethod
    def from_domain(cls, e: DomainEdge) -> Edge:
        return cls(id=strawberry.ID(e.id), type=e.type, source_id=strawberry.ID(e.source_id),
                   target_id=strawberry.ID(e.target_id), created_at=e.created_at,
                   metadata=JSON(e.metadata))


@strawberry.type(description="One recorded mutation of a memory.")
class AuditEntry:
    id: strawberry.ID
    memory_id: strawberry.ID
    operation: str
    actor: str = strawberry.field(description=(
        "Who made the change: the API key (`key:<name>#<id>`), then `/` and the actor the"
        " caller declared in `x-memlattice-actor`, if any; without keys, the declared actor."))
    at: datetime
    version: int | None
    details: JSON

    @classmethod
    def from_domain(cls, a: DomainAuditEntry) -> AuditEntry:
        return cls(id=strawberry.ID(a.id), memory_id=strawberry.ID(a.memory_id),
                   operation=a.operation, actor=a.actor, at=a.at, version=a.version,
                   details=JSON(a.details))


@strawberry.type(description="One version of a memory and the system time it was current"
                 " in, [recordedFrom, recordedUntil); `memory` is null when withheld (a"
                 " version above the caller's clearance, or any earlier version of a"
                 " forgotten memory).")
class MemoryVersion:
    version: int
    recorded_from: datetime
    recorded_until: datetime | None = strawberry.field(
        description="When the next version replaced it; null for the current version.")
    memory: Memory | None = strawberry.field(
        description="The memory as it was (its embedding is the current one).")

    @classmethod
    def from_domain(cls, v: DomainVersion) -> MemoryVersion:
        return cls(version=v.version, recorded_from=v.recorded_from,
                   recorded_until=v.recorded_until,
                   memory=Memory.from_domain(v.memory) if v.memory is not None else None)


@strawberry.type
class PageInfo:
    has_next_page: bool
    end_cursor: str | None


@strawberry.type
class MemoryEdge:
    cursor: str
    node: Memory


@strawberry.type(description="A Relay connection over memories, newest first.")
class MemoryConnection:
    edges: list[MemoryEdge]
    page_info: PageInfo
    total_count: int


@strawberry.type(description="One hop of the path that brought an expanded hit.")
class PathStep:
    type: EdgeType
    source_id: strawberry.ID
    target_id: strawberry.ID


@strawberry.type(description="A search result with the parts its score is made of.")
class SearchHit:
    memory: Memory
    score: float = strawberry.field(description=(
        "Orders this search's hits (its scale depends on the scoring mode and the pool)."))
    relevance: float = strawberry.field(description=(
        "Evidence in [0, 1] that the memory answers the query, comparable across modes and"
        " queries: the idf-weighted share of the query's terms it holds (those only in the"
        " turns around it count at their context weight), or its cosine to the query"
        " vector, whichever is stronger. `minRelevance` filters on it."))
    similarity_score: float | None = strawberry.field(description="Cosine, in [0, 1].")
    fts_score: float | None = strawberry.field(description=(
        "BM25 of the fulltext match, from the namespace's own statistics."))
    recency_score: float | None = strawberry.field(description="0.5 ** (age / half-life).")
    popularity_score: float | None
    graph_score: float = strawberry.field(description="Support from graph neighbours.")
    boost: float = strawberry.field(description="Key/tag match factor (1 = none).")
    rerank_score: float | None
    similarity_rank: int | None
    fts_rank: int | None
    expanded: bool = strawberry.field(description="Reached only through the graph.")
    path: list[PathStep]
    conflicts: list[Memory] = strawberry.field(description="Active memories it CONTRADICTS.")

    @classmethod
    def from_domain(cls, h: DomainHit) -> SearchHit:
        s = h.scored
        return cls(
            memory=Memory.from_domain(h.memory), score=s.score, relevance=h.relevance,
            similarity_score=s.similarity,
            fts_score=s.fts, recency_score=s.recency, popularity_score=s.popularity,
            graph_score=s.graph, boost=s.boost, rerank_score=h.rerank_score,
            similarity_rank=s.similarity_rank, fts_rank=s.fts_rank, expanded=s.expanded,
            path=[PathStep(type=model.EdgeType(p.type), source_id=strawberry.ID(p.source),
                           target_id=strawberry.ID(p.target)) for p in s.path],
            conflicts=[Memory.from_domain(c) for c in h.conflicts],
        )


@strawberry.type
class SupersedeResult:
    previous: Memory
    current: Memory


@strawberry.type
class ForgetResult:
    count: int
    ids: list[strawberry.ID]


@strawberry.type
class Weights:
    similarity: float
    fulltext: float
    recency: float
    popularity: float


@strawberry.type(description="A namespace's search defaults and their version.")
class NamespaceConfig:
    namespace: str
    version: int
    backend: SearchMode | None
    scoring: ScoringMode | None
    weights: Weights | None
    decay_half_life_days: float | None
    rrf_k: int | None
    embedding_model: str | None = strawberry.field(
        description="The model this namespace's memories are embedded with (null: the"
        " server's default); see embeddingStatus for a re-embed in progress.")
    embedding_dimension: int | None
    updated_at: datetime
    updated_by: str

    @classmethod
    def from_domain(cls, c: DomainNamespaceConfig) -> NamespaceConfig:
        s = NamespaceSettings(**c.settings)
        return cls(
            namespace=c.namespace, version=c.version, backend=s.backend, scoring=s.scoring,
            weights=Weights(**s.weights.model_dump()) if s.weights else None,
            decay_half_life_days=s.decay_half_life_days, rrf_k=s.rrf_k,
            embedding_model=s.embedding_model, embedding_dimension=s.embedding_dimension,
            updated_at=c.updated_at, updated_by=c.updated_by,
        )


EmbeddingBuild = BuildStatus  # a plain alias for mypy, as the enums above
strawberry.enum(EmbeddingBuild, name="EmbeddingBuild",
                description="State of a namespace's vector space.")


@strawberry.type(description="Which vector space a namespace searches, and any re-embed under"
                 " way. Models are null for the server's default space.")
class EmbeddingStatus:
    namespace: str
    active_model: str
    active_dimension: int
    target_model: str | None
    target_dimension: int | None
    status: EmbeddingBuild
    embedded: int = strawberry.field(
        description="Memories with a vector in the target space (the active one when ready).")
    total: int
    error: str | None
    updated_at: datetime | None

    @classmethod
    def from_domain(cls, r: EmbeddingReport) -> EmbeddingStatus:
        state = r.state
        return cls(
            namespace=state.namespace, active_model=r.active.model,
            active_dimension=r.active.dimension,
            target_model=state.target.model if state.target else None,
            target_dimension=state.target.dimension if state.target else None,
            status=state.status, embedded=r.progress.embedded, total=r.progress.total,
            error=state.error, updated_at=state.updated_at,
        )
