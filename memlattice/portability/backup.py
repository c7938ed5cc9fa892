"""`memlattice backup`: the whole server into one gzipped JSONL file, while it serves.

Lines, in order (each a JSON object with `t`):

- `header`: `format: "memlattice-backup"`, `version`, `startedAt`, the
  migrations the store had, and the event log's position per namespace when
  the backup began (`eventPositions`: every event up to there is in it);
- `node`: `k` (the node's element id in this database, only a key for the
  relationships), `l` labels, `p` properties (memlattice.portability.backup_values);
- `rel`: `k`, `y` type, `s` / `e` the endpoints' `k`, `p` properties;
- `end` (last): counts per label and type, the memories' primary vectors per
  embedding model that made them (`embeddingModels`, from each memory's
  `embeddingModel`, where it names one; files of earlier releases lack it, and `restore` reads the
  memories themselves), the schema (every constraint and index with the
  statement that creates it) and `finishedAt`. A file without it is refused by
  `restore`.

Every label, type and property the database holds is carried, whatever it is:
nothing here names Memlattice's own. The file is written beside its final
name and renamed when complete. What "consistent" means while writes go on:
graph/backup/reads.py and docs/operating.md.
"""

from __future__ import annotations

import gzip
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from memlattice.core.errors import ValidationError
from memlattice.core.model import utcnow
from memlattice.graph.backup import reads
from memlattice.graph.client import GraphClient
from memlattice.portability.backup_values import embedding_model_of, encode_properties

FORMAT = "memlattice-backup"
VERSION = 1


@dataclass
class BackupReport:
    path: Path
    nodes: int = 0
    relationships: int = 0
    late_nodes: int = 0  # endpoints created during the scan, read after it
    labels: Counter[str] = field(default_factory=Counter)
    types: Counter[str] = field(default_factory=Counter)
    models: Counter[str] = field(default_factory=Counter)  # memories' embeddingModel


def _line(out: IO[str], record: dict[str, Any]) -> None:
    out.write(json.dumps(record, separators=(",", ":"), ensure_ascii=False))
    out.write("\n")


async def back_up(client: GraphClient, path: Path, *, compresslevel: int = 1) -> BackupReport:
    """Write the whole database to `path` (see the module docstring); return the counts.

    A destination that cannot be written is refused before the database is read
    (a backup of a large store takes minutes), and a backup that fails or is cut
    short leaves no file of its own (an earlier file under `path` stays as it was).
    """
    report = BackupReport(path)
    partial = path.with_name(path.name + ".partial")
    _check_destination(path)
    try:
        with gzip.open(partial, "wt", encoding="utf-8", compresslevel=compresslevel) as out:
            await _write(client, out, report)
        os.replace(partial, path)
    except BaseException as exc:
        partial.unlink(missing_ok=True)
        if isinstance(exc, OSError):  # the file's: the driver's errors are translated
            raise ValidationError(f"cannot write the backup to {path}:"
                                  f" {exc.strerror or exc}") from exc
        raise
    return report


def _check_destination(path: Path) -> None:
    """Refuse a `path` that names no file to write: a directory, or one in a folder
    that does not exist (whether it may be written, opening it says)."""
    if path.is_dir():
        raise ValidationError(f"{path} is a directory: name the backup file to write in it")
    if not path.parent.is_dir():
        raise ValidationError(f"{path.parent} is not a directory: create it first")


async def _write(client: GraphClient, out: IO[str], report: BackupReport) -> None:
    _line(out, {"t": "header", "format": FORMAT, "version": VERSION,
                "startedAt": utcnow().isoformat(),
                "migrations": await reads.migration_versions(client),
                "eventPositions": await reads.event_positions(client)})

    async def scan(snapshot: reads.StoreSnapshot) -> None:
        seen: set[str] = set()
        async for node in snapshot.nodes():
            _write_node(out, node, report)
            seen.add(node.key)
        missing: set[str] = set()
        async for rel in snapshot.relationships():
            _line(out, {"t": "rel", "k": rel.key, "y": rel.type, "s": rel.start,
                        "e": rel.end, "p": encode_properties(rel.props)})
            report.relationships += 1
            report.types[rel.type] += 1
            missing.update(k for k in (rel.start, rel.end) if k not in seen)
        late = sorted(missing)
        for at in range(0, len(late), 1000):
            for node in await snapshot.nodes_by_key(late[at:at + 1000]):
                _write_node(out, node, report)
                report.late_nodes += 1

    await reads.in_store_snapshot(client, scan)
    schema = await reads.schema(client)
    _line(out, {"t": "end", "nodes": report.nodes, "relationships": report.relationships,
                "labels": dict(sorted(report.labels.items())),
                "types": dict(sorted(report.types.items())),
                "embeddingModels": dict(sorted(report.models.items())),
                "schema": [{"name": s.name, "statement": s.statement} for s in schema],
                "finishedAt": utcnow().isoformat()})


def _write_node(out: IO[str], node: reads.NodeRow, report: BackupReport) -> None:
    _line(out, {"t": "node", "k": node.key, "l": node.labels,
                "p": encode_properties(node.props)})
    report.nodes += 1
    report.labels.update(node.labels)
    model = embedding_model_of(node.labels, node.props)
    if model is not None:
        report.models[model] += 1
