"""What `memlattice backup` and `restore` refuse, before they write anything (issue 30, item 2).

An operator's mistakes and a damaged file, on a private Neo4j: a backup named
after a directory or into a folder that does not exist is refused at once and
leaves no `.partial` behind; a restore `--batch` of 0 is a usage error; a file
that lost a node or relationship line, or gained one, after the backup wrote
it is refused (its `end` line counts what it must hold), where it used to be
restored with the loss blamed on deletions during the backup; a backup whose
memories were embedded in another size than the server's is refused
(`DIMENSION_MISMATCH`), where it used to be restored into a vector index that
leaves every restored memory out; so is one whose memories another embedding
model of the same size embedded (`EMBEDDING_MODEL_MISMATCH`, where it used to be
restored and searched with this server's queries), unless `--allow-other-model`
says the operator will re-embed; a database a service serves (it holds a
lease) is refused. The intact file, restored with the right settings, comes
back whole.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from memlattice.core.errors import (
    Conflict,
    DimensionMismatch,
    EmbeddingModelMismatch,
    ValidationError,
)
from memlattice.core.model import utcnow
from memlattice.core.settings import Settings
from memlattice.embeddings.base import configured_identity
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


async def test_another_embedding_model_of_the_same_size_is_refused_unless_allowed(
        second_spare_settings: Settings, tmp_path: Path) -> None:
    """Memories the server embedded record its model ("wordllama/l2_supercat/256"), and
    the backup counts them by model in its `end` line. A server configured with another
    model of the same size refuses the file, naming the settings that restore it as it
    was; `--allow-other-model` restores it and warns that the vectors need re-embedding."""
    settings = second_spare_settings
    client = client_for(settings)
    ours = configured_identity(settings.embedding)
    assert ours == "wordllama/l2_supercat/256"
    try:
        await reset(client)
        async with app_with(settings, limits=ROOMY) as http:
            gql = GraphQLClient(http)
            await gql.ok(WRITE_MANY, {"is": [{"namespace": NS, "content": f"tide table {i}"}
                                             for i in range(3)]})  # embedded by the server
            await gql.ok(WRITE_MANY, {"is": [mem(NS, "a client's own vector")]})
        path = tmp_path / "store.backup.gz"
        await back_up(client, path)
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            end = json.loads(lines.readlines()[-1])
        assert end["embeddingModels"] == {ours: 3, "client": 1}

        await reset(client)
        other = "wordllama/another_model/256"
        with pytest.raises(EmbeddingModelMismatch,
                           match="MEMLATTICE_EMBEDDING_MODEL=l2_supercat") as refused:
            await restore_store(client, path, dimension=256, index=settings.vector_index,
                                model=other)
        assert refused.value.details == {"expected": other, "actual": ours}
        assert not (await describe(client)).nodes and not await schema_names(client)

        run = restore_cli(settings, path, MEMLATTICE_EMBEDDING_MODEL="another_model")
        assert run.returncode == 2, run.stderr[-3000:]
        assert "embedded by another model" in run.stderr and "--allow-other-model" in run.stderr
        assert "Traceback" not in run.stderr
        assert not (await describe(client)).nodes and not await schema_names(client)

        run = restore_cli(settings, path, "--allow-other-model",
                          MEMLATTICE_EMBEDDING_MODEL="another_model")
        assert run.returncode == 0, run.stderr[-3000:]
        assert f"warning: restored memories embedded by another model than this server's" \
               f" {other} (3 by {ours})" in run.stderr
        assert "memlattice reembed" in run.stderr
        assert (await describe(client)).labels["Memory"] == 4

        await reset(client)
        report, _ = await restore_store(client, path, dimension=256,
                                        index=settings.vector_index, model=ours)
        assert report.other_models == {} and report.unnamed_models == 0
        assert (await describe(client)).labels["Memory"] == 4
    finally:
        await client.close()


def restore_cli(settings: Settings, path: Path, *args: str,
                **env: str) -> subprocess.CompletedProcess[str]:
    """`memlattice restore` into `settings`' Neo4j, with `env` over this environment."""
    return subprocess.run(
        [sys.executable, "-m", "memlattice.cli", "restore", str(path), *args],
        env={**os.environ, "NEO4J_URI": settings.neo4j.uri or "",
             "NEO4J_USER": settings.neo4j.user,
             "NEO4J_PASSWORD": settings.neo4j.password.get_secret_value(), **env},
        capture_output=True, text=True, timeout=600, check=False, stdin=subprocess.DEVNULL)
