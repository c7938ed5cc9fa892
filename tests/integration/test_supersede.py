"""supersedeMemory: the old memory is kept, retired, linked; exactly one successor wins."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from tests.conftest import GraphQLClient
from tests.integration._support import (
    EDGES,
    GET,
    LIST,
    SEARCH,
    SUPERSEDE,
    WRITE,
    basis,
    code,
    count_memories,
    mem,
    ts,
)


async def write(gql: GraphQLClient, namespace: str, content: str, **fields: Any) -> dict[str, Any]:
    written: dict[str, Any] = (await gql.ok(WRITE, {"input": mem(namespace, content,
                                                                 **fields)}))["writeMemory"]
    return written


async def test_supersede_retires_keeps_and_links(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    old = await write(gql, namespace, "Alice lives in Porto quokka", key="alice.city",
                      embedding=basis(1))
    result = (await gql.ok(SUPERSEDE, {"id": old["id"], "memory": mem(
        namespace, "Alice lives in Lisbon quokka", key="alice.city", embedding=basis(1))}))[
        "supersedeMemory"]
    previous, current = result["previous"], result["current"]

    assert previous["id"] == old["id"]
    assert previous["status"] == "SUPERSEDED"
    assert previous["supersededBy"] == current["id"]
    assert previous["supersededAt"] is not None
    assert previous["version"] == 2
    assert previous["content"] == "Alice lives in Porto quokka"
    assert current["status"] == "ACTIVE" and current["version"] == 1
    assert current["content"] == "Alice lives in Lisbon quokka"
    assert uuid.UUID(current["id"]).version == 7
    assert ts(previous["supersededAt"]) == ts(current["createdAt"])

    # Kept: still readable by id.
    kept = (await gql.ok(GET, {"ns": namespace, "id": old["id"]}))["memory"]
    assert kept["status"] == "SUPERSEDED" and kept["supersededBy"] == current["id"]

    # Gone from the default listing, present when asked for.
    page = (await gql.ok(LIST, {"filter": {"namespace": namespace}, "first": 10}))["memories"]
    assert [e["node"]["id"] for e in page["edges"]] == [current["id"]]
    page = (await gql.ok(LIST, {"filter": {"namespace": namespace, "statuses": ["SUPERSEDED"]},
                                "first": 10}))["memories"]
    assert [e["node"]["id"] for e in page["edges"]] == [old["id"]]

    # Gone from every search mode.
    for mode, extra in (("LEXICAL", {"query": "quokka"}), ("SEMANTIC", {"vector": basis(1)}),
                        ("HYBRID", {"query": "quokka", "vector": basis(1)})):
        hits = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                                "mode": mode, **extra}}))["search"]
        assert [h["memory"]["id"] for h in hits] == [current["id"]], mode

    # A SUPERSEDES relationship from new to old, seen from both ends.
    out = (await gql.ok(EDGES, {"ns": namespace, "id": current["id"], "types": ["SUPERSEDES"],
                                "direction": "OUT"}))["edges"]
    assert [(e["type"], e["sourceId"], e["targetId"]) for e in out] == [
        ("SUPERSEDES", current["id"], old["id"])]
    inbound = (await gql.ok(EDGES, {"ns": namespace, "id": old["id"], "types": None,
                                    "direction": "IN"}))["edges"]
    assert [e["id"] for e in inbound] == [out[0]["id"]]
    assert await count_memories(graph_client, namespace) == 2


async def test_supersede_chain_and_already_superseded_conflict(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    v1 = await write(gql, namespace, "v1")
    v2 = (await gql.ok(SUPERSEDE, {"id": v1["id"], "memory": mem(namespace, "v2")}))[
        "supersedeMemory"]["current"]
    error = await gql.error(SUPERSEDE, {"id": v1["id"], "memory": mem(namespace, "v2 again")})
    assert code(error) == "CONFLICT"
    assert error["extensions"].get("current") == v2["id"]
    assert await count_memories(graph_client, namespace) == 2

    v3 = (await gql.ok(SUPERSEDE, {"id": v2["id"], "memory": mem(namespace, "v3")}))[
        "supersedeMemory"]
    assert v3["previous"]["id"] == v2["id"]
    active = (await gql.ok(LIST, {"filter": {"namespace": namespace}, "first": 10}))["memories"]
    assert [e["node"]["id"] for e in active["edges"]] == [v3["current"]["id"]]
    chain = await graph_client.read((
        "MATCH p = (c:Memory {id: $id})-[:SUPERSEDES*]->(o:Memory) RETURN max(length(p)) AS n",
        {"id": v3["current"]["id"]}))
    assert chain[0]["n"] == 2


async def test_supersede_with_expected_version(gql: GraphQLClient, namespace: str,
                                               graph_client: Any) -> None:
    old = await write(gql, namespace, "versioned")
    error = await gql.error(SUPERSEDE, {"id": old["id"], "memory": mem(namespace, "next"),
                                        "v": 5})
    assert code(error) == "VERSION_CONFLICT"
    assert await count_memories(graph_client, namespace) == 1
    still = (await gql.ok(GET, {"ns": namespace, "id": old["id"]}))["memory"]
    assert still["status"] == "ACTIVE" and still["version"] == 1
    ok = (await gql.ok(SUPERSEDE, {"id": old["id"], "memory": mem(namespace, "next"),
                                   "v": 1}))["supersedeMemory"]
    assert ok["previous"]["version"] == 2


async def test_supersede_errors_write_nothing(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    old = await write(gql, namespace, "target")
    other = await write(gql, namespace, "bystander")
    # Unknown id, or the old memory lives in another namespace.
    error = await gql.error(SUPERSEDE, {"id": "missing", "memory": mem(namespace, "x")})
    assert code(error) == "NOT_FOUND"
    error = await gql.error(SUPERSEDE, {"id": old["id"],
                                        "memory": mem(namespace + "/elsewhere", "x")})
    assert code(error) == "NOT_FOUND"
    # A successor id that is taken.
    error = await gql.error(SUPERSEDE, {"id": old["id"],
                                        "memory": mem(namespace, "x", id=other["id"])})
    assert code(error) == "CONFLICT"
    # Invalid successor input.
    error = await gql.error(SUPERSEDE, {"id": old["id"], "memory": mem(namespace, " ")})
    assert code(error) == "VALIDATION"
    error = await gql.error(SUPERSEDE, {"id": old["id"],
                                        "memory": mem(namespace, "x", embedding=[1.0])})
    assert code(error) == "DIMENSION_MISMATCH"

    assert await count_memories(graph_client, namespace) == 2
    assert await count_memories(graph_client, namespace + "/elsewhere") == 0
    still = (await gql.ok(GET, {"ns": namespace, "id": old["id"]}))["memory"]
    assert still["status"] == "ACTIVE" and still["version"] == 1
    rels = await graph_client.read((
        "MATCH (m:Memory)-[r]-() WHERE m.namespace = $ns RETURN count(r) AS n",
        {"ns": namespace}))
    assert rels[0]["n"] == 0


async def test_concurrent_supersedes_exactly_one_wins(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    old = await write(gql, namespace, "contested")
    n = 8
    bodies = await asyncio.gather(*(
        gql.raw(SUPERSEDE, {"id": old["id"], "memory": mem(namespace, f"successor {i}")})
        for i in range(n)))
    winners = [b for b in bodies if not b.get("errors")]
    losers = [b for b in bodies if b.get("errors")]
    assert len(winners) == 1, bodies
    assert all(code(b["errors"][0]) == "CONFLICT" for b in losers), losers
    winner = winners[0]["data"]["supersedeMemory"]["current"]

    assert await count_memories(graph_client, namespace) == 2
    records = await graph_client.read((
        "MATCH (n:Memory)-[:SUPERSEDES]->(o:Memory {id: $id}) RETURN collect(n.id) AS ids",
        {"id": old["id"]}))
    assert records[0]["ids"] == [winner["id"]]
    final = (await gql.ok(GET, {"ns": namespace, "id": old["id"]}))["memory"]
    assert final["supersededBy"] == winner["id"] and final["version"] == 2
    audits = await graph_client.read((
        "MATCH (a:AuditEntry {memoryId: $id}) RETURN collect(a.operation) AS ops",
        {"id": old["id"]}))
    assert sorted(audits[0]["ops"]) == ["supersede", "write"]


async def test_a_search_over_superseded_memories_ranks_the_successor_first(
    gql: GraphQLClient, namespace: str
) -> None:
    # The old claim matches the query better, word for word, than the one replacing it.
    old = await write(gql, namespace, "Alice lives in Porto, Porto, Porto quokka")
    result = (await gql.ok(SUPERSEDE, {"id": old["id"], "memory": mem(
        namespace, "Alice moved to Lisbon")}))["supersedeMemory"]
    hits = (await gql.ok(SEARCH, {"input": {
        "filter": {"namespace": namespace, "statuses": ["ACTIVE", "SUPERSEDED"]},
        "query": "Alice Porto quokka", "mode": "LEXICAL"}}))["search"]
    ids = [h["memory"]["id"] for h in hits]
    assert ids.index(result["current"]["id"]) < ids.index(old["id"])
