"""Contradiction hints on write, clearance on every knowledge query, and time travel."""

from __future__ import annotations

import asyncio
from typing import Any

from memlattice.core.model import Sensitivity
from tests.conftest import GraphQLClient
from tests.integration._keys import as_key, make_key
from tests.integration._knowledge import (
    BY_EVIDENCE,
    GET_RECORD,
    LIST_RECORDS,
    RECALL_FACTS,
    RETRACT,
    STORE_FACT,
    SUPERSEDE_RECORD,
    fact,
    record,
    spo,
    write_record,
)
from tests.integration._support import EDGES, code


async def test_same_subject_and_predicate_with_another_object_is_a_contradiction_hint(
    gql: GraphQLClient, namespace: str
) -> None:
    lisbon = (await write_record(gql, namespace, "SEMANTIC",
                                 spo("Alice", "lives in", "Lisbon")))["record"]
    assert (await write_record(gql, namespace, "SEMANTIC",
                               spo("Bob", "works at", "Acme")))["hints"] == []
    porto = await write_record(gql, namespace, "SEMANTIC", spo(" alice ", "Lives In", "Porto"))
    assert [(h["kind"], h["memoryId"], h["reason"]) for h in porto["hints"]] == [
        ("CONTRADICTS", lisbon["memory"]["id"], "same subject and predicate, another object")]
    edges = (await gql.ok(EDGES, {"ns": namespace, "id": porto["record"]["memory"]["id"],
                                  "types": ["CONTRADICTS"], "direction": "OUT"}))["edges"]
    assert [e["targetId"] for e in edges] == [lisbon["memory"]["id"]]
    assert edges[0]["metadata"]["candidate"] is True
    same = await write_record(gql, namespace, "SEMANTIC", spo("Alice", "lives in", "Lisbon."))
    assert {(h["kind"], h["memoryId"]) for h in same["hints"]} == {
        ("SUPPORTS", lisbon["memory"]["id"]), ("CONTRADICTS", porto["record"]["memory"]["id"])}


async def test_near_duplicate_facts_are_support_hints(gql: GraphQLClient,
                                                      namespace: str) -> None:
    first = (await gql.ok(STORE_FACT, {"input": fact(
        namespace, "policy", "Production deploys require two approvals from maintainers")}))[
        "storeFact"]
    near = (await gql.ok(STORE_FACT, {"input": fact(
        namespace, "policy", "Production deploys require two approvals from the maintainers"
    )}))["storeFact"]
    assert near["created"] is True
    assert [(h["kind"], h["memoryId"]) for h in near["hints"]] == [
        ("SUPPORTS", first["fact"]["memory"]["id"])]
    assert near["hints"][0]["score"] >= 0.6
    unrelated = (await gql.ok(STORE_FACT, {"input": fact(
        namespace, "policy", "Staging resets every Sunday night")}))["storeFact"]
    assert unrelated["hints"] == []


async def test_records_above_clearance_do_not_exist_for_the_caller(
    gql: GraphQLClient, namespace: str, graph_client: Any, session_app: Any
) -> None:
    ref = {"kind": "file", "ref": "secret.md"}
    low = (await write_record(gql, namespace, "SEMANTIC", spo("vault", "is in", "room 1",
                                                              evidence=[ref])))["record"]
    high = (await write_record(gql, namespace, "SEMANTIC", spo("vault", "code is", "1234",
                                                               evidence=[ref]),
                               sensitivity="HIGH"))["record"]
    await gql.ok(STORE_FACT, {"input": fact(namespace, "secret", "vault code rotates weekly",
                                            sensitivity="HYPER", evidence=[ref])})
    door = (await gql.ok(STORE_FACT, {"input": fact(namespace, "secret", "vault code is on paper",
                                                   sensitivity="PUBLIC")}))["storeFact"]
    secret = await make_key(graph_client, namespace, clearance=Sensitivity.MEDIUM)
    async with as_key(session_app, secret) as medium:
        listed = (await medium.ok(LIST_RECORDS, {"ns": namespace}))["records"]
        assert {r["memory"]["id"] for r in listed} == {low["memory"]["id"],
                                                       door["fact"]["memory"]["id"]}
        assert code(await medium.error(GET_RECORD, {"ns": namespace,
                                                    "id": high["memory"]["id"]})) == "NOT_FOUND"
        resting = (await medium.ok(BY_EVIDENCE, {"ns": namespace, "ref": "secret.md"}))[
            "factsByEvidence"]
        assert [r["memory"]["id"] for r in resting] == [low["memory"]["id"]]
        facts = (await medium.ok(RECALL_FACTS, {"filter": {"namespace": namespace},
                                                "query": "vault code"}))["recallFacts"]
        assert [h["fact"]["memory"]["id"] for h in facts] == [door["fact"]["memory"]["id"]]
        # Nor can it revise what it cannot see, or be told about it in hints.
        assert code(await medium.error(RETRACT, {"ns": namespace,
                                                 "id": high["memory"]["id"]})) == "NOT_FOUND"
        hinted = (await medium.ok(
            "mutation($input: RecordInput!) { writeRecord(input: $input) { hints { memoryId }"
            " } }", {"input": record(namespace, "SEMANTIC", spo("vault", "code is", "0000"))}))
        assert hinted["writeRecord"]["hints"] == []
        too_high = await medium.error(
            "mutation($input: RecordInput!) { writeRecord(input: $input) { hints { memoryId }"
            " } }", {"input": record(namespace, "SEMANTIC", spo("a", "b", "c"),
                                     sensitivity="HIGH")})
        assert code(too_high) == "FORBIDDEN"


async def test_as_of_answers_what_was_believed_then(gql: GraphQLClient,
                                                    namespace: str) -> None:
    v1 = (await write_record(gql, namespace, "SEMANTIC", spo("api", "version", "v1")))["record"]
    t1 = (await gql.ok(GET_RECORD, {"ns": namespace, "id": v1["memory"]["id"]}))["record"][
        "recordedAt"]
    await asyncio.sleep(0.05)
    result = (await gql.ok(SUPERSEDE_RECORD, {
        "ns": namespace, "id": v1["memory"]["id"],
        "r": record(namespace, "SEMANTIC", spo("api", "version", "v2"))}))["supersedeRecord"]
    v2 = result["record"]
    t2 = v2["recordedAt"]
    await asyncio.sleep(0.05)
    await gql.ok(RETRACT, {"ns": namespace, "id": v2["memory"]["id"]})

    async def believed(as_of: str | None) -> list[str]:
        rows = (await gql.ok(LIST_RECORDS, {"ns": namespace, "asOf": as_of}))["records"]
        return [r["payload"]["object"] for r in rows]

    searched = (await gql.ok(
        "query($ns: String!, $q: String, $asOf: DateTime) { records(namespace: $ns, query: $q,"
        " asOf: $asOf) { payload } }", {"ns": namespace, "q": "api version", "asOf": t1}))
    assert [r["payload"]["object"] for r in searched["records"]] == ["v1"]
    assert await believed(t1) == ["v1"]
    assert await believed(t2) == ["v2"]
    assert await believed(None) == []
    assert await believed("2000-01-01T00:00:00Z") == []
    got = (await gql.ok(GET_RECORD, {"ns": namespace, "id": v1["memory"]["id"],
                                     "asOf": t1}))["record"]
    # Believed then, and as it was then (graph.history): active, its first version.
    assert (got["memory"]["status"], got["memory"]["version"]) == ("ACTIVE", 1)
    gone = await gql.error(GET_RECORD, {"ns": namespace, "id": v1["memory"]["id"],
                                        "asOf": t2})
    assert code(gone) == "NOT_FOUND"
    # World time is separate from system time.
    world = (await write_record(gql, namespace, "SEMANTIC", spo("office", "is in", "Porto"),
                                validFrom="2020-01-01T00:00:00Z",
                                validTo="2022-01-01T00:00:00Z"))["record"]
    assert world["validFrom"].startswith("2020-01-01")
    assert world["validTo"].startswith("2022-01-01")
    assert world["recordedAt"] > t2


async def test_as_of_on_memories_and_search(gql: GraphQLClient, namespace: str) -> None:
    from tests.integration._support import LIST, SEARCH, SUPERSEDE, WRITE, basis, mem

    old = (await gql.ok(WRITE, {"input": mem(namespace, "the wombat lives in Porto",
                                             embedding=basis(3))}))["writeMemory"]
    await asyncio.sleep(0.05)
    new = (await gql.ok(SUPERSEDE, {"id": old["id"], "memory": mem(
        namespace, "the wombat lives in Lisbon", embedding=basis(3))}))["supersedeMemory"][
        "current"]
    before = old["createdAt"]

    async def listed(as_of: str | None) -> list[str]:
        flt: dict[str, Any] = {"namespace": namespace}
        if as_of:
            flt["asOf"] = as_of
        page = (await gql.ok(LIST, {"filter": flt, "first": 10}))["memories"]
        return [e["node"]["id"] for e in page["edges"]]

    assert await listed(before) == [old["id"]]
    assert await listed(None) == [new["id"]]
    assert await listed(new["createdAt"]) == [new["id"]]
    for mode, extra in (("LEXICAL", {"query": "wombat"}), ("SEMANTIC", {"vector": basis(3)}),
                        ("HYBRID", {"query": "wombat", "vector": basis(3)})):
        then = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace,
                                                           "asOf": before},
                                                "mode": mode, **extra}}))["search"]
        assert [h["memory"]["id"] for h in then] == [old["id"]], mode
        today = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                                 "mode": mode, **extra}}))["search"]
        assert [h["memory"]["id"] for h in today] == [new["id"]], mode
