"""Moving in from other tools: harn's append-only event log and plain JSONL entries.

**harn** (`.harn/memory/<namespace>/events.jsonl`): records
`{"_type": "memory_record", id, namespace, key, value, text, tags, stored_at,
provenance}` map to content (`text`), key, value, tags, createdAt
(`stored_at`) and provenance. Tombstones are `{"_type": "tombstone", id,
deleted_at}`; `memory_tombstone`, `forget` and `delete` are read as
tombstones too, and the time may be `deleted_at`, `forgotten_at`, `at` or
`stored_at` (ISO 8601, or epoch seconds / milliseconds). Lines of other
`_type`s (a log's configuration entries) are skipped and counted.

The log is replayed in order with last-write-wins: a later record with the
same id rewrites the memory in place and bumps its version (the id is the
log's identity for the memory, so it is kept rather than superseded under a
new one); a tombstone forgets it (soft delete, kept for audit). Replaying a
log again changes nothing (see graph.transfer.apply_log).

**entries** (`{id, content, tags, source, created_ms, expires_ms}`): each is
a memory with that source, created at `created_ms`, expiring at
`expires_ms`. Entries that have already expired are imported all the same
(the operator's data stays complete) and, being expired, are never returned.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memlattice.core.errors import Conflict, MemlatticeError, ValidationError
from memlattice.core.model import MemoryInput, utcnow, validate_namespace, validated
from memlattice.graph.codec import memory_properties
from memlattice.graph.prepared_memory import new_id
from memlattice.graph.transfer import TransferGraph
from memlattice.portability.exporter import NoProgress, Progress
from memlattice.portability.importer import BATCH, at_line, read_lines
from memlattice.services.memories import MemoryService

RECORD_TYPES = frozenset({"memory_record", "record", "memory"})
TOMBSTONE_TYPES = frozenset({"tombstone", "memory_tombstone", "forget", "delete"})
_TOMBSTONE_TIMES = ("deleted_at", "forgotten_at", "at", "stored_at")
# Fields a later record rewrites: absent from it means cleared.
_REWRITTEN = ("key", "valueJson", "summary", "provenanceJson", "expiresAt", "source",
              "sourceType")
_ENTRY_IDS = uuid.UUID("2b0c8f3e-52a4-4c55-8f0e-6a4f1d9b7c21")


@dataclass
class LogReport:
    namespace: str
    written: int = 0
    forgotten: int = 0
    records: int = 0
    tombstones: int = 0
    expired: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    dry_run: bool = False


@dataclass(frozen=True)
class LogOp:
    """One replayable step: a put (with its validated input) or a forget."""

    line: int
    id: str
    at: datetime
    input: MemoryInput | None = None


def parse_time(value: Any, name: str) -> datetime:
    """ISO 8601, or a number of epoch seconds (or milliseconds, when that large)."""
    if isinstance(value, bool):
        raise ValidationError(f"{name} is not a time", field=name)
    if isinstance(value, int | float):
        seconds = value / 1000 if abs(value) > 1e11 else value
        return datetime.fromtimestamp(seconds, tz=UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise ValidationError(f"{name} is not a time: {value!r}", field=name) from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise ValidationError(f"{name} is missing or not a time", field=name)


def _id(record: dict[str, Any], *names: str) -> str:
    for name in names:
        value = record.get(name)
        if isinstance(value, str) and value.strip():
            return value
    raise ValidationError(f"{names[0]} is missing", field=names[0])


def harn_ops(path: Path, namespace: str, *, remap_namespace: bool,
             report: LogReport) -> Iterator[LogOp]:
    """Validated steps of one harn log, in file order."""
    for number, record in read_lines(path):
        kind = record.get("_type")
        try:
            if kind in RECORD_TYPES:
                yield _harn_record(number, record, namespace, remap_namespace)
                report.records += 1
            elif kind in TOMBSTONE_TYPES:
                _check_namespace(record, namespace, remap_namespace)
                when = next((record[n] for n in _TOMBSTONE_TIMES if record.get(n) is not None),
                            None)
                at = parse_time(when, "deleted_at") if when is not None else utcnow()
                yield LogOp(line=number, id=_id(record, "id", "record_id", "target"), at=at)
                report.tombstones += 1
            else:
                report.skipped[str(kind)] = report.skipped.get(str(kind), 0) + 1
        except MemlatticeError as exc:
            raise at_line(number, exc) from None


def _check_namespace(record: dict[str, Any], namespace: str, remap: bool) -> None:
    stated = record.get("namespace")
    if stated is not None and stated != namespace and not remap:
        raise ValidationError(
            f"the record belongs to namespace {stated!r}, not {namespace!r}; pass --namespace"
            " to import it there", field="namespace")


def _harn_record(number: int, record: dict[str, Any], namespace: str, remap: bool) -> LogOp:
    _check_namespace(record, namespace, remap)
    id = _id(record, "id")
    at = parse_time(record.get("stored_at"), "stored_at")
    content = record.get("text") if record.get("text") is not None else record.get("content")
    memory = validated(
        MemoryInput, namespace=namespace, id=id, content=content, key=record.get("key"),
        value=record.get("value"), tags=tuple(record.get("tags") or ()),
        provenance=record.get("provenance"), source_type="harn", now=at,
    )
    return LogOp(line=number, id=id, at=at, input=memory)


def entry_ops(path: Path, namespace: str, *, report: LogReport) -> Iterator[LogOp]:
    """Validated JSONL entries `{id, content, tags, source, created_ms, expires_ms}`."""
    now = utcnow()
    for number, record in read_lines(path):
        try:
            at = (parse_time(record["created_ms"], "created_ms")
                  if record.get("created_ms") is not None else now)
            expires = (parse_time(record["expires_ms"], "expires_ms")
                       if record.get("expires_ms") is not None else None)
            id = record.get("id")
            if id is None:  # a stable id, so importing the file again finds the same memory;
                # of the namespace too (ids are global), so one file imports into several
                id = str(uuid.uuid5(_ENTRY_IDS, f"{namespace}\x00{record.get('content')}"
                                                f"\x00{at.isoformat()}"))
            elif not isinstance(id, str | int) or isinstance(id, bool):
                raise ValidationError("id must be a string", field="id")
            memory = validated(
                MemoryInput, namespace=namespace, id=str(id), content=record.get("content"),
                tags=tuple(record.get("tags") or ()), source=record.get("source"),
                expires_at=expires, source_type="entry", now=at,
            )
        except MemlatticeError as exc:
            raise at_line(number, exc) from None
        if expires is not None and expires <= now:
            report.expired += 1
        report.records += 1
        yield LogOp(line=number, id=str(id), at=at, input=memory)


async def apply_ops(
    graph: TransferGraph, service: MemoryService, ops: Callable[[LogReport], Iterator[LogOp]],
    report: LogReport, *, actor: str, dry_run: bool, progress: Progress | None = None,
) -> LogReport:
    """Validate every step first (a bad line or a taken id writes nothing), then replay
    in file order, in batches, each batch one transaction.

    `ops(report)` reads the file afresh each time it is called.
    """
    progress = progress or NoProgress()
    progress.start(f"validate {report.namespace}", None)
    batch: list[LogOp] = []
    for op in ops(report):
        batch.append(op)
        if len(batch) >= BATCH:
            await _check_ids(graph, report.namespace, batch)
            progress.advance(f"validate {report.namespace}", len(batch))
            batch = []
    await _check_ids(graph, report.namespace, batch)
    progress.advance(f"validate {report.namespace}", len(batch))
    report.dry_run = dry_run
    if dry_run:
        return report

    total = report.records + report.tombstones
    progress.start(f"import {report.namespace}", total)
    batch = []
    for op in ops(LogReport(namespace=report.namespace)):
        batch.append(op)
        if len(batch) >= BATCH:
            await _apply(graph, service, batch, report, actor)
            progress.advance(f"import {report.namespace}", len(batch))
            batch = []
    if batch:
        await _apply(graph, service, batch, report, actor)
        progress.advance(f"import {report.namespace}", len(batch))
    return report


async def _apply(graph: TransferGraph, service: MemoryService, batch: list[LogOp],
                 report: LogReport, actor: str) -> None:
    written, forgotten = await graph.apply_log(report.namespace, await _rows(service, batch),
                                               actor)
    report.written += written
    report.forgotten += forgotten


async def _check_ids(graph: TransferGraph, namespace: str, batch: list[LogOp]) -> None:
    if not batch:
        return
    taken = await graph.taken_elsewhere("Memory", namespace, [op.id for op in batch])
    for op in batch:
        if op.id in taken:
            raise Conflict(f"line {op.line}: id {op.id} already belongs to namespace"
                           f" {taken[op.id]}; ids are global", line=op.line, id=op.id)


async def _rows(service: MemoryService, batch: list[LogOp]) -> list[dict[str, Any]]:
    inputs = [op.input for op in batch if op.input is not None]
    prepared = iter(await service.prepare(inputs)) if inputs else iter(())
    rows: list[dict[str, Any]] = []
    for op in batch:
        if op.input is None:
            rows.append({"op": "forget", "id": op.id, "at": op.at, "auditId": new_id()})
            continue
        p = next(prepared)
        props = memory_properties(p.input, id=op.id, now=op.at, embedding=p.embedding,
                                  embedding_model=p.embedding_model)
        for name in ("createdAt", "updatedAt", "version", "accessCount", "status"):
            props.pop(name, None)
        props = {**{name: None for name in _REWRITTEN}, **props}
        said = {k: v for k, v in props.items()
                if k not in ("embedding", "embeddingModel", "embeddingDimension")}
        digest = hashlib.sha256(
            json.dumps(said, sort_keys=True, default=str).encode()).hexdigest()
        props["importDigest"] = digest
        rows.append({"op": "put", "id": op.id, "at": op.at, "props": props, "digest": digest,
                     "auditId": new_id()})
    return rows


def harn_logs(path: Path, namespace: str | None) -> list[tuple[Path, str]]:
    """(events.jsonl, namespace) pairs for a log file or a `.harn` directory."""
    if path.is_file():
        derived = _namespace_from_path(path)
        target = namespace or derived
        if target is None:
            target = _first_namespace(path)
        return [(path, validate(target))]
    root = path / "memory" if (path / "memory").is_dir() else path
    if namespace is not None:
        log = root / namespace / "events.jsonl"
        if not log.is_file():
            raise ValidationError(f"no harn log for namespace {namespace} at {log}")
        return [(log, validate(namespace))]
    logs = sorted(root.rglob("events.jsonl"))
    if not logs:
        raise ValidationError(f"no events.jsonl under {root}")
    return [(log, validate(log.parent.relative_to(root).as_posix())) for log in logs]


def validate(namespace: str | None) -> str:
    try:
        return validate_namespace(namespace or "")
    except ValueError as exc:
        raise ValidationError(f"namespace: {exc}", field="namespace") from None


def _namespace_from_path(path: Path) -> str | None:
    parts = path.resolve().parts
    if "memory" in parts and parts[-1] == "events.jsonl":
        index = len(parts) - 1 - parts[::-1].index("memory")
        if index >= 1 and parts[index - 1] == ".harn" and index + 1 < len(parts) - 1:
            return "/".join(parts[index + 1:-1])
    return None


def _first_namespace(path: Path) -> str | None:
    for _, record in read_lines(path):
        if isinstance(record.get("namespace"), str):
            return str(record["namespace"])
    raise ValidationError(f"{path}: no namespace in the path or the records; pass --namespace")
