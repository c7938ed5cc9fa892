"""Import a memlattice export (JSONL) into a namespace, in two passes over the file.

1. **Validate** every line (JSON, known `_type`, each kind's rules), check that
   no id already belongs to another namespace and that every relationship's
   endpoints exist in the file or the destination. Any problem stops the
   import before anything is written, naming the line (code VALIDATION, or
   CONFLICT for taken ids). `--dry-run` stops here.
2. **Write** kind by kind in `KINDS` order, in batches of 500, each batch one
   transaction (MERGE by id): a failure mid-way (Neo4j going away) leaves
   whole batches, and importing the same file again completes it without
   duplicating anything.

Ids are global. Importing into another namespace while the source still
exists fails with CONFLICT unless `remap_ids` is set: every id is then
replaced by a UUIDv5 of (destination namespace, old id), deterministically,
so re-importing the copy is still idempotent.

Vectors: an exported embedding is kept when its dimension is the server's
and it came from the server's model (or from a client, `client`); otherwise
the content is embedded again with the server's embedder, in batches.
Side vector spaces (`vectorSpace`, `vector` lines) are carried as they are,
their indexes created on the way in (see memlattice.portability.part_kinds).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memlattice.core.embedding_text import embedding_text
from memlattice.core.errors import Conflict, MemlatticeError, ValidationError
from memlattice.core.model import validate_namespace
from memlattice.embeddings import Embedder
from memlattice.embeddings.memory_vectors import embed_memories
from memlattice.graph.transfer import TransferGraph
from memlattice.portability.exporter import FORMAT, VERSION, NoProgress, Progress
from memlattice.portability.kinds import BY_NAME, KINDS, ImportEnv, Kind, Row

BATCH = 500
_REMAP_NAMESPACE = uuid.UUID("6f1c3c52-1d4e-4d0a-9a57-0d6f3b0e8a11")


@dataclass
class ImportReport:
    namespace: str
    counts: dict[str, int] = field(default_factory=dict)
    reembedded: int = 0
    dry_run: bool = False


def remapper(namespace: str, enabled: bool) -> Callable[[str], str]:
    if not enabled:
        return lambda id: id
    return lambda id: str(uuid.uuid5(_REMAP_NAMESPACE, f"{namespace}\x00{id}"))


def read_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, JSON object) for every non-blank line; a bad line names itself."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValidationError(f"line {number}: not JSON ({exc.msg})",
                                      line=number) from None
            if not isinstance(record, dict):
                raise ValidationError(f"line {number}: not a JSON object", line=number)
            yield number, record


def at_line(number: int, exc: MemlatticeError) -> MemlatticeError:
    """The same error, its message prefixed with the line it is about."""
    return type(exc)(f"line {number}: {exc.message}", line=number, **exc.details)


def read_header(path: Path) -> dict[str, Any]:
    for number, record in read_lines(path):
        if (record.get("_type") != "header" or record.get("format") != FORMAT):
            raise ValidationError(f"line {number}: a memlattice export starts with its header"
                                  f" ({{\"_type\": \"header\", \"format\": \"{FORMAT}\"}})",
                                  line=number)
        if record.get("version") != VERSION:
            raise ValidationError(f"line {number}: export version {record.get('version')} is"
                                  f" not supported (this server reads {VERSION})", line=number)
        return record
    raise ValidationError("the file is empty")


class _Checker:
    """Pass one: cross-record checks, batched against the graph (reads only)."""

    def __init__(self, graph: TransferGraph, namespace: str) -> None:
        self.graph = graph
        self.namespace = namespace
        self.memory_ids: set[str] = set()
        self.pending: dict[str, list[tuple[int, str]]] = {}
        self.endpoints: dict[str, int] = {}

    async def add(self, kind: Kind, number: int, row: Row) -> None:
        if kind.name == "memory":
            self.memory_ids.add(row["id"])
        for id in kind.references(row):
            self.endpoints.setdefault(id, number)
        label = kind.global_ids
        if label is not None:
            batch = self.pending.setdefault(label, [])
            batch.append((number, row["id"]))
            if len(batch) >= BATCH:
                await self.flush(label)

    async def flush(self, label: str) -> None:
        batch = self.pending.pop(label, [])
        if not batch:
            return
        taken = await self.graph.taken_elsewhere(label, self.namespace, [i for _, i in batch])
        for number, id in batch:
            if id in taken:
                raise Conflict(
                    f"line {number}: id {id} already belongs to namespace {taken[id]}; ids are"
                    " global: import with --remap-ids to copy under new ids", line=number, id=id)

    async def finish(self) -> None:
        for label in list(self.pending):
            await self.flush(label)
        missing = [i for i in self.endpoints if i not in self.memory_ids]
        for start in range(0, len(missing), BATCH):
            chunk = missing[start:start + BATCH]
            found = await self.graph.existing_memories(self.namespace, chunk)
            for id in chunk:
                if id not in found:
                    number = self.endpoints[id]
                    raise ValidationError(
                        f"line {number}: names memory {id}, which is neither in"
                        f" the file nor in namespace {self.namespace}", line=number, id=id)


async def import_export(
    graph: TransferGraph, path: Path, *, embedder: Embedder | None, dimension: int,
    namespace: str | None = None, remap_ids: bool = False, dry_run: bool = False,
    progress: Progress | None = None,
) -> ImportReport:
    progress = progress or NoProgress()
    header = read_header(path)
    target = namespace or header.get("namespace")
    try:
        target = validate_namespace(str(target or ""))
    except ValueError as exc:
        raise ValidationError(f"destination namespace: {exc}", field="namespace") from None
    env = ImportEnv(namespace=target, remap=remapper(target, remap_ids))
    report = ImportReport(namespace=target, dry_run=dry_run)

    checker = _Checker(graph, target)
    progress.start("validate", None)
    header_seen = False
    for number, record in read_lines(path):
        if not header_seen:
            header_seen = True
            continue
        kind_name = record.get("_type")
        kind = BY_NAME.get(kind_name) if isinstance(kind_name, str) else None
        if kind is None:
            raise ValidationError(
                f"line {number}: unknown _type {kind_name!r}; expected one of"
                f" {', '.join(BY_NAME)}", line=number)
        try:
            row = kind.decode(record, env)
        except MemlatticeError as exc:
            raise at_line(number, exc) from None
        await checker.add(kind, number, row)
        report.counts[kind.name] = report.counts.get(kind.name, 0) + 1
        progress.advance("validate", 1)
    await checker.finish()
    if dry_run:
        return report

    for kind in KINDS:
        progress.start(kind.name, report.counts.get(kind.name, 0))
        batch: list[Row] = []
        for _, record in read_lines(path):
            if record.get("_type") != kind.name:
                continue
            batch.append(kind.decode(record, env))
            if len(batch) >= BATCH:
                report.reembedded += await _write(kind.name, kind.write, graph, target, batch,
                                                  embedder, dimension)
                progress.advance(kind.name, len(batch))
                batch = []
        if batch:
            report.reembedded += await _write(kind.name, kind.write, graph, target, batch,
                                              embedder, dimension)
            progress.advance(kind.name, len(batch))
    return report


async def _write(kind: str, write: Any, graph: TransferGraph, namespace: str, rows: list[Row],
                 embedder: Embedder | None, dimension: int) -> int:
    reembedded = await fit_vectors(rows, embedder, dimension) if kind == "memory" else 0
    await write(graph, namespace, rows)
    return reembedded


def _reusable(props: dict[str, Any], embedder: Embedder | None, dimension: int) -> bool:
    vector = props.get("embedding")
    if vector is None or len(vector) != dimension:
        return False
    return embedder is None or props.get("embeddingModel") in (embedder.model, "client")


async def fit_vectors(rows: list[Row], embedder: Embedder | None, dimension: int) -> int:
    """Make every memory's vector one this server can index; returns how many were re-made."""
    stale = [r["props"] for r in rows if not _reusable(r["props"], embedder, dimension)]
    if not stale:
        return 0
    if embedder is None:
        for props in stale:  # a vector of another size cannot be indexed here
            for name in ("embedding", "embeddingModel", "embeddingDimension"):
                props.pop(name, None)
        return 0
    vectors = await embed_memories(embedder, [  # as a write embeds them
        embedding_text(str(p["content"]), p.get("metadataJson")) for p in stale])
    for props, vector in zip(stale, vectors):
        props.update(embedding=vector, embeddingModel=embedder.model,
                     embeddingDimension=len(vector))
    return len(stale)
