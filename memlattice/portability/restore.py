"""`memlattice restore`: a `memlattice backup` file into a fresh database.

Three passes over the file: the first only checks it and writes nothing
(memlattice.portability.backup_check: a whole gzip file of this format,
holding what its `end` line counts, with memories of this server's embedding
size and model); the second creates the nodes, the third the relationships, in batches
(graph/backup/writes.py, which first refuses a database holding data or
served by a running service). Then the backed-up schema is recreated where
the database lacks it, the temporary restore keys go, and the current
migrations run, which bring a store of an earlier release up to date
(`restore_store`). A relationship whose endpoint is not in the file (its node
was deleted while the backup read) is skipped and counted.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memlattice.core.errors import ValidationError
from memlattice.core.settings import VectorIndexSettings
from memlattice.graph.backup.writes import StoreLoader
from memlattice.graph.client import GraphClient
from memlattice.graph.migrations import migrate
from memlattice.graph.vector_spaces import VectorSpaceGraph
from memlattice.portability.backup_check import Checked, check
from memlattice.portability.backup_values import BackupValueError, decode_properties


@dataclass
class RestoreReport:
    nodes: int = 0
    relationships: int = 0
    skipped_relationships: int = 0
    schema_created: tuple[str, ...] = ()
    header: dict[str, Any] | None = None
    other_models: dict[str, int] = field(default_factory=dict)
    """Memories embedded by another model than the server's (restored all the same:
    `other_model_ok`), by model."""
    unnamed_models: int = 0
    """Memories whose vector names no model (a store of an early release): unchecked."""


def _records(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValidationError(f"{path}: line {number} is not JSON") from exc
            if not isinstance(record, dict):
                raise ValidationError(f"{path}: line {number} is not an object")
            yield record


async def restore(client: GraphClient, path: Path, *, batch: int = 1000,
                  dimension: int | None = None, model: str | None = None,
                  other_model_ok: bool = False) -> RestoreReport:
    """Restore `path` into the database of `client`, which must hold no data."""
    checked = check(path, dimension=dimension, model=model, other_model_ok=other_model_ok)
    return await _load(client, path, checked, model, batch=batch)


async def _load(client: GraphClient, path: Path, checked: Checked, model: str | None,
                *, batch: int, ignore_leases: bool = False) -> RestoreReport:
    """The nodes, then the relationships, of a file `check` accepted, then its schema."""
    if batch < 1:
        raise ValidationError(f"a batch of {batch}: it must hold at least one node")
    end = checked.end
    report = RestoreReport(header=checked.header, other_models=checked.other_models(model),
                           unnamed_models=checked.unnamed)
    loader = StoreLoader(client)
    await loader.prepare(ignore_leases=ignore_leases)
    for kind in ("node", "rel"):
        rows: list[dict[str, Any]] = []
        for record in _records(path):
            if record.get("t") != kind:
                continue
            try:
                props = decode_properties(record["p"])
            except (BackupValueError, KeyError, TypeError) as exc:
                raise ValidationError(f"{path}: a {kind} with a bad property: {exc}") from exc
            if kind == "node":
                rows.append({"key": record["k"], "labels": record["l"], "props": props})
            else:
                rows.append({"type": record["y"], "start": record["s"], "end": record["e"],
                             "props": props})
            if len(rows) >= batch:
                await _flush(loader, kind, rows, report)
                rows = []
        if rows:
            await _flush(loader, kind, rows, report)
    report.skipped_relationships = int(end["relationships"]) - report.relationships
    created = await loader.create_schema(
        (item["name"], item["statement"]) for item in end.get("schema", [])
        if item.get("statement"))
    report.schema_created = tuple(created)
    await loader.finish()
    return report


async def restore_store(client: GraphClient, path: Path, *, dimension: int,
                        index: VectorIndexSettings, batch: int = 1000,
                        ignore_leases: bool = False, model: str | None = None,
                        other_model_ok: bool = False) -> tuple[RestoreReport, list[int]]:
    """The whole operation `memlattice restore` runs; returns the report and the
    migrations applied after the load (those the backed-up release lacked).

    The database is first migrated as `./dev up` would (so an empty one gets
    this release's indexes: Neo4j does not give a creating statement for every
    index, the vector indexes with filter properties among them), then loaded
    (which replaces the migration records with the backup's), then migrated
    again, and every side vector space the store searches or builds gets its
    index with this server's settings, as an import does. `model` is the identity of
    the server's embedder (None: it embeds nothing, and no model is checked).
    """
    checked = check(path, dimension=dimension, model=model, other_model_ok=other_model_ok)
    await StoreLoader(client).refuse_unless_fresh(ignore_leases=ignore_leases)
    await migrate(client, dimension=dimension, index=index)
    report = await _load(client, path, checked, model, batch=batch,
                         ignore_leases=ignore_leases)
    applied = await migrate(client, dimension=dimension, index=index)
    spaces = VectorSpaceGraph(client)
    for state in [*await spaces.serving_side_spaces(), *await spaces.building()]:
        for space in state.side_spaces:
            await spaces.ensure_index(space, index)
    return report, applied


async def _flush(loader: StoreLoader, kind: str, rows: list[dict[str, Any]],
                 report: RestoreReport) -> None:
    if kind == "node":
        report.nodes += await loader.nodes(rows)
    else:
        report.relationships += await loader.relationships(rows)
