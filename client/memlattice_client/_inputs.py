"""What callers send: keyword arguments typed as TypedDicts, turned into GraphQL inputs.

Methods take Python names (`tags_any`, `expected_version`); `to_graphql`
spells them as the API does (`tagsAny`) without touching the caller's own
JSON (`metadata`, `value`, `provenance` keys are kept as given), upper-cases
enum values (`"session"` and `Scope.SESSION` both become `SESSION`) and sends
datetimes as ISO 8601.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import Enum
from typing import Any, TypedDict

from pydantic.alias_generators import to_camel

from memlattice_client._models import (
    Direction,
    EdgeType,
    Scope,
    ScoringMode,
    SearchMode,
    Sensitivity,
    Status,
)

JSONValue = Any
_OPAQUE = frozenset({"metadata", "value", "provenance", "payload"})
_ENUMS = frozenset({"scope", "scopes", "mode", "scoring", "type", "types", "direction",
                    "statuses", "backend", "sensitivity", "kinds"})


class MemoryFields(TypedDict, total=False):
    """Everything a memory may carry besides namespace and content."""

    id: str
    memory_type: str
    key: str
    value: JSONValue
    summary: str
    tags: Sequence[str]
    metadata: Mapping[str, JSONValue]
    scope: Scope | str
    agent_id: str
    user_id: str
    session_id: str
    task_id: str
    confidence: float
    sensitivity: str
    salience: float
    source: str
    source_type: str
    extraction_method: str
    provenance: JSONValue
    expires_at: datetime
    embedding: Sequence[float]
    embedding_model: str
    now: datetime
    # write_memory/write_memories: store a copy even when an active memory of the same
    # namespace and scope says the same (by default the write reinforces that one).
    allow_duplicate: bool


class MemoryInput(MemoryFields):
    """One memory of a `write_memories` batch."""

    namespace: str
    content: str


class PatchFields(TypedDict, total=False):
    """Fields `update_memory` changes; a field given as None is cleared."""

    key: str | None
    content: str
    value: JSONValue
    summary: str | None
    tags: Sequence[str]
    metadata: Mapping[str, JSONValue]
    confidence: float
    sensitivity: str
    salience: float | None
    source: str | None
    source_type: str | None
    extraction_method: str | None
    provenance: JSONValue
    expires_at: datetime | None
    embedding: Sequence[float]
    embedding_model: str


class FilterFields(TypedDict, total=False):
    """Narrowing for `memories` and `search` (the namespace is a separate argument)."""

    scope: Scope | str
    agent_id: str
    user_id: str
    session_id: str
    task_id: str
    statuses: Sequence[Status | str]
    key: str
    tags_any: Sequence[str]
    tags_all: Sequence[str]
    metadata: Mapping[str, JSONValue]
    source_type: str
    created_after: datetime
    created_before: datetime
    event_after: datetime
    event_before: datetime
    memory_types: Sequence[str]
    min_confidence: float


class SearchContext(TypedDict, total=False):
    """Deprecated with `search(context=)`: give these ids to `search` itself."""

    agent_id: str
    user_id: str
    session_id: str
    task_id: str


class WeightsInput(TypedDict, total=False):
    similarity: float
    fulltext: float
    recency: float
    popularity: float


class Expansion(TypedDict, total=False):
    """Graph expansion of recall; see docs/recall.md."""

    max_expand: int
    depth: int
    types: Sequence[EdgeType | str]
    direction: Direction | str
    hop_discount: float
    share: float
    per_seed: int


class SearchOptions(TypedDict, total=False):
    """Everything `search` accepts besides namespace and query. The ids say who is
    asking (the scope chain `scope` / `scopes` read), as a write's say whom a memory
    belongs to; `filter`'s ids are equality conditions on the memories."""

    embedding: Sequence[float]
    filter: FilterFields
    agent_id: str
    user_id: str
    session_id: str
    task_id: str
    scope: Scope | str
    scopes: Sequence[Scope | str]
    preset: str
    mode: SearchMode | str
    scoring: ScoringMode | str
    weights: WeightsInput
    decay_half_life_days: float
    key_boost: float
    tag_boost: float
    use_confidence: bool
    use_salience: bool
    mmr_lambda: float
    expansion: Expansion
    reranker: str
    min_score: float
    limit: int
    candidates: int
    context_hops: int
    context_decay: float
    question_discount: float
    answer_discount: float
    now: datetime
    vector: Sequence[float]  # deprecated: `embedding` (warns)
    context: SearchContext  # deprecated: the ids as keywords (warns)


class Message(TypedDict, total=False):
    """One turn of an `ingest_conversation` session; `content` is required."""

    content: str
    speaker: str
    role: str
    at: datetime
    id: str
    embedding: Sequence[float]
    metadata: Mapping[str, JSONValue]


class ConversationFields(TypedDict, total=False):
    """The scope and labels of an ingested session's turns."""

    scope: Scope | str
    agent_id: str
    user_id: str
    task_id: str
    tags: Sequence[str]
    sensitivity: Sensitivity | str
    source: str


class ForgetPredicate(TypedDict, total=False):
    """`contains` alone, or a conjunction of the other fields."""

    contains: str
    id: str
    key: str
    tag: str
    tags: Sequence[str]
    query: str


class EdgeSpec(TypedDict, total=False):
    """One relationship of an `add_edges` batch; `metadata` is optional."""

    source_id: str
    target_id: str
    type: EdgeType | str
    metadata: Mapping[str, JSONValue]


class NamespaceConfigFields(TypedDict, total=False):
    backend: SearchMode | str
    scoring: ScoringMode | str
    weights: WeightsInput
    decay_half_life_days: float
    rrf_k: int
    embedding_model: str
    embedding_dimension: int
    auto_supersede: float


class RecordFields(TypedDict, total=False):
    """Everything a typed record may carry besides namespace, type and payload."""

    id: str
    key: str
    content: str
    summary: str
    tags: Sequence[str]
    metadata: Mapping[str, JSONValue]
    scope: Scope | str
    agent_id: str
    user_id: str
    session_id: str
    task_id: str
    confidence: float
    sensitivity: str
    salience: float
    source: str
    source_type: str
    extraction_method: str
    provenance: JSONValue
    valid_from: datetime
    valid_to: datetime
    expires_at: datetime
    embedding: Sequence[float]
    embedding_model: str
    now: datetime


class EvidenceInput(TypedDict):
    kind: str
    ref: str


class FactFields(TypedDict, total=False):
    """Everything a fact may carry besides namespace, kind and claim."""

    confidence: float
    evidence: Sequence[EvidenceInput]
    provenance: JSONValue
    valid_until: datetime
    tags: Sequence[str]
    metadata: Mapping[str, JSONValue]
    scope: Scope | str
    agent_id: str
    user_id: str
    session_id: str
    task_id: str
    sensitivity: str
    salience: float
    source: str
    source_type: str
    embedding: Sequence[float]
    embedding_model: str
    now: datetime


class InvalidateFactsPredicate(TypedDict, total=False):
    """Facts to retract: every given field must match."""

    id: str
    key: str
    kind: str
    claim: str
    query: str
    tag: str
    evidence_ref: str


def to_graphql(data: Mapping[str, Any]) -> dict[str, Any]:
    """A GraphQL input object from Python-named fields (see the module docstring)."""
    return {to_camel(name): _value(name, value) for name, value in data.items()}


def _value(name: str, value: Any) -> Any:
    if name in _OPAQUE:
        return value
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return to_graphql(value)
    if isinstance(value, str):
        return value.upper() if name in _ENUMS else value
    if isinstance(value, Sequence):
        return [_value(name, v) for v in value]
    return value
