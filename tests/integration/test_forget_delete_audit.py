"""forget (tombstones), deleteMemory (hard erase) and the audit trail."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.conftest import GraphQLClient
from tests.integration._support import (
    ADD_EDGE,
    AUDIT,
    DELETE,
    DELETE_EDGE,
    FORGET,
    GET,
    LIST,
    SEARCH,
    SUPERSEDE,
    UPDATE,
    WRITE,
    WRITE_MANY,
    code,
    count_memories,
    count_relationships,
    mem,
    ts,
)


async def seed(gql: GraphQLClient, namespace: str) -> dict[str, str]:
    """Five memories with distinct words, keys and tags; returns name -> id."""
    specs = {
        "coffee": mem(namespace, "Bob drinks Espresso every morning", key="bob.drink",
                      tags=["beverage", "morning"]),
        "tea": mem(namespace, "Carol prefers green tea", key="carol.drink",
                   tags=["beverage", "afternoon"]),
        "cat": mem(namespace, "Dave owns a ginger cat", key="dave.pet", tags=["pet"]),
        "dog": mem(namespace, "Erin walks her dog at dawn", key="erin.pet",
                   tags=["pet", "morning"]),
        "tagged": mem(namespace, "Unrelated sentence here", key="misc",
                      tags=["ESPRESSO-lovers"]),
    }
    written = (await gql.ok(WRITE_MANY, {"inputs": list(specs.values())}))["writeMemories"]
    return {name: m["id"] for name, m in zip(specs, written)}


async def forget(gql: GraphQLClient, namespace: str, predicate: dict[str, Any]) -> list[str]:
    result = (await gql.ok(FORGET, {"ns": namespace, "p": predicate}))["forget"]
    assert result["count"] == len(result["ids"])
    ids: list[str] = result["ids"]
    return ids


async def active_ids(gql: GraphQLClient, namespace: str) -> set[str]:
    page = (await gql.ok(LIST, {"filter": {"namespace": namespace}, "first": 100}))["memories"]
    return {e["node"]["id"] for e in page["edges"]}


async def test_forget_contains_is_case_insensitive_over_content_key_tags(
    gql: GraphQLClient, namespace: str
) -> None:
    ids = await seed(gql, namespace)
    # "espresso" is in coffee's content (as Espresso) and in tagged's tag (as ESPRESSO).
    forgotten = await forget(gql, namespace, {"contains": "eSpReSsO"})
    assert set(forgotten) == {ids["coffee"], ids["tagged"]}
    assert forgotten == sorted(forgotten)
    # Key substring.
    assert await forget(gql, namespace, {"contains": "CAROL.DR"}) == [ids["tea"]]
    # Nothing twice: already forgotten memories are not counted again.
    assert await forget(gql, namespace, {"contains": "espresso"}) == []
    assert await active_ids(gql, namespace) == {ids["cat"], ids["dog"]}


async def test_forget_by_id_key_tag_tags(gql: GraphQLClient, namespace: str) -> None:
    ids = await seed(gql, namespace)
    assert await forget(gql, namespace, {"id": ids["cat"]}) == [ids["cat"]]
    assert await forget(gql, namespace, {"key": "carol.drink"}) == [ids["tea"]]
    assert await forget(gql, namespace, {"key": "carol"}) == []  # exact key only
    assert await forget(gql, namespace, {"tags": ["pet", "morning"]}) == [ids["dog"]]
    assert await forget(gql, namespace, {"tag": "beverage"}) == [ids["coffee"]]
    assert await forget(gql, namespace, {"tag": "Beverage"}) == []  # tags are exact
    assert await active_ids(gql, namespace) == {ids["tagged"]}


async def test_forget_conjunctions(gql: GraphQLClient, namespace: str) -> None:
    ids = await seed(gql, namespace)
    # key AND tag must both hold.
    assert await forget(gql, namespace, {"key": "bob.drink", "tag": "pet"}) == []
    assert await forget(gql, namespace, {"tag": "morning", "tags": ["pet"]}) == [ids["dog"]]
    assert await forget(gql, namespace, {"id": ids["cat"], "key": "erin.pet"}) == []
    assert await forget(gql, namespace, {"query": "green tea", "tag": "morning"}) == []
    assert await forget(gql, namespace, {"query": "green tea", "tag": "beverage"}) == [
        ids["tea"]]
    assert await active_ids(gql, namespace) == {ids["coffee"], ids["cat"], ids["tagged"]}


async def test_forget_by_query_needs_every_word(gql: GraphQLClient, namespace: str) -> None:
    ids = await seed(gql, namespace)
    assert await forget(gql, namespace, {"query": "ginger dog"}) == []
    # Case, punctuation and Lucene syntax in the query are harmless.
    assert await forget(gql, namespace, {"query": "GINGER (cat"}) == [ids["cat"]]
    # Operators are not interpreted: "OR" cannot widen the match to the cat.
    assert await forget(gql, namespace, {"query": "dog OR zebra"}) == []
    assert await forget(gql, namespace, {"query": "dog: +dawn*"}) == [ids["dog"]]
    assert await active_ids(gql, namespace) == {ids["coffee"], ids["tea"], ids["tagged"]}


async def test_forgotten_leave_search_and_listing_but_stay_listable(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    ids = await seed(gql, namespace)
    forgotten = await forget(gql, namespace, {"tag": "pet"})
    assert set(forgotten) == {ids["cat"], ids["dog"]}
    assert await count_memories(graph_client, namespace) == 5  # soft delete

    hits = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                            "query": "cat dog ginger dawn",
                                            "mode": "LEXICAL"}}))["search"]
    assert hits == []
    hits = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                            "query": "cat dog ginger dawn"}}))["search"]
    assert not {h["memory"]["id"] for h in hits} & set(forgotten)

    assert await active_ids(gql, namespace) == {ids["coffee"], ids["tea"], ids["tagged"]}
    page = (await gql.ok(LIST, {"filter": {"namespace": namespace, "statuses": ["FORGOTTEN"]},
                                "first": 10}))["memories"]
    assert {e["node"]["id"] for e in page["edges"]} == set(forgotten)
    assert all(e["node"]["status"] == "FORGOTTEN" for e in page["edges"])

    one = (await gql.ok(GET, {"ns": namespace, "id": ids["cat"]}))["memory"]
    assert one["status"] == "FORGOTTEN" and one["forgottenAt"] is not None
    assert one["version"] == 2


async def test_empty_or_wordless_predicate_is_validation(
    gql: GraphQLClient, namespace: str
) -> None:
    await seed(gql, namespace)
    for predicate in ({}, {"tags": []}, {"contains": None}, {"contains": ""}, {"query": ""},
                      {"query": "?! ... ***"}, {"id": None, "key": None}):
        error = await gql.error(FORGET, {"ns": namespace, "p": predicate})
        assert code(error) == "VALIDATION", predicate
    assert len(await active_ids(gql, namespace)) == 5


async def test_contains_combined_with_other_fields_is_validation(
    gql: GraphQLClient, namespace: str
) -> None:
    await seed(gql, namespace)
    for extra in ({"id": "x"}, {"key": "bob.drink"}, {"tag": "pet"}, {"tags": ["pet"]},
                  {"query": "cat"}):
        error = await gql.error(FORGET, {"ns": namespace, "p": {"contains": "a", **extra}})
        assert code(error) == "VALIDATION", extra
    assert len(await active_ids(gql, namespace)) == 5


async def test_forget_with_empty_tag_does_not_forget_everything(
    gql: GraphQLClient, namespace: str
) -> None:
    await seed(gql, namespace)
    body = await gql.raw(FORGET, {"ns": namespace, "p": {"tag": ""}})
    assert len(await active_ids(gql, namespace)) == 5, body


@pytest.mark.parametrize("query", ["3.14", "don't"])
async def test_forget_query_matches_words_with_inner_punctuation(
    gql: GraphQLClient, namespace: str, query: str
) -> None:
    m = (await gql.ok(WRITE, {"input": mem(namespace, "I don't like Python 3.14 yet")}))[
        "writeMemory"]
    assert await forget(gql, namespace, {"query": query}) == [m["id"]]


async def test_forget_never_crosses_namespaces(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    ids = await seed(gql, namespace)
    other = namespace + "/other"
    await seed(gql, other)
    for predicate in ({"contains": "e"}, {"tag": "pet"}, {"id": ids["cat"]},
                      {"query": "cat"}, {"key": "bob.drink"}):
        assert await forget(gql, other + "/empty", predicate) == []
    assert set(await forget(gql, other, {"id": ids["cat"]})) == set()
    assert len(await active_ids(gql, namespace)) == 5
    assert len(await forget(gql, other, {"contains": "e"})) == 5
    assert len(await active_ids(gql, namespace)) == 5
    records = await graph_client.read((
        "MATCH (m:Memory) WHERE m.namespace = $ns AND m.status = 'forgotten'"
        " RETURN count(m) AS n", {"ns": namespace}))
    assert records[0]["n"] == 0


async def test_delete_erases_node_and_relationships(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    ids = await seed(gql, namespace)
    for source, target in (("cat", "dog"), ("dog", "coffee"), ("tea", "cat")):
        await gql.ok(ADD_EDGE, {"input": {"namespace": namespace, "sourceId": ids[source],
                                          "targetId": ids[target], "type": "RELATED"}})
    assert await count_relationships(graph_client, namespace) == 3
    assert (await gql.ok(DELETE, {"ns": namespace, "id": ids["cat"]}))["deleteMemory"] is True
    assert await count_memories(graph_client, namespace) == 4
    assert await count_relationships(graph_client, namespace) == 1
    nodes = await graph_client.read(("MATCH (m:Memory {id: $id}) RETURN count(m) AS n",
                                     {"id": ids["cat"]}))
    assert nodes[0]["n"] == 0
    assert code(await gql.error(GET, {"ns": namespace, "id": ids["cat"]})) == "NOT_FOUND"
    assert code(await gql.error(DELETE, {"ns": namespace, "id": ids["cat"]})) == "NOT_FOUND"
    assert code(await gql.error(DELETE, {"ns": namespace, "id": "ghost"})) == "NOT_FOUND"


async def test_delete_in_another_namespace_is_not_found(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    m = (await gql.ok(WRITE, {"input": mem(namespace, "mine")}))["writeMemory"]
    error = await gql.error(DELETE, {"ns": namespace + "/other", "id": m["id"]})
    assert code(error) == "NOT_FOUND"
    assert await count_memories(graph_client, namespace) == 1


async def test_delete_a_forgotten_or_superseded_memory(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    old = (await gql.ok(WRITE, {"input": mem(namespace, "old")}))["writeMemory"]
    new = (await gql.ok(SUPERSEDE, {"id": old["id"], "memory": mem(namespace, "new")}))[
        "supersedeMemory"]["current"]
    gone = (await gql.ok(WRITE, {"input": mem(namespace, "gone")}))["writeMemory"]
    await forget(gql, namespace, {"id": gone["id"]})
    assert (await gql.ok(DELETE, {"ns": namespace, "id": old["id"]}))["deleteMemory"]
    assert (await gql.ok(DELETE, {"ns": namespace, "id": gone["id"]}))["deleteMemory"]
    assert await count_memories(graph_client, namespace) == 1
    assert await count_relationships(graph_client, namespace) == 0
    assert (await gql.ok(GET, {"ns": namespace, "id": new["id"]}))["memory"]["status"] == "ACTIVE"


async def test_audit_trail_records_every_operation_in_order(
    app_client: Any, namespace: str, admin_actor: str
) -> None:
    alice = GraphQLClient(app_client, actor="alice")
    bob = GraphQLClient(app_client, actor="bob")
    m = (await alice.ok(WRITE, {"input": mem(namespace, "audited fact")}))["writeMemory"]
    other = (await alice.ok(WRITE, {"input": mem(namespace, "neighbour")}))["writeMemory"]
    await bob.ok(UPDATE, {"ns": namespace, "id": m["id"],
                          "patch": {"summary": "s", "tags": ["x"]}, "v": 1})
    succ = (await alice.ok(SUPERSEDE, {"id": m["id"], "memory": mem(namespace, "successor")}))[
        "supersedeMemory"]["current"]
    edge = (await bob.ok(ADD_EDGE, {"input": {"namespace": namespace, "sourceId": m["id"],
                                              "targetId": other["id"], "type": "SUPPORTS"}}))[
        "addEdge"]
    await bob.ok(DELETE_EDGE, {"ns": namespace, "id": edge["id"]})
    await alice.ok(FORGET, {"ns": namespace, "p": {"id": m["id"]}})
    await bob.ok(DELETE, {"ns": namespace, "id": m["id"]})

    trail = (await alice.ok(AUDIT, {"ns": namespace, "id": m["id"]}))["auditTrail"]
    key = admin_actor.removesuffix("tester")  # the key that made each change, then ...
    assert [(a["operation"], a["actor"], a["version"]) for a in trail] == [
        ("write", key + "alice", 1),
        ("update", key + "bob", 2),
        ("supersede", key + "alice", 3),
        ("link", key + "bob", None),
        ("unlink", key + "bob", None),
        ("forget", key + "alice", 4),
        ("delete", key + "bob", 5),
    ]
    assert all(a["memoryId"] == m["id"] for a in trail)
    assert len({a["id"] for a in trail}) == len(trail)
    times = [ts(a["at"]) for a in trail]
    assert times == sorted(times)
    assert trail[1]["details"] == {"fields": ["summary", "tags"]}
    assert trail[2]["details"] == {"supersededBy": succ["id"]}
    assert trail[3]["details"] == {"edge": edge["id"], "type": "SUPPORTS",
                                   "target": other["id"]}

    succ_trail = (await alice.ok(AUDIT, {"ns": namespace, "id": succ["id"]}))["auditTrail"]
    assert [(a["operation"], a["details"]) for a in succ_trail] == [
        ("write", {"supersedes": m["id"]})]
    # The trail is namespaced.
    error = await alice.error(AUDIT, {"ns": namespace + "/other", "id": m["id"]})
    assert code(error) == "NOT_FOUND"


async def test_audit_actor_is_the_key_when_no_actor_is_declared(
    app_client: Any, namespace: str, admin_actor: str
) -> None:
    response = await app_client.post("/graphql", json={
        "query": WRITE, "variables": {"input": mem(namespace, "no actor")}})
    m = response.json()["data"]["writeMemory"]
    gql = GraphQLClient(app_client)
    trail = (await gql.ok(AUDIT, {"ns": namespace, "id": m["id"]}))["auditTrail"]
    key = admin_actor.removesuffix("/tester")
    assert [(a["operation"], a["actor"]) for a in trail] == [("write", key)]


async def test_a_declared_actor_cannot_pass_for_another_key(
    app_client: Any, namespace: str, admin_actor: str
) -> None:
    forged = "key:someone-else#000000000000"
    gql = GraphQLClient(app_client, actor=forged)
    m = (await gql.ok(WRITE, {"input": mem(namespace, "forged")}))["writeMemory"]
    trail = (await gql.ok(AUDIT, {"ns": namespace, "id": m["id"]}))["auditTrail"]
    assert trail[0]["actor"] == admin_actor.removesuffix("tester") + forged


async def test_audit_trail_uses_caller_supplied_time_for_writes(
    gql: GraphQLClient, namespace: str, admin_actor: str
) -> None:
    m = (await gql.ok(WRITE, {"input": mem(namespace, "replayed",
                                           now="2021-06-01T00:00:00+00:00")}))["writeMemory"]
    trail = (await gql.ok(AUDIT, {"ns": namespace, "id": m["id"]}))["auditTrail"]
    assert [(a["operation"], a["actor"]) for a in trail] == [("write", admin_actor)]
    assert ts(trail[0]["at"]) == ts("2021-06-01T00:00:00+00:00")


async def test_audit_trail_of_unknown_memory_is_not_found(
    gql: GraphQLClient, namespace: str
) -> None:
    assert code(await gql.error(AUDIT, {"ns": namespace, "id": "ghost"})) == "NOT_FOUND"


async def test_concurrent_forgets_of_one_memory_count_it_once(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    m = (await gql.ok(WRITE, {"input": mem(namespace, "contested forget")}))["writeMemory"]
    bodies = await asyncio.gather(*(gql.raw(FORGET, {"ns": namespace, "p": {"id": m["id"]}})
                                    for _ in range(8)))
    assert all(not b.get("errors") for b in bodies), bodies
    assert sum(b["data"]["forget"]["count"] for b in bodies) == 1
    final = (await gql.ok(GET, {"ns": namespace, "id": m["id"]}))["memory"]
    assert final["version"] == 2
    audits = await graph_client.read((
        "MATCH (a:AuditEntry {memoryId: $id}) WHERE a.operation = 'forget'"
        " RETURN count(a) AS n", {"id": m["id"]}))
    assert audits[0]["n"] == 1


async def test_concurrent_deletes_exactly_one_succeeds(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    m = (await gql.ok(WRITE, {"input": mem(namespace, "contested delete")}))["writeMemory"]
    bodies = await asyncio.gather(*(gql.raw(DELETE, {"ns": namespace, "id": m["id"]})
                                    for _ in range(8)))
    assert await count_memories(graph_client, namespace) == 0
    winners = [b for b in bodies if not b.get("errors")]
    assert len(winners) == 1, bodies
    assert all(code(b["errors"][0]) == "NOT_FOUND" for b in bodies if b.get("errors"))
    audits = await graph_client.read((
        "MATCH (a:AuditEntry {memoryId: $id}) WHERE a.operation = 'delete'"
        " RETURN count(a) AS n", {"id": m["id"]}))
    assert audits[0]["n"] == 1
