"""GraphQL object types: read-only views over the graph's records."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import strawberry

if TYPE_CHECKING:
    from memlattice.resolvers.updates import MemoryUpdate, ReplacementCandidate
from strawberry.scalars import JSON

from memlattice.core import model
from memlattice.core.records.hints import Hint as DomainHint
from memlattice.core.search_config import NamespaceSettings
from memlattice.graph.codec import AuditEntry as DomainAuditEntry
from memlattice.graph.codec import Edge as DomainEdge
from memlattice.graph.codec import Memory as DomainMemory
from memlattice.graph.history import MemoryVersion as DomainVersion
from memlattice.graph.namespace_configs import NamespaceConfig as DomainNamespaceConfig
from memlattice.resolvers import enums
from memlattice.resolvers import glossary as g
from memlattice.resolvers.context import Info
from memlattice.resolvers.scalars import Vector
from memlattice.services.recall import SearchHit as DomainHit
from memlattice.services.spaces import EmbeddingReport

# The enums, registered and described in resolvers.enums, under their usual names here.
Scope = enums.Scope
Status = enums.Status
Sensitivity = enums.Sensitivity
EdgeType = enums.EdgeType
Direction = enums.Direction
SearchMode = enums.SearchMode
ScoringMode = enums.ScoringMode
EmbeddingBuild = enums.EmbeddingBuild
WriteEffect = enums.WriteEffect


@strawberry.type(description="A memory: one observation, fact or note an agent keeps.")
class Memory:
    id: strawberry.ID = strawberry.field(description=(
        "Its id: unique across namespaces, so a client cache may key memories by"
        " `__typename` and `id`."))
    namespace: str = strawberry.field(description="The namespace it lives in.")
    key: str | None = strawberry.field(description=g.KEY)
    content: str = strawberry.field(description="The text of the current version.")
    memory_type: str = strawberry.field(description=(
        "A lower-case type name: `note` by default, `fact` for storeFact's facts, the record"
        " types (episodic, working, semantic, competence, plan_graph) for typed records,"
        " `message` for conversation turns, or the writer's own."))
    value: JSON | None = strawberry.field(description=g.VALUE)
    summary: str | None = strawberry.field(description=g.SUMMARY)
    tags: list[str] = strawberry.field(description=g.TAGS)
    metadata: JSON = strawberry.field(description=g.METADATA)
    scope: Scope | None = strawberry.field(description=g.SCOPE)
    agent_id: str | None = strawberry.field(description=g.AGENT_ID)
    user_id: str | None = strawberry.field(description=g.USER_ID)
    session_id: str | None = strawberry.field(description=g.SESSION_ID)
    task_id: str | None = strawberry.field(description=g.TASK_ID)
    status: Status = strawberry.field(description="Where it is in its life (see Status).")
    confidence: float = strawberry.field(description=g.CONFIDENCE)
    sensitivity: Sensitivity = strawberry.field(description=g.SENSITIVITY)
    salience: float | None = strawberry.field(description=g.SALIENCE)
    source: str | None = strawberry.field(description=g.SOURCE)
    source_type: str | None = strawberry.field(description=g.SOURCE_TYPE)
    extraction_method: str | None = strawberry.field(description=g.EXTRACTION_METHOD)
    provenance: JSON | None = strawberry.field(description=g.PROVENANCE)
    created_at: datetime = strawberry.field(description=g.CREATED_AT)
    updated_at: datetime = strawberry.field(description=(
        "When it last changed (system time, UTC); createdAt until it is updated."))
    expires_at: datetime | None = strawberry.field(description=g.EXPIRES_AT)
    version: int = strawberry.field(description=(
        "1 when written, one more with every change; pass it as `expectedVersion` to"
        " update only what you read."))
    access_count: int = strawberry.field(description=(
        "How often search returned it (counted in the background, so it may lag a"
        " moment; listing and reading do not count)."))
    last_accessed_at: datetime | None = strawberry.field(
        description="When search last returned it; null: never.")
    embedding_model: str | None = strawberry.field(
        description="The model its vector was made with; null: the server's default.")
    embedding_dimension: int | None = strawberry.field(
        description="Its vector's length; null when it has no vector yet.")
    superseded_by: str | None = strawberry.field(description=(
        "The id of the memory that superseded it (status SUPERSEDED); null when it was not,"
        " or when the caller may not see the successor."))
    superseded_at: datetime | None = strawberry.field(description="When it was superseded.")
    forgotten_at: datetime | None = strawberry.field(
        description="When it was forgotten or retracted.")
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

    @strawberry.field(description=(
        "Earlier memories this one may replace: the nearest among the active memories of"
        " its namespace written before it that the key may see, by its vector and by its"
        " words (the two orders fused by reciprocal rank), each with the update link"
        " already between them. For the writer (an agent's model, a person) to judge and"
        " answer with proposeUpdate; the rules link only what they can read. Read when"
        " asked (a vector and a fulltext query), never stored."))
    async def may_replace(
        self, info: Info, first: Annotated[int, g.arg("How many, 1 to 20.")] = 3,
    ) -> list[Annotated[ReplacementCandidate, strawberry.lazy("memlattice.resolvers.updates")]]:
        from memlattice.resolvers.updates import replacement_candidates
        return await replacement_candidates(info, self, first)

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
    kind: EdgeType = strawberry.field(description="CONTRADICTS or SUPPORTS.")
    memory_id: strawberry.ID = strawberry.field(
        description="The memory the new one may contradict or support.")
    reason: str = strawberry.field(description=(
        "Why it was found, in words (for example that the two name different numbers)."))
    score: float = strawberry.field(description="Cosine similarity of the two, in [0, 1].")

    @classmethod
    def from_domain(cls, h: DomainHint) -> Hint:
        return cls(kind=model.EdgeType(h.kind), memory_id=strawberry.ID(h.memory_id),
                   reason=h.reason, score=h.score)


@strawberry.type(description="A relationship between two memories of one namespace.")
class Edge:
    id: strawberry.ID = strawberry.field(description="The relationship's id (deleteEdge takes it).")
    type: EdgeType = strawberry.field(description="What the relationship says.")
    source_id: strawberry.ID = strawberry.field(description="The memory it starts from.")
    target_id: strawberry.ID = strawberry.field(description="The memory it points to.")
    created_at: datetime = strawberry.field(description="When it was made (UTC).")
    metadata: JSON = strawberry.field(description="A JSON object of the caller's own.")

    @classmethod
    def from_domain(cls, e: DomainEdge) -> Edge:
        return cls(id=strawberry.ID(e.id), type=e.type, source_id=strawberry.ID(e.source_id),
                   target_id=strawberry.ID(e.target_id), created_at=e.created_at,
                   metadata=JSON(e.metadata))


@strawberry.type(description="One recorded mutation of a memory.")
class AuditEntry:
    id: strawberry.ID = strawberry.field(description="The entry's id.")
    memory_id: strawberry.ID = strawberry.field(description="The memory it is about.")
    operation: str = strawberry.field(description=(
        "What was done, lower case: write, update, supersede, forget, delete, link and"
        " unlink (relationships), or a record revision (fork, contest, retract, merge)."))
    actor: str = strawberry.field(description=(
        "Who made the change: the API key (`key:<name>#<id>`), then `/` and the actor the"
        " caller declared in `x-memlattice-actor`, if any; without keys, the declared actor."))
    at: datetime = strawberry.field(description="When (UTC).")
    version: int | None = strawberry.field(
        description="The memory's version after the change; null when it did not change it.")
    details: JSON = strawberry.field(description=(
        "What changed, as a JSON object (for an update, the fields set)."))

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
    version: int = strawberry.field(description="The version number (1 is the first).")
    recorded_from: datetime = strawberry.field(description="When this version was written.")
    recorded_until: datetime | None = strawberry.field(
        description="When the next version replaced it; null for the current version.")
    memory: Memory | None = strawberry.field(
        description="The memory as it was (its embedding is the current one).")

    @classmethod
    def from_domain(cls, v: DomainVersion) -> MemoryVersion:
        return cls(version=v.version, recorded_from=v.recorded_from,
                   recorded_until=v.recorded_until,
                   memory=Memory.from_domain(v.memory) if v.memory is not None else None)


@strawberry.type(description="One hop of the path that brought an expanded hit.")
class PathStep:
    type: EdgeType = strawberry.field(description="The relationship followed.")
    source_id: strawberry.ID = strawberry.field(description="Its source memory.")
    target_id: strawberry.ID = strawberry.field(description="Its target memory.")


@strawberry.type(description="A search result with the parts its score is made of.")
class SearchHit:
    memory: Memory = strawberry.field(description="The memory found.")
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
    popularity_score: float | None = strawberry.field(description=(
        "From how often search returned it: log(1 + accessCount) over that of the pool's most"
        " returned memory, in [0, 1]; null when not scored."))
    graph_score: float = strawberry.field(description="Support from graph neighbours.")
    boost: float = strawberry.field(description="Key/tag match factor (1 = none).")
    rerank_score: float | None = strawberry.field(
        description="The reranker's score, when `reranker` was given.")
    similarity_rank: int | None = strawberry.field(description=(
        "Its rank (1 = best) among the vector candidates; null when the vector index did not"
        " propose it."))
    fts_rank: int | None = strawberry.field(description=(
        "Its rank (1 = best) among the fulltext candidates; null when the fulltext index did"
        " not propose it."))
    expanded: bool = strawberry.field(description="Reached only through the graph.")
    path: list[PathStep] = strawberry.field(description=(
        "For an expanded hit, the relationships from a candidate to it; empty otherwise."))
    conflicts: list[Memory] = strawberry.field(description="Active memories it CONTRADICTS.")
    outdated_by: Memory | None = strawberry.field(description=(
        "The memory that states a newer value of what this one states (an update found on"
        " write, candidate or confirmed): this hit is outdated. Null when it is current."))
    update: Annotated[MemoryUpdate, strawberry.lazy("memlattice.resolvers.updates")] | None = (
        strawberry.field(description="The update link behind `outdatedBy`."))

    @classmethod
    def from_domain(cls, h: DomainHit) -> SearchHit:
        s = h.scored
        return cls(
            memory=Memory.from_domain(h.memory), score=s.score, relevance=h.relevance,
            similarity_score=s.similarity,
            fts_score=s.fts, recency_score=s.recency, popularity_score=s.popularity,
            graph_score=s.graph, boost=s.boost, rerank_score=h.rerank_score,
            similarity_rank=s.similarity_rank, fts_rank=s.fts_rank, expanded=s.expanded,
            # A newer state reached through an update link (memlattice.search.currency)
            # has no relationship path of its own: the hit it outdates says why.
            path=[PathStep(type=model.EdgeType(p.type), source_id=strawberry.ID(p.source),
                           target_id=strawberry.ID(p.target)) for p in s.path
                  if p.type in _EDGE_TYPES],
            conflicts=[Memory.from_domain(c) for c in h.conflicts],
            outdated_by=Memory.from_domain(h.outdated_by) if h.outdated_by else None,
            update=_update_of(h),
        )


_EDGE_TYPES = frozenset(t.value for t in model.EdgeType)


def _update_of(h: DomainHit) -> Any:
    if h.update is None:
        return None
    from memlattice.resolvers.updates import MemoryUpdate

    return MemoryUpdate.from_domain(h.update)


@strawberry.type(description="What supersedeMemory did: the old memory and its successor.")
class SupersedeResult:
    previous: Memory = strawberry.field(
        description="The memory replaced, now SUPERSEDED (kept for history).")
    current: Memory = strawberry.field(
        description="The new memory; it SUPERSEDES the previous one.")


@strawberry.type(description="What forget tombstoned.")
class ForgetResult:
    count: int = strawberry.field(description="How many memories were forgotten.")
    ids: list[strawberry.ID] = strawberry.field(description="Their ids.")


@strawberry.type(description="HYBRID scoring's weights; each part is normalised to [0, 1]"
                 " first and the weights are relative.")
class Weights:
    similarity: float = strawberry.field(description="Of the vector similarity.")
    fulltext: float = strawberry.field(description="Of the BM25 score.")
    recency: float = strawberry.field(description="Of recency (half-life decay).")
    popularity: float = strawberry.field(description="Of popularity (access counts).")


@strawberry.type(description="A namespace's search defaults and their version.")
class NamespaceConfig:
    namespace: str = strawberry.field(description="The namespace configured.")
    version: int = strawberry.field(description="1 for the first configuration, then one more"
                                    " with every configureNamespace.")
    backend: SearchMode | None = strawberry.field(
        description="Default candidates; null: the server's (HYBRID).")
    scoring: ScoringMode | None = strawberry.field(
        description="Default scoring; null: the server's (FUSION).")
    weights: Weights | None = strawberry.field(
        description="Default HYBRID weights; null: the server's.")
    decay_half_life_days: float | None = strawberry.field(
        description="Default recency half-life in days; null: no recency decay.")
    rrf_k: int | None = strawberry.field(
        description="Default RRF constant k; null: the server's (60).")
    embedding_model: str | None = strawberry.field(
        description="The model this namespace's memories are embedded with (null: the"
        " server's default); see embeddingStatus for a re-embed in progress.")
    embedding_dimension: int | None = strawberry.field(
        description="That model's dimension; null: the server's default.")
    auto_supersede: float | None = strawberry.field(description=(
        "Update candidates at least this confident are confirmed on write (null: off)."))
    updated_at: datetime = strawberry.field(description="When it was last configured.")
    updated_by: str = strawberry.field(description="Who configured it (as AuditEntry.actor).")

    @classmethod
    def from_domain(cls, c: DomainNamespaceConfig) -> NamespaceConfig:
        s = NamespaceSettings(**c.settings)
        return cls(
            namespace=c.namespace, version=c.version, backend=s.backend, scoring=s.scoring,
            weights=Weights(**s.weights.model_dump()) if s.weights else None,
            decay_half_life_days=s.decay_half_life_days, rrf_k=s.rrf_k,
            embedding_model=s.embedding_model, embedding_dimension=s.embedding_dimension,
            auto_supersede=s.auto_supersede, updated_at=c.updated_at, updated_by=c.updated_by,
        )


@strawberry.type(description="Which vector space a namespace searches, and any re-embed under"
                 " way. Models are null for the server's default space.")
class EmbeddingStatus:
    namespace: str = strawberry.field(description="The namespace asked about.")
    active_model: str = strawberry.field(description="The model search uses now.")
    active_dimension: int = strawberry.field(description="Its dimension.")
    target_model: str | None = strawberry.field(description=(
        "The model a re-embed is moving to; null when none is under way."))
    target_dimension: int | None = strawberry.field(description="Its dimension.")
    status: EmbeddingBuild = strawberry.field(description="How the re-embed stands.")
    embedded: int = strawberry.field(
        description="Memories with a vector in the target space (the active one when ready).")
    total: int = strawberry.field(description="Memories of the namespace that need a vector.")
    error: str | None = strawberry.field(description="Why the re-embed FAILED; else null.")
    updated_at: datetime | None = strawberry.field(
        description="When the state last changed; null: never re-embedded.")

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
