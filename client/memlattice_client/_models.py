"""What the API returns, as typed, immutable pydantic models.

Field names are the Python spelling of the GraphQL ones (`created_at` for
`createdAt`); datetimes arrive parsed and timezone-aware. Unknown fields are
ignored, so an older client keeps working against a newer server.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class _Result(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True,
                              extra="ignore")


class Scope(str, Enum):
    """Visibility levels, narrowest first."""

    TASK = "TASK"
    SESSION = "SESSION"
    USER = "USER"
    AGENT = "AGENT"


class Status(str, Enum):
    ACTIVE = "ACTIVE"
    SUPERSEDED = "SUPERSEDED"
    FORGOTTEN = "FORGOTTEN"
    RETRACTED = "RETRACTED"


class WriteEffect(str, Enum):
    """What a write_memory/write_memories input did."""

    CREATED = "CREATED"
    REINFORCED = "REINFORCED"
    UNCHANGED = "UNCHANGED"


class Sensitivity(str, Enum):
    """How sensitive a memory is; a key sees up to its clearance."""

    PUBLIC = "PUBLIC"
    LOW = "LOW"
    MEDIUM = "MEDIUM"
    HIGH = "HIGH"
    HYPER = "HYPER"


class EdgeType(str, Enum):
    RELATED = "RELATED"
    DERIVED = "DERIVED"
    CONTRADICTS = "CONTRADICTS"
    SUPPORTS = "SUPPORTS"
    SUPERSEDES = "SUPERSEDES"


class Direction(str, Enum):
    OUT = "OUT"
    IN = "IN"
    BOTH = "BOTH"


class SearchMode(str, Enum):
    LEXICAL = "LEXICAL"
    SEMANTIC = "SEMANTIC"
    HYBRID = "HYBRID"


class ScoringMode(str, Enum):
    SIMILARITY = "SIMILARITY"
    HYBRID = "HYBRID"
    RRF = "RRF"
    FUSION = "FUSION"


class Hint(_Result):
    """A relationship the server suggests for a new record or
    memory (e.g. it may CONTRADICT one, or nearly repeat it)."""

    kind: EdgeType
    memory_id: str
    reason: str
    score: float


class Memory(_Result):
    id: str
    namespace: str
    content: str
    memory_type: str = "note"
    key: str | None = None
    value: Any = None
    summary: str | None = None
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)
    scope: Scope | None = None
    agent_id: str | None = None
    user_id: str | None = None
    session_id: str | None = None
    task_id: str | None = None
    status: Status = Status.ACTIVE
    confidence: float = 1.0
    sensitivity: Sensitivity | None = None
    salience: float | None = None
    source: str | None = None
    source_type: str | None = None
    extraction_method: str | None = None
    provenance: Any = None
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None
    version: int
    access_count: int = 0
    last_accessed_at: datetime | None = None
    embedding_model: str | None = None
    embedding_dimension: int | None = None
    superseded_by: str | None = None
    superseded_at: datetime | None = None
    forgotten_at: datetime | None = None
    # Event time [event_start, event_end): when what it tells of happened, as its
    # content said ("yesterday", "in May 2023"); None when it names no time.
    event_start: datetime | None = None
    event_end: datetime | None = None
    # How often a write of the same content reinforced it instead of storing it again.
    reinforcements: int = 0
    last_reinforced_at: datetime | None = None
    # Only on write_memory/write_memories results: the existing memory this write
    # repeated (the result is that memory, reinforced), or a new memory's near-duplicates.
    duplicate_of: str | None = None
    near_duplicates: tuple[Hint, ...] = ()
    # Only on write results: CREATED (under the id given, if any), REINFORCED (no id,
    # repeated an active memory) or UNCHANGED (the id already held this content).
    written: WriteEffect | None = None


class PathStep(_Result):
    type: EdgeType
    source_id: str
    target_id: str


class SearchHit(_Result):
    """A recalled memory with every part of its score."""

    memory: Memory
    score: float
    similarity_score: float | None = None
    fts_score: float | None = None
    recency_score: float | None = None
    popularity_score: float | None = None
    graph_score: float = 0.0
    boost: float = 1.0
    rerank_score: float | None = None
    similarity_rank: int | None = None
    fts_rank: int | None = None
    expanded: bool = False
    path: tuple[PathStep, ...] = ()
    conflicts: tuple[Memory, ...] = ()
    # Set when a newer memory states another value of what this one states.
    outdated_by: Memory | None = None
    update: MemoryUpdate | None = None


class UpdateStatus(str, Enum):
    CANDIDATE = "CANDIDATE"
    CONFIRMED = "CONFIRMED"
    REJECTED = "REJECTED"


class MemoryUpdate(_Result):
    """A newer memory states another value of an attribute an older one stated."""

    id: str
    status: UpdateStatus
    kind: str
    confidence: float
    reason: str
    subject: str
    attribute: str
    matched: tuple[str, ...] = ()
    created_at: datetime | None = None
    decided_at: datetime | None = None
    decided_by: str | None = None
    note: str | None = None
    # Who stated it (None: the server's rules found it), and the model that disputed
    # a rules' candidate (search ignores it until someone confirms it).
    proposed_by: str | None = None
    disputed_by: str | None = None
    newer: Memory | None = None
    older: Memory | None = None


class ReplacementCandidate(_Result):
    """An earlier memory a memory may replace: one of its nearest (by meaning and by its words), with the
    update link already between them, for the writer to judge (`propose_update`)."""

    memory: Memory
    similarity: float
    update: MemoryUpdate | None = None


class Edge(_Result):
    id: str
    type: EdgeType
    source_id: str
    target_id: str
    created_at: datetime
    metadata: dict[str, Any] = Field(default_factory=dict)


class AuditEntry(_Result):
    id: str
    memory_id: str
    operation: str
    actor: str
    at: datetime
    version: int | None = None
    details: Any = None


class MemoryVersion(_Result):
    """One version of a memory and the system time it was current in, [recorded_from,
    recorded_until); `memory` is None when withheld (above the caller's clearance, or
    an earlier version of a forgotten memory)."""

    version: int
    recorded_from: datetime
    recorded_until: datetime | None = None
    memory: Memory | None = None


class ForgetResult(_Result):
    count: int
    ids: tuple[str, ...] = ()


class LabelCount(_Result):
    label: str
    count: int


class NamespaceWipeResult(_Result):
    """What wipe_namespace removed, or with dry_run what it would remove."""

    namespace: str
    dry_run: bool
    memories: int
    nodes: int
    relationships: int
    by_label: tuple[LabelCount, ...] = ()
    wipe_id: str | None = None


class SupersedeResult(_Result):
    previous: Memory
    current: Memory


class SessionKeys(_Result):
    """A session's entity keys, keyphrases and time spans, derived from its turns."""

    id: str
    entities: list[str] = Field(default_factory=list)
    keyphrases: list[str] = Field(default_factory=list)
    started_at: datetime | None = None
    ended_at: datetime | None = None
    event_start: datetime | None = None
    event_end: datetime | None = None


class IngestedConversation(_Result):
    """The turns of an ingested session, in order; `created` of them written now."""

    session_id: str
    created: int
    memories: list[Memory]
    session: SessionKeys | None = None


class Weights(_Result):
    similarity: float
    fulltext: float
    recency: float
    popularity: float


class NamespaceConfig(_Result):
    namespace: str
    version: int
    backend: SearchMode | None = None
    scoring: ScoringMode | None = None
    weights: Weights | None = None
    decay_half_life_days: float | None = None
    rrf_k: int | None = None
    embedding_model: str | None = None
    embedding_dimension: int | None = None
    auto_supersede: float | None = None
    updated_at: datetime
    updated_by: str


class EmbeddingBuild(str, Enum):
    READY = "READY"
    BUILDING = "BUILDING"
    FAILED = "FAILED"


class EmbeddingStatus(_Result):
    """Which vector space a namespace searches, and how far a re-embed has come."""

    namespace: str
    active_model: str
    active_dimension: int
    target_model: str | None = None
    target_dimension: int | None = None
    status: EmbeddingBuild
    embedded: int
    total: int
    error: str | None = None
    updated_at: datetime | None = None


class SummaryBullet(_Result):
    text: str
    memory_id: str


class Summary(_Result):
    """A bounded extractive summary: bullets, the same as one text, and their memories."""

    bullets: tuple[SummaryBullet, ...]
    text: str
    memories: tuple[Memory, ...] = ()


class MemoryPage(_Result):
    """One page of `memories`: items newest first, and the cursor of the next page."""

    items: tuple[Memory, ...]
    total_count: int
    has_next_page: bool
    end_cursor: str | None = None
