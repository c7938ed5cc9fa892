"""How a memory is laid out as Neo4j properties, and read back.

Neo4j properties are scalars or homogeneous lists, so JSON payloads (value,
metadata, provenance) are kept as canonical JSON strings for a lossless round
trip. Each top-level metadata entry is also stored as its own property,
`meta.<key>`, holding the canonical JSON of its value: an equality filter on
any metadata key, whatever the value's type, is then a property comparison
that Cypher can do without parsing JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from memlattice.core.duplicates import content_hash
from memlattice.core.errors import NotFound
from memlattice.core.memory_fields import PATCH_FIELDS, READ_FIELDS
from memlattice.core.model import (
    DEFAULT_SENSITIVITY,
    EdgeType,
    MemoryInput,
    Scope,
    Sensitivity,
    Status,
    WriteEffect,
)
from memlattice.core.records.hints import Hint

META_PREFIX = "meta."


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _integral_floats_as_ints(value: Any) -> Any:
    """1.0 and 1 are the same JSON number to a caller (JavaScript sends 1)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_integral_floats_as_ints(v) for v in value]
    if isinstance(value, dict):
        return {k: _integral_floats_as_ints(v) for k, v in value.items()}
    return value


def meta_value(value: Any) -> str:
    """The comparable form of one metadata value, for storage and for filters alike."""
    return canonical_json(_integral_floats_as_ints(value))


def meta_properties(metadata: Mapping[str, Any]) -> dict[str, str]:
    return {META_PREFIX + key: meta_value(value) for key, value in metadata.items()}


def search_token(value: str) -> str:
    """A single-token stand-in for a namespace or scope bucket in the fulltext index.

    Lucene cannot filter by a property it does not index, and a namespace such as
    `team/alice` would be split by the analyzer; 16 decimal digits of its SHA-256
    survive any analyzer as one token, so a fulltext query can be fenced to the
    caller's namespace and scope chain inside the index (the exact check still
    runs afterwards).
    """
    import hashlib

    return str(int(hashlib.sha256(value.encode()).hexdigest()[:13], 16)).zfill(16)


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_datetime(value: Any) -> datetime | None:
    """Reads epoch microseconds (how queries project times), driver or native datetimes."""
    if value is None:
        return None
    if isinstance(value, int):
        return _EPOCH + timedelta(microseconds=value)
    if hasattr(value, "to_native"):
        native: datetime = value.to_native()
        return native
    assert isinstance(value, datetime)
    return value


# The times a new memory's properties carry (memory_properties).
MEMORY_TIMES = ("createdAt", "updatedAt", "expiresAt", "eventStart", "eventEnd")


def epoch_parts(value: datetime | None) -> list[int] | None:
    """A UTC instant as [epoch seconds, nanosecond], for `projections.instant` to rebuild.

    Why: the driver turns each `datetime` parameter into Bolt's DateTime in pure
    Python (tens of microseconds apiece); a batch of 1000 memories carries 2000 of
    them, which cost more than the batch's GraphQL validation. Two ints pack in C.
    Floor division keeps instants before 1970 exact.
    """
    if value is None:
        return None
    micros = (value - _EPOCH) // timedelta(microseconds=1)
    seconds, rest = divmod(micros, 1_000_000)
    return [seconds, rest * 1000]


@dataclass(frozen=True)
class Memory:
    """A memory as read from the graph (embedding omitted unless asked for)."""

    id: str
    namespace: str
    content: str
    status: Status
    version: int
    created_at: datetime
    updated_at: datetime
    key: str | None = None
    value: Any = None
    summary: str | None = None
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    memory_type: str = "note"
    salience: float | None = None
    scope: Scope | None = None
    agent_id: str | None = None
    user_id: str | None = None
    session_id: str | None = None
    task_id: str | None = None
    confidence: float = 1.0
    sensitivity: Sensitivity = DEFAULT_SENSITIVITY
    source: str | None = None
    source_type: str | None = None
    extraction_method: str | None = None
    provenance: Any = None
    expires_at: datetime | None = None
    access_count: int = 0
    last_accessed_at: datetime | None = None
    embedding_model: str | None = None
    embedding_dimension: int | None = None
    superseded_by: str | None = None
    superseded_at: datetime | None = None
    forgotten_at: datetime | None = None
    # Event time (memlattice.core.event_time): when what it tells of happened, as
    # its text said, apart from when it was recorded (created_at).
    event_start: datetime | None = None
    event_end: datetime | None = None
    # How often a write of the same content reinforced it (graph.duplicates), and when last.
    reinforcements: int = 0
    last_reinforced_at: datetime | None = None
    # Only on a write's result: the memory this write repeated (then it is that memory,
    # reinforced), or the near-duplicates of the memory it created.
    duplicate_of: str | None = None
    near_duplicates: tuple[Hint, ...] = ()
    # Only on a write's result: what the write did (graph.duplicates, graph.explicit_ids).
    written: WriteEffect | None = None


def _scope(value: Any) -> Scope | None:
    return Scope(value) if value and value != "namespace" else None


# How a property is read back, by how it is stored (core.memory_fields.Storage)...
_BY_STORAGE: dict[str, Callable[[Any], Any]] = {
    "plain": lambda value: value, "json": _loads, "time": to_datetime,
    "list": lambda value: tuple(value or ()),
}
# ...unless the field has a type or default of its own.
_BY_FIELD: dict[str, Callable[[Any], Any]] = {
    "status": Status,
    "version": int,
    "metadata": lambda value: _loads(value) or {},
    "memory_type": lambda value: "note" if value is None else value,
    "scope": _scope,
    "confidence": lambda value: 1.0 if value is None else float(value),
    "sensitivity": lambda value: Sensitivity(value or DEFAULT_SENSITIVITY),
    "access_count": lambda value: int(value or 0),
    "reinforcements": lambda value: int(value or 0),
}
# (attribute, property, required, reader) for every field a stored memory has.
_READERS: tuple[tuple[str, str, bool, Callable[[Any], Any]], ...] = tuple(
    (f.name, f.property, f.required, _BY_FIELD.get(f.name) or _BY_STORAGE[f.storage])
    for f in READ_FIELDS if f.property is not None)


# Properties every stored memory has from its first write and never loses. Neo4j
# reads each property of a node at its own moment (read committed), so a node a
# concurrent transaction deletes while a projection reads it comes back torn: the
# properties read after the delete are null. `id` is the first a projection reads
# and `createdAt` comes after every plain property (graph.projections).
def exists(props: Mapping[str, Any]) -> bool:
    """False for the property map of a node a concurrent transaction deleted, before
    or while it was read (a torn read would show a memory with no content). Every
    row of a search passes here, so the three properties every memory has (`id`,
    `content`, `createdAt`) are checked inline rather than in a loop."""
    return (props.get("id") is not None and props.get("content") is not None
            and props.get("createdAt") is not None)


def memory_from_properties(props: Mapping[str, Any]) -> Memory:
    """A `Memory` from a node's property map (times as `to_datetime` reads them); the
    fields and their properties are core.memory_fields', a required one missing is a
    KeyError. A map torn by a concurrent hard delete (`exists`) is NOT_FOUND, which is
    what the read would have answered a moment later, not a memory without content."""
    if not exists(props):
        raise NotFound(f"memory {props.get('id')} was deleted while it was being read",
                       id=props.get("id"))
    values = {name: read(props[prop] if required else props.get(prop))
              for name, prop, required, read in _READERS}
    return Memory(**values)


def memory_properties(
    memory: MemoryInput,
    *,
    id: str,
    now: datetime,
    embedding: list[float] | None,
    embedding_model: str | None,
    event: tuple[datetime | None, datetime | None] = (None, None),
) -> dict[str, Any]:
    """The property map of a new Memory node (None values are not stored); `event`
    is its event time [start, end), when its text names one."""
    props: dict[str, Any] = {
        "id": id,
        "namespace": memory.namespace,
        "key": memory.key,
        "content": memory.content,
        "memoryType": memory.memory_type,
        "salience": memory.salience,
        "valueJson": None if memory.value is None else canonical_json(memory.value),
        "summary": memory.summary,
        "tags": list(memory.tags),
        "metadataJson": canonical_json(memory.metadata),
        "scope": memory.scope.value if memory.scope else None,
        "scopeKey": memory.scope_key(),
        "nsToken": search_token(memory.namespace),
        "scopeToken": search_token(memory.scope_key()),
        "agentId": memory.agent_id,
        "userId": memory.user_id,
        "sessionId": memory.session_id,
        "taskId": memory.task_id,
        "status": Status.ACTIVE.value,
        "confidence": memory.confidence,
        "sensitivity": memory.sensitivity.value,
        "source": memory.source,
        "sourceType": memory.source_type,
        "extractionMethod": memory.extraction_method,
        "provenanceJson": None if memory.provenance is None else canonical_json(memory.provenance),
        "createdAt": now,
        "updatedAt": now,
        "expiresAt": memory.expires_at,
        # What a repeated write is matched on (core.duplicates, graph.duplicates).
        "contentHash": content_hash(memory.content),
        "eventStart": event[0],
        "eventEnd": event[1],
        "version": 1,
        "accessCount": 0,
        "embedding": embedding,
        "embeddingModel": embedding_model if embedding is not None else None,
        "embeddingDimension": len(embedding) if embedding is not None else None,
    }
    props.update(meta_properties(memory.metadata))
    return {k: v for k, v in props.items() if v is not None}


# Patch field (snake_case, as in MemoryPatch) -> node property and encoder. Metadata
# (with its `meta.*` copies) and the vector (with its model and dimension) are set by
# graph.memories.update itself.
_ENCODERS: dict[str, Callable[[Any], Any] | None] = {
    "plain": None, "json": canonical_json, "time": None, "list": list}
PATCHABLE: dict[str, tuple[str, Callable[[Any], Any] | None]] = {
    f.name: (f.property, str if f.name == "sensitivity" else _ENCODERS[f.storage])
    for f in PATCH_FIELDS
    if f.property is not None and f.name not in ("metadata", "embedding", "embedding_model")
}


def patch_properties(changes: Mapping[str, Any]) -> dict[str, Any]:
    """Node properties for an update; a None value clears the property."""
    props: dict[str, Any] = {}
    for name, value in changes.items():
        if name not in PATCHABLE:
            continue
        prop, encode = PATCHABLE[name]
        props[prop] = None if value is None else (encode(value) if encode else value)
    if changes.get("content") is not None:
        props["contentHash"] = content_hash(changes["content"])
    return props


@dataclass(frozen=True)
class Edge:
    id: str
    type: EdgeType
    source_id: str
    target_id: str
    created_at: datetime
    metadata: dict[str, Any] = field(default_factory=dict)


def edge_from_record(rel_props: Mapping[str, Any], rel_type: str, source: str, target: str) -> Edge:
    return Edge(
        id=rel_props["id"],
        type=EdgeType(rel_type),
        source_id=source,
        target_id=target,
        created_at=to_datetime(rel_props["createdAt"]),  # type: ignore[arg-type]
        metadata=_loads(rel_props.get("metadataJson")) or {},
    )


@dataclass(frozen=True)
class AuditEntry:
    id: str
    memory_id: str
    operation: str
    actor: str
    at: datetime
    version: int | None
    details: dict[str, Any] = field(default_factory=dict)


def audit_from_properties(props: Mapping[str, Any],
                          hidden: Collection[str] = ()) -> AuditEntry:
    """An entry as its reader may see it: `hidden` ids its details name are redacted."""
    return AuditEntry(
        id=props["id"],
        memory_id=props["memoryId"],
        operation=props["operation"],
        actor=props["actor"],
        at=to_datetime(props["at"]),  # type: ignore[arg-type]
        version=props.get("version"),
        details=redact_ids(_loads(props.get("detailsJson")) or {}, frozenset(hidden)),
    )


# A relationship to a memory the reader may not see is as secret as that memory.
_EDGE_OF = {"edge": "target"}


def redact_ids(details: dict[str, Any], hidden: frozenset[str]) -> dict[str, Any]:
    """`details` without the ids in `hidden`: a value naming one becomes null, a list
    entry naming one is left out, and a link's `edge` goes with a hidden `target`."""
    if not hidden:
        return details

    def scrub(value: Any) -> Any:
        if isinstance(value, str):
            return None if value in hidden else value
        if isinstance(value, list):
            return [scrub(v) for v in value if not (isinstance(v, str) and v in hidden)]
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items()}
        return value

    redacted: dict[str, Any] = scrub(details)
    for key, owner in _EDGE_OF.items():
        if key in redacted and details.get(owner) in hidden:
            redacted[key] = None
    return redacted
