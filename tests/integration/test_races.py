"""Races between two replicas of the service on one Neo4j.

The per-process races (test_update_and_versions, test_supersede) share one
driver and one event loop; production runs several processes. Here two
independently started apps (two drivers, two connection pools) race on the
same memory, so only Neo4j's locking can keep the outcome right: exactly one
winner where one must win, no lost update where all must apply, and an audit
trail that matches what was acknowledged.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from memlattice.core.settings import Settings
from tests.conftest import GraphQLClient
from tests.integration._apps import app_with
from tests.integration._support import GET, SUPERSEDE, UPDATE, WRITE, code, mem


@pytest.fixture(scope="module")
async def replicas(settings: Settings) -> AsyncIterator[list[GraphQLClient]]:
    async with app_with(settings) as a, app_with(settings) as b:
        yield [GraphQLClient(a), GraphQLClient(b)]


async def write(gql: GraphQLClient, namespace: str, content: str) -> dict[str, Any]:
    data = await gql.ok(WRITE, {"input": mem(namespace, content)})
    written: dict[str, Any] = data["writeMemory"]
    return written


async def audit_ops(graph_client: Any, id: str) -> list[str]:
    records = await graph_client.read((
        "MATCH (a:AuditEntry {memoryId: $id}) RETURN a.operation AS op",
        {"id": id}))
    return sorted(r["op"] for r in records)


async def test_supersede_across_replicas_has_one_winner(
    replicas: list[GraphQLClient], graph_client: Any, namespace: str
) -> None:
    old = await write(replicas[0], namespace, "contested across processes")
    bodies = await asyncio.gather(*(
        replicas[i % 2].raw(SUPERSEDE, {"id": old["id"],
                                        "memory": mem(namespace, f"successor {i}")})
        for i in range(10)))
    winners = [b for b in bodies if not b.get("errors")]
    assert len(winners) == 1, [b.get("errors") for b in bodies]
    assert {code(b["errors"][0]) for b in bodies if b.get("errors")} == {"CONFLICT"}
    winner = winners[0]["data"]["supersedeMemory"]["current"]["id"]
    records = await graph_client.read((
        "MATCH (n:Memory)-[:SUPERSEDES]->(:Memory {id: $id}) RETURN collect(n.id) AS ids",
        {"id": old["id"]}))
    assert records[0]["ids"] == [winner]
    count = await graph_client.read((
        "MATCH (m:Memory) WHERE m.id IN $ids RETURN count(m) AS n",
        {"ids": [old["id"], winner]}))
    assert count[0]["n"] == 2
    assert await audit_ops(graph_client, old["id"]) == ["supersede", "write"]


async def test_conditional_update_and_supersede_race_one_winner(
    replicas: list[GraphQLClient], graph_client: Any, namespace: str
) -> None:
    """Updates and supersedes all expecting version 1: exactly one of them wins."""
    m = await write(replicas[0], namespace, "one version, many claimants")
    operations = []
    for i in range(12):
        if i % 3 == 0:
            operations.append(replicas[i % 2].raw(SUPERSEDE, {
                "id": m["id"], "memory": mem(namespace, f"succ {i}"), "v": 1}))
        else:
            operations.append(replicas[i % 2].raw(UPDATE, {
                "ns": namespace, "id": m["id"], "patch": {"summary": f"upd {i}"}, "v": 1}))
    bodies = await asyncio.gather(*operations)
    winners = [b for b in bodies if not b.get("errors")]
    assert len(winners) == 1, [b.get("errors") for b in bodies]
    assert {code(b["errors"][0]) for b in bodies if b.get("errors")} <= {
        "VERSION_CONFLICT", "CONFLICT"}
    final = (await replicas[1].ok(GET, {"ns": namespace, "id": m["id"]}))["memory"]
    assert final["version"] == 2
    ops = await audit_ops(graph_client, m["id"])
    if "updateMemory" in winners[0]["data"]:
        assert final["status"] == "ACTIVE"
        assert final["summary"] == winners[0]["data"]["updateMemory"]["summary"]
        assert ops == ["update", "write"]
    else:
        assert final["status"] == "SUPERSEDED"
        assert ops == ["supersede", "write"]


async def test_unconditional_updates_across_replicas_lose_nothing(
    replicas: list[GraphQLClient], graph_client: Any, namespace: str
) -> None:
    m = await write(replicas[0], namespace, "counter")
    n = 16
    bodies = await asyncio.gather(*(
        replicas[i % 2].raw(UPDATE, {"ns": namespace, "id": m["id"],
                                     "patch": {"summary": f"w{i}"}})
        for i in range(n)))
    assert all(not b.get("errors") for b in bodies), [b.get("errors") for b in bodies]
    versions = sorted(b["data"]["updateMemory"]["version"] for b in bodies)
    assert versions == list(range(2, 2 + n))
    final = (await replicas[0].ok(GET, {"ns": namespace, "id": m["id"]}))["memory"]
    assert final["version"] == 1 + n
    last = max(bodies, key=lambda b: b["data"]["updateMemory"]["version"])
    assert final["summary"] == last["data"]["updateMemory"]["summary"]
    assert await audit_ops(graph_client, m["id"]) == ["update"] * n + ["write"]
