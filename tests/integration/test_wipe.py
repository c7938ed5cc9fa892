"""wipeNamespace and `memlattice wipe` (issue 16, item 7): an admin erases a namespace.

Two namespaces get the same scene (memories, a relationship, a superseded
version, a fact with evidence, a configuration); one is wiped. Only an admin key
may; a dry run counts and changes nothing; the wipe leaves the other namespace
exactly as it was and records itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from memlattice.core.model import utcnow
from memlattice.core.settings import Settings
from memlattice.graph.memories import new_id
from memlattice.graph.wipe import NamespaceWipeGraph
from tests.integration._keys import as_key, make_key
from tests.integration._knowledge import STORE_FACT, fact
from tests.integration._support import ADD_EDGE, SUPERSEDE, WRITE_MANY, code, mem

WIPE = """mutation($ns: String!, $dry: Boolean!) { wipeNamespace(namespace: $ns, dryRun: $dry) {
  namespace dryRun memories nodes relationships byLabel { label count } wipeId } }"""
CONFIGURE = """mutation($ns: String!) { configureNamespace(namespace: $ns,
  input: {scoring: RRF}) { namespace } }"""


async def seed(gql: Any, namespace: str) -> None:
    written = (await gql.ok(WRITE_MANY, {"inputs": [
        mem(namespace, "Alice lives in Lisbon"), mem(namespace, "Alice works at the aquarium"),
        mem(namespace, "Porto is in the north")]}))["writeMemories"]
    a, b, _ = (m["id"] for m in written)
    await gql.ok(ADD_EDGE, {"input": {"namespace": namespace, "sourceId": a, "targetId": b,
                                      "type": "RELATED"}})
    await gql.ok(SUPERSEDE, {"id": a, "memory": mem(namespace, "Alice lives in Porto")})
    await gql.ok(STORE_FACT, {"input": fact(namespace, "policy", "Deploys need two reviews",
                                            evidence=[{"kind": "file", "ref": "README.md"}])})
    await gql.ok(CONFIGURE, {"ns": namespace})


async def snapshot(graph_client: Any, namespace: str) -> dict[str, Any]:
    """Every node of the namespace by id and label, and its relationships."""
    nodes = await graph_client.read((
        "MATCH (n) WHERE n.namespace = $ns RETURN labels(n) AS labels,"
        " coalesce(n.id, n.key, elementId(n)) AS id ORDER BY id", {"ns": namespace}))
    rels = await graph_client.read((
        "MATCH (n)-[r]->() WHERE n.namespace = $ns RETURN type(r) AS type,"
        " elementId(r) AS id ORDER BY id", {"ns": namespace}))
    return {"nodes": [(sorted(r["labels"]), r["id"]) for r in nodes],
            "rels": [(r["type"], r["id"]) for r in rels]}


async def test_only_an_admin_wipes_and_a_dry_run_changes_nothing(
        session_app: Any, graph_client: Any, admin_key: str, namespace: str) -> None:
    other = namespace + "-other"
    writer = await make_key(graph_client, namespace, other, write=True)
    async with as_key(session_app, writer) as gql:
        await seed(gql, namespace)
        await seed(gql, other)
        before, before_other = (await snapshot(graph_client, namespace),
                                await snapshot(graph_client, other))
        for dry in (True, False):
            refused = await gql.error(WIPE, {"ns": namespace, "dry": dry})
            assert code(refused) == "FORBIDDEN" and "admin" in refused["message"]
    assert await snapshot(graph_client, namespace) == before

    async with as_key(session_app, admin_key, actor="ops") as admin:
        dry = (await admin.ok(WIPE, {"ns": namespace, "dry": True}))["wipeNamespace"]
        assert await snapshot(graph_client, namespace) == before
        assert dry["dryRun"] is True and dry["wipeId"] is None
        assert dry["memories"] == 5  # three notes, the successor, the fact
        assert dry["nodes"] == len(before["nodes"])
        assert dry["relationships"] == len(before["rels"]) > 0
        labels = {c["label"]: c["count"] for c in dry["byLabel"]}
        assert {"Memory", "AuditEntry", "Evidence", "NamespaceConfig"} <= set(labels)

        done = (await admin.ok(WIPE, {"ns": namespace, "dry": False}))["wipeNamespace"]
        assert {k: v for k, v in done.items() if k not in ("dryRun", "wipeId")} == {
            k: v for k, v in dry.items() if k not in ("dryRun", "wipeId")}
        assert done["dryRun"] is False and done["wipeId"]

    left = await snapshot(graph_client, namespace)
    assert left == {"nodes": [(["NamespaceWipe"], done["wipeId"])], "rels": []}
    assert await snapshot(graph_client, other) == before_other
    (record,) = await graph_client.read((
        "MATCH (w:NamespaceWipe {id: $id}) RETURN w.actor AS actor, w.detailsJson AS details",
        {"id": done["wipeId"]}))
    assert record["actor"].endswith("/ops") and '"Memory": 5' in record["details"]

    # The namespace starts again from nothing: writes work, defaults apply.
    async with as_key(session_app, writer) as gql:
        await gql.ok(WRITE_MANY, {"inputs": [mem(namespace, "a new start")]})


async def test_wipe_deletes_in_batches(graph_client: Any, gql: Any, namespace: str) -> None:
    await gql.ok(WRITE_MANY, {"inputs": [mem(namespace, f"memory {i}") for i in range(7)]})
    graph = NamespaceWipeGraph(graph_client)
    counts = await graph.wipe(namespace, id=new_id(), actor="test", at=utcnow(), batch=2)
    assert counts.memories == 7 and counts.nodes["AuditEntry"] == 7
    assert (await graph.count(namespace)).nodes == {}


def test_cli_wipe_asks_then_wipes(namespace: str, settings: Settings) -> None:
    import asyncio

    from memlattice.graph.client import GraphClient

    # The suite's own Neo4j, for this process and the CLI's.
    env = {**os.environ, "NEO4J_URI": settings.neo4j.uri or "", "NEO4J_USER": settings.neo4j.user,
           "NEO4J_PASSWORD": settings.neo4j.password.get_secret_value()}

    async def seed_and_count(write: bool) -> int:
        client = GraphClient.connect(settings.neo4j.uri or "", settings.neo4j.user,
                                     settings.neo4j.password.get_secret_value(),
                                     settings.neo4j.database)
        try:
            if write:
                await client.write(("CREATE (:Memory {id: $id, namespace: $ns, content: 'x'})",
                                    {"id": new_id(), "ns": namespace}))
            return (await NamespaceWipeGraph(client).count(namespace)).memories
        finally:
            await client.close()

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "memlattice.cli", "wipe", "--namespace",
                               namespace, *args], capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL, env=env, check=False)

    assert asyncio.run(seed_and_count(True)) == 1
    dry = cli("--dry-run")
    assert dry.returncode == 0 and "1 memories" in dry.stdout, dry.stderr
    unconfirmed = cli()
    assert unconfirmed.returncode == 1 and "--yes" in unconfirmed.stderr
    assert asyncio.run(seed_and_count(False)) == 1
    done = cli("--yes")
    assert done.returncode == 0 and "wiped" in done.stdout, done.stderr
    assert asyncio.run(seed_and_count(False)) == 0
