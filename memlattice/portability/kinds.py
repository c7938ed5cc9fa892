"""The registry of exportable kinds: what a namespace's export is made of.

Each `Kind` knows how to count, page out, validate and write back one record
`_type`. Export and import walk `KINDS` in order (memories before the
relationships and audit entries that name them), so a new node label or
relationship family joins the format by appending one `Kind` here.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pydantic

from memlattice.core.errors import ValidationError
from memlattice.core.model import NAMESPACE_SCOPE_KEY, EdgeType, Scope, Status, bucket_key
from memlattice.core.records.payloads import LABELS, EvidenceRef
from memlattice.graph import history
from memlattice.graph.codec import meta_properties, search_token
from memlattice.graph.projections import TIME_PROPERTIES
from memlattice.graph.record_codec import evidence_rows
from memlattice.graph.transfer import Cursor, TransferGraph
from memlattice.portability import part_kinds as parts
from memlattice.portability.values import from_json, parse_time, to_json

Record = dict[str, Any]
Row = dict[str, Any]
PAGE = 500

# Extra labels a memory node may carry (typed records, facts): nothing else is
# ever set from a file, since a label decides which queries see a node.
MEMORY_LABELS = frozenset({*LABELS.values(), "Fact"})
# Properties recomputed on import from the others (namespace tokens, metadata copies).
DERIVED = ("nsToken", "scopeToken")
_SCOPES = frozenset(s.value for s in Scope)
_MEMORY_JSON = {"valueJson": "value", "metadataJson": "metadata",
                "provenanceJson": "provenance"}
_MEMORY_TYPE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


@dataclass(frozen=True)
class ImportEnv:
    """What decoding needs to know about the destination."""

    namespace: str
    remap: Callable[[str], str]


@dataclass(frozen=True)
class Kind:
    name: str
    count: Callable[[TransferGraph, str], Awaitable[int]]
    export: Callable[[TransferGraph, str], AsyncIterator[list[Record]]]
    decode: Callable[[Record, ImportEnv], Row]
    write: Callable[[TransferGraph, str, list[Row]], Awaitable[int]]
    # The label whose ids are global: importing must not touch another namespace's.
    global_ids: str | None = None
    # The memories a row points at: they must be in the file or the destination.
    references: Callable[[Row], tuple[str, ...]] = lambda row: ()


def _require(record: Mapping[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    value = record.get(name)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise ValidationError(f"{name} is missing or not a {getattr(kind, '__name__', kind)}",
                              field=name)
    if isinstance(value, str) and not value.strip():
        raise ValidationError(f"{name} must not be blank", field=name)
    return value


# ------------------------------------------------------------------ memory


async def _export_memories(graph: TransferGraph, namespace: str) -> AsyncIterator[list[Record]]:
    after: Cursor | None = None
    while True:
        page = await graph.memory_page(namespace, after, PAGE)
        if not page:
            return
        yield [_memory_record(props, labels) for props, labels in page]
        last = page[-1][0]
        after = (last["createdAt"].to_native(), last["id"])


def _memory_record(props: dict[str, Any], labels: list[str]) -> Record:
    kept = {k: v for k, v in props.items()
            if k not in DERIVED and not k.startswith("meta.") and not k.startswith("_")}
    record = {"_type": "memory", **to_json(kept, times=TIME_PROPERTIES, inline=_MEMORY_JSON)}
    if labels:
        record["labels"] = sorted(labels)
    return record


def _decode_memory(record: Record, env: ImportEnv) -> Row:
    id = _require(record, "id", str)
    if len(id) > 128:
        raise ValidationError("id is longer than 128 characters", field="id")
    _require(record, "content", str)
    if record.get("status") not in {s.value for s in Status}:
        raise ValidationError(f"status must be one of {', '.join(s.value for s in Status)}",
                              field="status")
    version = _require(record, "version", int)
    if version < 1:
        raise ValidationError("version must be at least 1", field="version")
    for name in ("createdAt", "updatedAt"):
        _require(record, name, str)
    if not _MEMORY_TYPE.match(str(record.get("memoryType", "note"))):
        raise ValidationError("memoryType must be a lower-case name", field="memoryType")
    metadata = record.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ValidationError("metadata must be a JSON object", field="metadata")
    labels = record.get("labels") or []
    if not isinstance(labels, list) or not set(labels) <= MEMORY_LABELS:
        raise ValidationError(f"labels may only be {', '.join(sorted(MEMORY_LABELS))}",
                              field="labels")
    embedding = record.get("embedding")
    if embedding is not None:
        if not isinstance(embedding, list) or not embedding:
            raise ValidationError("embedding must be a non-empty list of numbers",
                                  field="embedding")
        dimension = record.get("embeddingDimension")
        if dimension is not None and dimension != len(embedding):
            raise ValidationError(f"embedding has {len(embedding)} numbers, embeddingDimension"
                                  f" says {dimension}", field="embedding")
    props = from_json(record, times=TIME_PROPERTIES, inline=_MEMORY_JSON,
                      skip=("_type", "labels", "namespace", *DERIVED))
    props["id"] = env.remap(id)
    if isinstance(props.get("supersededBy"), str):
        props["supersededBy"] = env.remap(props["supersededBy"])
    props["namespace"] = env.namespace
    props["nsToken"] = search_token(env.namespace)
    scope = props.get("scope")
    if scope is None or scope in _SCOPES:
        # The bucket follows from the scope ids, so an export made before buckets
        # nested sessions and tasks under their user comes back in today's buckets.
        props["scopeKey"] = bucket_key(Scope(scope) if scope else None, {
            "agent_id": props.get("agentId"), "user_id": props.get("userId"),
            "session_id": props.get("sessionId"), "task_id": props.get("taskId")})
    props["scopeToken"] = search_token(str(props.get("scopeKey") or NAMESPACE_SCOPE_KEY))
    props.update(meta_properties(metadata))
    props.setdefault("metadataJson", "{}")
    return {"id": props["id"], "props": props, "labels": labels}


async def _write_memories(graph: TransferGraph, namespace: str, rows: list[Row]) -> int:
    return await graph.upsert_memories(namespace, rows)


async def _count_memories(graph: TransferGraph, namespace: str) -> int:
    return await graph.count_memories(namespace)


# ------------------------------------------------------------------ revision

# A revision (graph.history) is a memory's earlier state: the memory's properties
# under `memoryId` (no `id`, no vector), plus the system-time window it was current in.
_REVISION_TIMES = (*TIME_PROPERTIES, "recordedFrom", "recordedUntil")


async def _export_revisions(graph: TransferGraph, namespace: str,
                            ) -> AsyncIterator[list[Record]]:
    after: tuple[str, int] | None = None
    while True:
        page = await graph.client.read(history.revision_page(namespace, after, PAGE))
        if not page:
            return
        yield [_revision_record(dict(r["r"])) for r in page]
        after = (page[-1]["r"]["memoryId"], page[-1]["r"]["version"])


def _revision_record(props: dict[str, Any]) -> Record:
    kept = {k: v for k, v in props.items() if not k.startswith("meta.")}
    return {"_type": "revision",
            **to_json(kept, times=_REVISION_TIMES, inline=_MEMORY_JSON)}


def _decode_revision(record: Record, env: ImportEnv) -> Row:
    """A memory's rules (`_decode_memory`) plus the window; keyed by (memoryId, version)."""
    memory_id = _require(record, "memoryId", str)
    for name in ("recordedFrom", "recordedUntil"):
        _require(record, name, str)
    if record.get("embedding") is not None or record.get("labels"):
        raise ValidationError("a revision holds no embedding and no labels", field="embedding")
    row = _decode_memory({**record, "id": memory_id, "memoryId": None}, env)
    props = row["props"]
    for name in ("id", *DERIVED):
        props.pop(name)
    props["memoryId"] = row["id"]
    for name in ("recordedFrom", "recordedUntil"):
        props[name] = parse_time(record[name], name)
    return {"memoryId": props["memoryId"], "version": props["version"], "props": props}


async def _write_revisions(graph: TransferGraph, namespace: str, rows: list[Row]) -> int:
    return await graph.upsert_revisions(namespace, rows)


async def _count_revisions(graph: TransferGraph, namespace: str) -> int:
    return int((await graph.client.read(history.count_revisions(namespace)))[0]["n"])


# ------------------------------------------------------------------ edge


async def _export_edges(graph: TransferGraph, namespace: str) -> AsyncIterator[list[Record]]:
    after: Cursor | None = None
    while True:
        rows, after = await graph.edge_page(namespace, after, PAGE)
        if after is None:
            return
        if rows:
            yield [{"_type": "edge", "type": r.type, "source": r.source, "target": r.target,
                    **to_json(r.props, times=("createdAt",),
                              inline={"metadataJson": "metadata"})}
                   for r in rows]


def _decode_edge(record: Record, env: ImportEnv) -> Row:
    for name in ("id", "source", "target", "createdAt"):
        _require(record, name, str)
    if record.get("type") not in {t.value for t in EdgeType}:
        raise ValidationError(f"type must be one of {', '.join(t.value for t in EdgeType)}",
                              field="type")
    if not isinstance(record.get("metadata") or {}, dict):
        raise ValidationError("metadata must be a JSON object", field="metadata")
    props = from_json(record, times=("createdAt",), inline={"metadataJson": "metadata"},
                      skip=("_type", "type", "source", "target"))
    props["id"] = env.remap(record["id"])
    props.setdefault("metadataJson", "{}")
    return {"source": env.remap(record["source"]), "target": env.remap(record["target"]),
            "type": record["type"], "props": props}


async def _write_edges(graph: TransferGraph, namespace: str, rows: list[Row]) -> int:
    return await graph.upsert_edges(namespace, rows)


async def _count_edges(graph: TransferGraph, namespace: str) -> int:
    return await graph.count_edges(namespace)


# ------------------------------------------------------------------ audit

# Keys of an audit entry's details that name other records.
_DETAIL_IDS = ("supersedes", "supersededBy", "edge", "target")


async def _export_audit(graph: TransferGraph, namespace: str) -> AsyncIterator[list[Record]]:
    after = ""
    while True:
        page = await graph.audit_page(namespace, after, PAGE)
        if not page:
            return
        yield [{"_type": "audit", **to_json(p, times=("at",), inline={"detailsJson": "details"})}
               for p in page]
        after = page[-1]["id"]


def _decode_audit(record: Record, env: ImportEnv) -> Row:
    for name in ("id", "memoryId", "operation", "actor", "at"):
        _require(record, name, str)
    details = record.get("details")
    if details is not None and not isinstance(details, dict):
        raise ValidationError("details must be a JSON object", field="details")
    if details:
        record = {**record, "details": {
            k: env.remap(v) if k in _DETAIL_IDS and isinstance(v, str) else v
            for k, v in details.items()}}
    props = from_json(record, times=("at",), inline={"detailsJson": "details"},
                      skip=("_type", "namespace"))
    props["id"] = env.remap(record["id"])
    props["memoryId"] = env.remap(record["memoryId"])
    props["namespace"] = env.namespace
    return {"id": props["id"], "props": props}


async def _write_audit(graph: TransferGraph, namespace: str, rows: list[Row]) -> int:
    return await graph.upsert_audit(namespace, rows)


async def _count_audit(graph: TransferGraph, namespace: str) -> int:
    return await graph.count_audit(namespace)


# ------------------------------------------------------------------ evidence


async def _export_evidence(graph: TransferGraph, namespace: str,
                           ) -> AsyncIterator[list[Record]]:
    after: Cursor | None = None
    while True:
        rows, after = await graph.evidence_page(namespace, after, PAGE)
        if after is None:
            return
        if rows:
            yield [{"_type": "evidence", "memory": memory, "kind": kind, "ref": ref}
                   for memory, kind, ref in rows]


def _decode_evidence(record: Record, env: ImportEnv) -> Row:
    memory = _require(record, "memory", str)
    try:
        ref = EvidenceRef.model_validate({"kind": record.get("kind"), "ref": record.get("ref")})
    except pydantic.ValidationError:
        raise ValidationError("evidence needs a kind (1-64 characters) and a ref"
                              " (1-1024 characters)", field="ref") from None
    (row,) = evidence_rows(env.namespace, (ref,))
    return {"memory": env.remap(memory), **row}


async def _write_evidence(graph: TransferGraph, namespace: str, rows: list[Row]) -> int:
    return await graph.upsert_evidence(namespace, rows)


async def _count_evidence(graph: TransferGraph, namespace: str) -> int:
    return await graph.count_evidence(namespace)


KINDS: tuple[Kind, ...] = (
    Kind("memory", _count_memories, _export_memories, _decode_memory, _write_memories,
         global_ids="Memory"),
    Kind("revision", _count_revisions, _export_revisions, _decode_revision, _write_revisions,
         references=lambda row: (row["memoryId"],)),
    Kind("edge", _count_edges, _export_edges, _decode_edge, _write_edges,
         references=lambda row: (row["source"], row["target"])),
    Kind("evidence", _count_evidence, _export_evidence, _decode_evidence, _write_evidence,
         references=lambda row: (row["memory"],)),
    # What hangs off the memories: payload subgraphs, namespace configuration, side
    # vector spaces and their vectors (memlattice.portability.part_kinds).
    Kind("payloadGraph", parts.count_payload_graphs, parts.export_payload_graphs,
         parts.decode_payload_graph, parts.write_payload_graphs,
         references=lambda row: (row["memory"],)),
    Kind("namespaceConfig", parts.count_namespace_configs, parts.export_namespace_config,
         parts.decode_namespace_config, parts.write_namespace_config),
    Kind("vectorSpace", parts.count_vector_spaces, parts.export_vector_space,
         parts.decode_vector_space, parts.write_vector_space),
    Kind("vector", parts.count_vectors, parts.export_vectors, parts.decode_vector,
         parts.write_vectors, references=lambda row: (row["memory"],)),
    Kind("audit", _count_audit, _export_audit, _decode_audit, _write_audit,
         global_ids="AuditEntry"),
)
BY_NAME: dict[str, Kind] = {k.name: k for k in KINDS}
