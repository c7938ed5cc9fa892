"""What `memlattice backup` and `restore` refuse, before they write anything (issue 30, item 2).

An operator's mistakes and a damaged file, on a private Neo4j: a backup named
after a directory or into a folder that does not exist is refused at once and
leaves no `.partial` behind; a restore `--batch` of 0 is a usage error; a file
that lost a node or relationship line, or gained one, after the backup wrote
it is refused (its `end` line counts what it must hold), where it used to be
restored with the loss blamed on deletions during the backup; a backup whose
memories were embedded in another size than the server's is refused
(`DIMENSION_MISMATCH`), where it used to be restored into a vector index that
leaves every restored memory out; a database a service serves (it holds a
lease) is refused. The intact file, restored with the right settings, comes
back whole.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from memlattice.core.errors import Conflict, DimensionMismatch, ValidationError
from memlattice.core.model import utcnow
from memlattice.core.settings import Settings
from memlattice.graph.leases import LeaseGraph
from memlattice.graph.migrations import migrate
from memlattice.portability.backup import back_up
from memlattice.portability.restore import restore_store
from tests.conftest import GraphQLClient
from tests.integration._apps import app_with
from tests.integration._stores import client_for, describe, reset, schema_names
from tests.integration._support import mem
from tests.integration.test_backup import ROOMY, WRITE_MANY, cli
from tests.integration.test_conversations import INGEST, session

NS = "backup-checks"


def rewritten(source: Path, target: Path, change: Callable[[list[str]], list[str]]) -> Path:
    """`source` with its lines changed by `change`, gzipped again (as an edit would)."""
    with gzip.open(source, "rt", encoding="utf-8") as lines:
        kept = change(lines.read().splitlines(keepends=True))
    with gzip.open(target, "wt", encoding="utf-8") as out:
        out.write("".join(kept))
    return target


def without_first(marker: str) -> Callable[[list[str]], list[str]]:
    def change(lines: list[str]) -> list[str]:
        at = next(i for i, line in enumerate(lines) if marker in line)
        return lines[:at] + lines[at + 1:]
    return change


def with_twice(marker: str) -> Callable[[list[str]], list[str]]:
    def change(lines: list[str]) -> list[str]:
        at = next(i for i, line in enumerate(lines) if marker in line)
        return lines[:at + 1] + lines[at:]
    return change


async def test_a_damaged_file_or_another_embedding_size_is_refused_before_anything_is_written(
        second_spare_settings: Settings, tmp_path: Path) -> None:
    settings = second_spare_settings
    client = client_for(settings)
    dimension = settings.embedding.dimension
    try:
        await reset(client)
        async with app_with(settings, limits=ROOMY) as http:
            gql = GraphQLClient(http)
            await gql.ok(WRITE_MANY, {"is": [mem(NS, f"note {i} on the harbour") for i in range(3)]})
            await gql.ok(INGEST, {"input": session(NS)})
        held = await describe(client)
        path = tmp_path / "store.backup.gz"
        await back_up(client, path)

        # A destination that is no file to write: refused, nothing left behind.
        for wrong, reason in ((tmp_path, "is a directory"),
                              (tmp_path / "no-such-folder" / "x.gz", "is not a directory")):
            with pytest.raises(ValidationError, match=reason):
                await back_up(client, wrong)
        assert not list(tmp_path.rglob("*.partial"))
        run = cli(settings, "backup", str(tmp_path))
        assert run.returncode == 2 and "is a directory" in run.stderr, run.stderr[-2000:]
        assert "Traceback" not in run.stderr and not list(tmp_path.rglob("*.partial"))
        run = cli(settings, "restore", str(path), "--batch", "0")
        assert run.returncode == 2 and "--batch" in run.stderr, run.stderr[-2000:]

        await reset(client)
        damaged = {
            "a memory's line lost": without_first('"l":["Memory"]'),
            "a relationship's line lost": without_first('"t":"rel"'),
            "a memory's line twice": with_twice('"l":["Memory"]'),
        }
        for name, change in damaged.items():
            file = rewritten(path, tmp_path / "damaged.gz", change)
            with pytest.raises(ValidationError, match="does not hold what its `end` line counts"):
                await restore_store(client, file, dimension=dimension,
                                    index=settings.vector_index)
            assert not (await describe(client)).nodes, name
            assert not await schema_names(client), name  # not even migrated
        with pytest.raises(DimensionMismatch, match=f"MEMLATTICE_EMBEDDING_DIMENSION={dimension}"):
            await restore_store(client, path, dimension=dimension + 128,
                                index=settings.vector_index)
        assert not (await describe(client)).nodes and not await schema_names(client)

        report, _ = await restore_store(client, path, dimension=dimension,
                                        index=settings.vector_index)
        assert report.skipped_relationships == 0
        restored = await describe(client)
        assert restored.labels["Memory"] == held.labels["Memory"] > 3
        assert held.relationships <= restored.relationships
    finally:
        await client.close()


async def test_a_database_a_service_serves_is_refused(
        second_spare_settings: Settings, tmp_path: Path) -> None:
    """A serving process holds leases (graph.leases), which a restore replaces: one renewed
    during the load collides with the backup's lease of that name and leaves a half-filled
    store, and the service's own writes mix into the restored one. So a database with a
    live lease is refused, before anything is written (a clean shutdown, Ctrl-C or
    `docker compose stop`, releases them); `--ignore-leases` is for a service killed
    outright, whose leases outlive it."""
    settings = second_spare_settings
    client = client_for(settings)
    try:
        await reset(client)
        async with app_with(settings, limits=ROOMY) as http:
            await GraphQLClient(http).ok(WRITE_MANY, {"is": [mem(NS, "a note on the pier")]})
        path = tmp_path / "store.backup.gz"
        await back_up(client, path)
        await reset(client)
        await migrate(client, dimension=settings.embedding.dimension)  # `./dev up`
        leases, now = LeaseGraph(client), utcnow()
        assert await leases.take("event-log-prune", "a-serving-process", now, timedelta(minutes=5))
        with pytest.raises(Conflict, match="serving this database"):
            await restore_store(client, path, dimension=settings.embedding.dimension,
                                index=settings.vector_index)
        assert set((await describe(client)).labels) <= {"Migration", "Lease"}
        run = cli(settings, "restore", str(path), "--ignore-leases")  # none runs: it was killed
        assert run.returncode == 0, run.stderr[-3000:]
        assert (await describe(client)).labels["Memory"] == 1
    finally:
        await client.close()
