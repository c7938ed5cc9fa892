"""addEdge / edges / deleteEdge: every type, directions, idempotence, namespace fences."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.conftest import GraphQLClient
from tests.integration._support import (
    ADD_EDGE,
    DELETE_EDGE,
    EDGES,
    WRITE_MANY,
    code,
    count_relationships,
    mem,
    ts,
)

EDGE_TYPES = ["RELATED", "DERIVED", "CONTRADICTS", "SUPPORTS", "SUPERSEDES"]


async def three(gql: GraphQLClient, namespace: str) -> list[str]:
    written = (await gql.ok(WRITE_MANY, {"inputs": [mem(namespace, f"node {i}")
                                                    for i in range(3)]}))["writeMemories"]
    return [m["id"] for m in written]


async def add(gql: GraphQLClient, namespace: str, source: str, target: str, type: str,
              metadata: Any = None) -> dict[str, Any]:
    edge: dict[str, Any] = (await gql.ok(ADD_EDGE, {"input": {
        "namespace": namespace, "sourceId": source, "targetId": target, "type": type,
        "metadata": metadata}}))["addEdge"]
    return edge


async def edges(gql: GraphQLClient, namespace: str, id: str, types: list[str] | None = None,
                direction: str = "BOTH") -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = (await gql.ok(EDGES, {"ns": namespace, "id": id,
                                                        "types": types,
                                                        "direction": direction}))["edges"]
    return found


@pytest.mark.parametrize("edge_type", EDGE_TYPES)
async def test_add_every_edge_type(
    gql: GraphQLClient, namespace: str, graph_client: Any, edge_type: str
) -> None:
    a, b, _ = await three(gql, namespace)
    before = datetime.now(UTC)
    meta = {"why": edge_type.lower(), "weight": 0.5, "nested": {"k": [1, 2]}}
    e = await add(gql, namespace, a, b, edge_type, meta)
    assert e["type"] == edge_type
    assert (e["sourceId"], e["targetId"]) == (a, b)
    assert e["metadata"] == meta
    assert before - timedelta(seconds=2) <= ts(e["createdAt"]) <= datetime.now(
        UTC) + timedelta(seconds=2)
    assert e["id"]
    listed = await edges(gql, namespace, a)
    assert listed == [e]
    rels = await graph_client.read((
        "MATCH (x:Memory {id: $a})-[r]->(y:Memory {id: $b}) RETURN type(r) AS t, r.id AS id",
        {"a": a, "b": b}))
    assert [(r["t"], r["id"]) for r in rels] == [(edge_type, e["id"])]


async def test_metadata_defaults_to_empty(gql: GraphQLClient, namespace: str) -> None:
    a, b, _ = await three(gql, namespace)
    e = await add(gql, namespace, a, b, "RELATED")
    assert e["metadata"] == {}


async def test_directions_and_type_filters(gql: GraphQLClient, namespace: str) -> None:
    a, b, c = await three(gql, namespace)
    ab = await add(gql, namespace, a, b, "RELATED")
    ca = await add(gql, namespace, c, a, "SUPPORTS")
    ac = await add(gql, namespace, a, c, "CONTRADICTS")

    def ids(found: list[dict[str, Any]]) -> set[str]:
        return {e["id"] for e in found}

    assert ids(await edges(gql, namespace, a, direction="OUT")) == {ab["id"], ac["id"]}
    assert ids(await edges(gql, namespace, a, direction="IN")) == {ca["id"]}
    assert ids(await edges(gql, namespace, a, direction="BOTH")) == {ab["id"], ca["id"],
                                                                      ac["id"]}
    assert ids(await edges(gql, namespace, a, types=["SUPPORTS"])) == {ca["id"]}
    assert ids(await edges(gql, namespace, a, types=["SUPPORTS", "RELATED"],
                           direction="OUT")) == {ab["id"]}
    assert await edges(gql, namespace, a, types=["DERIVED"]) == []
    assert ids(await edges(gql, namespace, a, types=[])) == {ab["id"], ca["id"], ac["id"]}
    assert ids(await edges(gql, namespace, b, direction="IN")) == {ab["id"]}
    assert await edges(gql, namespace, b, direction="OUT") == []
    # Listed oldest first.
    assert [e["id"] for e in await edges(gql, namespace, a)] == [ab["id"], ca["id"], ac["id"]]
    # The default direction is BOTH.
    data = await gql.ok("query($ns: String!, $id: ID!) { edges(namespace: $ns, id: $id) { id } }",
                        {"ns": namespace, "id": a})
    assert {e["id"] for e in data["edges"]} == {ab["id"], ca["id"], ac["id"]}


async def test_same_triple_twice_keeps_one_relationship(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    a, b, _ = await three(gql, namespace)
    first = await add(gql, namespace, a, b, "RELATED", {"v": 1})
    second = await add(gql, namespace, a, b, "RELATED", {"v": 2})
    assert second["id"] == first["id"]
    assert second["createdAt"] == first["createdAt"]
    assert second["metadata"] == {"v": 2}
    assert await count_relationships(graph_client, namespace) == 1
    # The reverse direction and another type are different relationships.
    await add(gql, namespace, b, a, "RELATED")
    await add(gql, namespace, a, b, "SUPPORTS")
    assert await count_relationships(graph_client, namespace) == 3
    assert len(await edges(gql, namespace, a)) == 3


async def test_delete_edge(gql: GraphQLClient, namespace: str, graph_client: Any) -> None:
    a, b, c = await three(gql, namespace)
    ab = await add(gql, namespace, a, b, "RELATED")
    ac = await add(gql, namespace, a, c, "RELATED")
    assert (await gql.ok(DELETE_EDGE, {"ns": namespace, "id": ab["id"]}))["deleteEdge"] is True
    assert [e["id"] for e in await edges(gql, namespace, a)] == [ac["id"]]
    assert await count_relationships(graph_client, namespace) == 1
    error = await gql.error(DELETE_EDGE, {"ns": namespace, "id": ab["id"]})
    assert code(error) == "NOT_FOUND"
    error = await gql.error(DELETE_EDGE, {"ns": namespace, "id": "never-was"})
    assert code(error) == "NOT_FOUND"
    # Another namespace cannot delete it.
    error = await gql.error(DELETE_EDGE, {"ns": namespace + "/other", "id": ac["id"]})
    assert code(error) == "NOT_FOUND"
    assert await count_relationships(graph_client, namespace) == 1
    # Re-adding after a delete makes a new relationship.
    again = await add(gql, namespace, a, b, "RELATED")
    assert again["id"] != ab["id"]


async def test_edge_to_another_namespace_is_not_found(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    (mine, _, _) = await three(gql, namespace)
    (theirs, _, _) = await three(gql, namespace + "/other")
    for source, target in ((mine, theirs), (theirs, mine)):
        error = await gql.error(ADD_EDGE, {"input": {"namespace": namespace, "sourceId": source,
                                                     "targetId": target, "type": "RELATED"}})
        assert code(error) == "NOT_FOUND"
    error = await gql.error(ADD_EDGE, {"input": {"namespace": namespace, "sourceId": mine,
                                                 "targetId": "ghost", "type": "RELATED"}})
    assert code(error) == "NOT_FOUND"
    assert await count_relationships(graph_client, namespace) == 0
    assert await count_relationships(graph_client, namespace + "/other") == 0
    error = await gql.error(EDGES, {"ns": namespace + "/other", "id": mine, "types": None,
                                    "direction": "BOTH"})
    assert code(error) == "NOT_FOUND"


async def test_self_edge_is_validation(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    a, _, _ = await three(gql, namespace)
    error = await gql.error(ADD_EDGE, {"input": {"namespace": namespace, "sourceId": a,
                                                 "targetId": a, "type": "RELATED"}})
    assert code(error) == "VALIDATION"
    assert await count_relationships(graph_client, namespace) == 0


async def test_edges_of_unknown_memory_is_not_found(gql: GraphQLClient, namespace: str) -> None:
    error = await gql.error(EDGES, {"ns": namespace, "id": "ghost", "types": None,
                                    "direction": "BOTH"})
    assert code(error) == "NOT_FOUND"


async def test_edge_to_expired_memory_is_not_found(gql: GraphQLClient, namespace: str) -> None:
    past = (datetime.now(UTC) - timedelta(seconds=10)).isoformat()
    written = (await gql.ok(WRITE_MANY, {"inputs": [
        mem(namespace, "live"), mem(namespace, "expired", expiresAt=past)]}))["writeMemories"]
    live, expired = written[0]["id"], written[1]["id"]
    error = await gql.error(ADD_EDGE, {"input": {"namespace": namespace, "sourceId": live,
                                                 "targetId": expired, "type": "RELATED"}})
    assert code(error) == "NOT_FOUND"


async def test_unknown_enum_literal_is_validation(gql: GraphQLClient, namespace: str) -> None:
    a, b, _ = await three(gql, namespace)
    query = ("mutation($ns: String!, $a: ID!, $b: ID!) { addEdge(input: {namespace: $ns,"
             " sourceId: $a, targetId: $b, type: LOVES}) { id } }")
    error = await gql.error(query, {"ns": namespace, "a": a, "b": b})
    assert code(error) == "VALIDATION"
    query = ("query($ns: String!, $a: ID!) { edges(namespace: $ns, id: $a,"
             " direction: SIDEWAYS) { id } }")
    error = await gql.error(query, {"ns": namespace, "a": a})
    assert code(error) == "VALIDATION"


async def test_unknown_enum_variable_is_validation(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    a, b, _ = await three(gql, namespace)
    error = await gql.error(ADD_EDGE, {"input": {"namespace": namespace, "sourceId": a,
                                                 "targetId": b, "type": "LOVES"}})
    assert code(error) == "VALIDATION"


@pytest.mark.parametrize("metadata", ["just text", [1, 2, 3]])
async def test_non_object_edge_metadata_is_validation(
    gql: GraphQLClient, namespace: str, graph_client: Any, metadata: Any
) -> None:
    a, b, _ = await three(gql, namespace)
    error = await gql.error(ADD_EDGE, {"input": {"namespace": namespace, "sourceId": a,
                                                 "targetId": b, "type": "RELATED",
                                                 "metadata": metadata}})
    assert code(error) == "VALIDATION"


async def test_concurrent_adds_of_one_triple_make_one_relationship(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    a, b, _ = await three(gql, namespace)
    bodies = await asyncio.gather(*(gql.raw(ADD_EDGE, {"input": {
        "namespace": namespace, "sourceId": a, "targetId": b, "type": "RELATED",
        "metadata": {"i": i}}}) for i in range(8)))
    assert all(not x.get("errors") for x in bodies), bodies
    assert len({x["data"]["addEdge"]["id"] for x in bodies}) == 1
    assert await count_relationships(graph_client, namespace) == 1
