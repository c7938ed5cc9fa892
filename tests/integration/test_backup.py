"""`memlattice backup` while writes go on, restored into another fresh Neo4j (issue 30, item 2).

A private Neo4j gets a rich store: two namespaces with every kind of state the
service writes (versions and revisions, supersede, edges, forget and delete,
facts with evidence, typed records with tool and plan graphs, a conversation
with its session, turns and speakers, consolidation's output, a second
embedding space the namespace searches), API keys, a wiped namespace, the
event log. The service is stopped and the database described. Then a writer
keeps adding memories to a third namespace while the backup runs; the backup
is restored (through the CLI) into a second Neo4j that `memlattice migrate`
prepared, as `./dev up` leaves one. Compared, by content (tests/integration/_stores):
everything the concurrent writes did not touch is in the restored database,
exactly, vectors bit for bit; nothing there is made up; every memory the
writer had been told was stored before the backup began is there; counts per
label and type agree with what the database itself holds; searches answer
the same. A second restore into the now full database is refused.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from memlattice.core.errors import Conflict, ValidationError
from memlattice.core.settings import LimitsSettings, Settings
from memlattice.graph.keys import ApiKeyGraph
from memlattice.graph.migrations import migrate
from memlattice.portability.backup import back_up
from memlattice.portability.restore import restore_store
from memlattice.server.app import runtime_of
from memlattice.services.apikeys import KeySpec, create_key
from tests.conftest import GraphQLClient
from tests.integration._apps import app_with
from tests.integration._knowledge import EPISODE, write_record
from tests.integration._stores import client_for, describe, reset, schema_names
from tests.integration._support import mem
from tests.integration.test_consolidation import consolidate, episode
from tests.integration.test_conversations import INGEST, session
from tests.integration.test_portability import populate as populate_memories
from tests.integration.test_portability_parts import PLAN
from tests.integration.test_portability_parts import populate as populate_parts

WRITE_MANY = "mutation($is: [MemoryInput!]!) { writeMemories(inputs: $is) { id } }"
WIPE = "mutation($ns: String!) { wipeNamespace(namespace: $ns) { wipeId } }"
SEARCH = """query($input: SearchInput!) { search(input: $input) {
  score memory { id content } } }"""
QUERIES = ["Alice", "coffee or tea", "deploy the release", "camping by the lake",
           "marine biologist"]
# What a rich store must hold for the comparison to mean something (the comparison
# itself covers whatever the database holds, listed here or not).
EXPECTED_LABELS = {"Memory", "MemoryRevision", "AuditEntry", "Evidence", "Fact",
                   "NamespaceConfig", "MemoryVector", "VectorSpaceState", "ApiKey",
                   "Session", "Entity", "Event", "EventCounter", "Migration",
                   "NamespaceWipe", "ToolCall", "PlanNode"}
EXPECTED_TYPES = {"SUPPORTS", "RELATED", "SUPERSEDES", "NEXT", "IN_SESSION", "SPOKEN_BY",
                  "HAS_REVISION", "RESTS_ON", "USED_TOOL", "HAS_NODE"}


# A busy machine may take longer than the default 30 s request budget over the
# first requests of a fresh app (the embedder loads, Neo4j warms up).
ROOMY = LimitsSettings(request_timeout_s=600)


async def write_rich_store(settings: Settings, namespaces: tuple[str, str]) -> None:
    a, b = namespaces
    async with app_with(settings, limits=ROOMY) as http:
        gql = GraphQLClient(http)
        runtime = runtime_of(http.app)  # type: ignore[attr-defined]
        for ns in namespaces:
            await populate_memories(gql, ns)
        await populate_parts(gql, runtime, b)  # records, fact, a 64-d side space, built
        await gql.ok(INGEST, {"input": session(a)})
        for outcome in ("success", "success", "failure"):
            await write_record(gql, a, "EPISODIC", episode(outcome), embedding=None)
        await write_record(gql, a, "EPISODIC", EPISODE)
        await write_record(gql, a, "PLAN_GRAPH", PLAN)
        await consolidate(gql, a)
        await gql.ok(WRITE_MANY, {"is": [mem(a + "-gone", "to be wiped")]})
        await gql.ok(WIPE, {"ns": a + "-gone"})
        keys = ApiKeyGraph(runtime.client)
        await create_key(keys, KeySpec(name="ops", namespaces=None, admin=True))
        await create_key(keys, KeySpec(name="crm", namespaces=(a, b + "/*"), can_write=True))


async def searches(settings: Settings, namespaces: tuple[str, ...]) -> list[Any]:
    async with app_with(settings, limits=ROOMY) as http:
        http.headers["x-memlattice-record-access"] = "false"  # reads change nothing
        gql = GraphQLClient(http)
        answers = []
        for ns in namespaces:
            for query in QUERIES:
                for mode in ("HYBRID", "SEMANTIC"):
                    hits = (await gql.ok(SEARCH, {"input": {
                        "filter": {"namespace": ns}, "query": query, "mode": mode,
                        "limit": 5}}))["search"]
                    answers.append((ns, query, mode, [
                        (h["memory"]["id"], h["score"]) for h in hits]))
        return answers


async def keep_writing(http: httpx.AsyncClient, ns: str, stop: asyncio.Event,
                       acknowledged: list[str]) -> None:
    gql = GraphQLClient(http)
    n = 0
    while not stop.is_set():
        batch = [mem(ns, f"concurrent note {n}-{i} zx{n}q{i}") for i in range(5)]
        written = (await gql.ok(WRITE_MANY, {"is": batch}))["writeMemories"]
        acknowledged.extend(m["id"] for m in written)
        n += 1


def cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NEO4J_URI": settings.neo4j.uri or "",
           "NEO4J_USER": settings.neo4j.user,
           "NEO4J_PASSWORD": settings.neo4j.password.get_secret_value()}
    return subprocess.run([sys.executable, "-m", "memlattice.cli", *args], env=env,
                          capture_output=True, text=True, timeout=600, check=False,
                          stdin=subprocess.DEVNULL)


async def test_backup_during_writes_restores_everything_elsewhere(
        spare_settings: Settings, second_spare_settings: Settings, tmp_path: Path) -> None:
    source, target = client_for(spare_settings), client_for(second_spare_settings)
    try:
        await reset(source)
        await reset(target)
        namespaces = ("backup/a", "backup/b")
        busy = "backup/concurrent"
        await write_rich_store(spare_settings, namespaces)
        before = await describe(source)
        assert EXPECTED_LABELS <= set(before.labels), EXPECTED_LABELS - set(before.labels)
        assert EXPECTED_TYPES <= set(before.types), EXPECTED_TYPES - set(before.types)

        path = tmp_path / "store.backup.gz"
        stop, acknowledged = asyncio.Event(), []
        async with app_with(spare_settings, limits=ROOMY) as http:
            writer = asyncio.create_task(keep_writing(http, busy, stop, acknowledged))
            while len(acknowledged) < 20:
                await asyncio.sleep(0.05)
            acknowledged_before_backup = list(acknowledged)
            report = await back_up(source, path)
            backed_up_during = len(acknowledged) - len(acknowledged_before_backup)
            stop.set()
            await writer
        after = await describe(source)
        assert report.nodes >= sum(before.labels.values()) > 0

        await migrate(target, dimension=second_spare_settings.embedding.dimension)  # `./dev up`
        restored_run = cli(second_spare_settings, "restore", str(path))
        assert restored_run.returncode == 0, restored_run.stderr[-3000:]
        assert "restored" in restored_run.stdout and "skipped" not in restored_run.stdout
        restored = await describe(target)

        # Nothing missing: all that no concurrent write touched is there, exactly.
        untouched_nodes = before.nodes & after.nodes
        untouched_rels = before.relationships & after.relationships
        missing = untouched_nodes - restored.nodes
        assert not missing, "missing after restore:\n" + before.why(missing)
        assert not untouched_rels - restored.relationships
        # Nothing made up: every node and relationship was in the source at some point.
        invented = restored.nodes - (before.nodes | after.nodes)
        changed_labels = {label for d in (before.nodes - after.nodes) | (after.nodes - before.nodes)
                          for label in _labels(before, after, d)}
        assert all(set(_labels(restored, restored, d)) <= changed_labels for d in invented), (
            restored.why(invented))
        # Counts per label and type: what the source holds, up to the concurrent writes.
        for label in set(before.labels) | set(after.labels) | set(restored.labels):
            low = min(before.labels[label], after.labels[label])
            high = max(before.labels[label], after.labels[label])
            assert low <= restored.labels[label] <= high, label
        for kind in set(before.types) | set(after.types) | set(restored.types):
            low = min(before.types[kind], after.types[kind])
            high = max(before.types[kind], after.types[kind])
            assert low <= restored.types[kind] <= high, kind
        # Every write acknowledged before the backup began is in it.
        ids = {r["id"] for r in await target.read((
            "MATCH (m:Memory {namespace: $ns}) RETURN m.id AS id", {"ns": busy}))}
        assert set(acknowledged_before_backup) <= ids
        print(f"# backup: {report.nodes} nodes, {report.relationships} relationships;"
              f" {backed_up_during} memories acknowledged during it, {len(ids)} restored")
        # The schema came along (the side space's vector index included), and the
        # restore's temporary label, key and index are gone.
        assert await schema_names(source) <= await schema_names(target)
        assert "MemlatticeRestoring" not in restored.labels

        # The same answers: the same memories in the same order, the same scores
        # (up to recency, which moves with the clock between the two runs).
        there = await searches(second_spare_settings, namespaces)
        here = await searches(spare_settings, namespaces)
        for (*question, hits), (*same_question, expected) in zip(there, here, strict=True):
            assert question == same_question
            assert [id for id, _ in hits] == [id for id, _ in expected], question
            assert [s for _, s in hits] == pytest.approx([s for _, s in expected], abs=1e-3)

        held = await describe(target)
        with pytest.raises(Conflict, match="already holds data"):
            await restore_store(target, path, dimension=second_spare_settings.embedding.dimension,
                                index=second_spare_settings.vector_index)
        assert (await describe(target)).nodes == held.nodes
    finally:
        await source.close()
        await target.close()


def _labels(first: Any, second: Any, description: str) -> list[str]:
    import json

    text = first.node_text.get(description) or second.node_text.get(description)
    return list(json.loads(text)["l"]) if text else []


async def test_a_cut_short_or_foreign_file_is_refused_before_anything_is_written(
        second_spare_settings: Settings, tmp_path: Path) -> None:
    import gzip

    target = client_for(second_spare_settings)
    try:
        await reset(target)
        cut = tmp_path / "cut.gz"
        with gzip.open(cut, "wt") as out:
            out.write('{"t":"header","format":"memlattice-backup","version":1}\n')
            out.write('{"t":"node","k":"1","l":["Memory"],"p":{"id":"x"}}\n')
        foreign = tmp_path / "foreign.gz"
        with gzip.open(foreign, "wt") as out:
            out.write('{"_type":"header","format":"memlattice-export"}\n')
        for path, reason in ((cut, "cut short"), (foreign, "not a Memlattice backup")):
            with pytest.raises(ValidationError, match=reason):
                await restore_store(target, path,
                                    dimension=second_spare_settings.embedding.dimension,
                                    index=second_spare_settings.vector_index)
        assert not (await describe(target)).nodes
        assert not await schema_names(target)  # not even migrated
    finally:
        await target.close()
