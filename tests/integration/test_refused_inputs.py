"""Bad input gets a typed error and writes nothing (issue 14, items 1, 11, 12, 13, 15).

Each case runs against a namespace holding three active memories (tags, a key,
a relationship); after the refusal its fingerprint (memories, versions,
relationships, audit entries) is what it was. The classes covered: blank or
invisible strings where something is named, forget predicates that would match
everything, non-finite numbers in JSON, degenerate vectors, and the graph rules
of addEdge, updateMemory and storeFact.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import GraphQLClient
from tests.integration._knowledge import (
    INVALIDATE,
    STORE_FACT,
    UPDATE_RECORD,
    WRITE_RECORD,
    fact,
    spo,
)
from tests.integration._support import (
    ADD_EDGE,
    DIM,
    FORGET,
    SEARCH,
    UPDATE,
    WRITE,
    WRITE_MANY,
    basis,
    code,
    fingerprint,
    mem,
)
from tests.integration.test_errors import assert_clean

ADD_EDGES = ("mutation($ns: String!, $inputs: [EdgeSpecInput!]!) {"
             " addEdges(namespace: $ns, inputs: $inputs) { id type sourceId targetId } }")
DISCARD = ("mutation($ns: String!, $task: String!) {"
           " discardTask(namespace: $ns, taskId: $task) { count ids } }")

Ids = list[str]
Case = tuple[str, Callable[[str, Ids], tuple[str, dict[str, Any]]], set[str]]

V = {"VALIDATION"}
ZERO = [0.0] * DIM


def forget(predicate: dict[str, Any]) -> Callable[[str, Ids], tuple[str, dict[str, Any]]]:
    return lambda ns, ids: (FORGET, {"ns": ns, "p": predicate})


def write(**fields: Any) -> Callable[[str, Ids], tuple[str, dict[str, Any]]]:
    content = fields.pop("content", "a new note")
    return lambda ns, ids: (WRITE, {"input": mem(ns, content, **fields)})


def patch(**fields: Any) -> Callable[[str, Ids], tuple[str, dict[str, Any]]]:
    return lambda ns, ids: (UPDATE, {"ns": ns, "id": ids[0], "patch": fields})


def invalidate(**fields: Any) -> Callable[[str, Ids], tuple[str, dict[str, Any]]]:
    return lambda ns, ids: (INVALIDATE, {"ns": ns, "p": fields})


def store_fact(claim: str = "Deploys need two reviews.", **fields: Any
               ) -> Callable[[str, Ids], tuple[str, dict[str, Any]]]:
    return lambda ns, ids: (STORE_FACT, {"input": fact(ns, "policy", claim, **fields)})


def edge(**fields: Any) -> Callable[[str, Ids], tuple[str, dict[str, Any]]]:
    return lambda ns, ids: (ADD_EDGE, {"input": {
        "namespace": ns, "sourceId": ids[1], "targetId": ids[2], "type": "RELATED", **fields}})


def episode(**environment: Any) -> dict[str, Any]:
    return {"outcome": "success", "environment": environment}


NAN, INF = float("nan"), float("inf")
INVISIBLE = ["\u202e", "\u200b", "\u007f", "\u0085", "\u2028", "\u0000", "\ufeff", "\u0378"]

CASES: list[Case] = [
    # Item 1: a forget predicate that names nothing must not match everything.
    *[(f"forget contains {text!r}", forget({"contains": text}), V)
      for text in (" ", "\t", "\n", "   ", " \u200b ", "\u00a0")],
    ("forget tag blank", forget({"tag": " "}), V),
    ("forget tag empty", forget({"tag": ""}), V),
    ("forget key blank", forget({"key": "\t"}), V),
    ("forget id blank", forget({"id": " "}), V),
    ("forget tags with a blank one", forget({"tags": ["kept", " "]}), V),
    ("forget query without a word", forget({"query": "... --- !!"}), V),
    ("forget query of underscores", forget({"query": "___"}), V),
    ("forget query invisible", forget({"query": "\u200b\u200b"}), V),
    ("discardTask empty taskId", lambda ns, ids: (DISCARD, {"ns": ns, "task": ""}), V),
    ("discardTask blank taskId", lambda ns, ids: (DISCARD, {"ns": ns, "task": " \t"}), V),
    ("invalidateFacts blank key", invalidate(key=" "), V),
    ("invalidateFacts blank claim", invalidate(claim=" "), V),
    ("invalidateFacts blank tag", invalidate(tag="\t"), V),
    ("invalidateFacts blank kind", invalidate(kind=""), V),
    ("invalidateFacts blank evidenceRef", invalidate(evidenceRef="  "), V),
    ("invalidateFacts blank id", invalidate(id=" "), V),
    # Item 1 / 12: identifiers that name something are neither blank nor invisible.
    ("write blank sessionId", write(scope="SESSION", sessionId=" "), V),
    ("write empty taskId", write(taskId=""), V),
    ("write blank userId", write(userId="\n"), V),
    ("write agentId with a bidi override", write(agentId="bob\u202e"), V),
    ("write agentId with surrounding space", write(agentId=" bob"), V),
    ("write blank key", write(key=" "), V),
    ("write key with a NUL", write(key="a\u0000b"), V),
    ("write zero-width tag", write(tags=["\u200b"]), V),
    ("write tag with surrounding space", write(tags=["ok", "x "]), V),
    ("write blank sourceType", write(sourceType=" "), V),
    ("write content only invisible", write(content="\u200b\u200e"), V),
    ("write metadata key blank", write(metadata={" ": 1}), V),
    ("write metadata key with a control char", write(metadata={"a\u0007": 1}), V),
    ("patch blank key", patch(key=" "), V),
    ("patch zero-width tag", patch(tags=["a\u200bb"]), V),
    ("storeFact blank taskId", store_fact(taskId=" "), V),
    ("storeFact blank evidence ref", store_fact(evidence=[{"kind": "file", "ref": " "}]), V),
    ("storeFact tag with bidi override", store_fact(tags=["\u202eabc"]), V),
    ("writeRecord semantic subject blank", lambda ns, ids: (WRITE_RECORD, {"input": {
        "namespace": ns, "type": "SEMANTIC", "payload": spo("\u200b ", "lives in", "Lisbon"),
        "embedding": basis(3)}}), V),
    ("configureNamespace blank embeddingModel", lambda ns, ids: (
        ("mutation($ns: String!, $i: NamespaceConfigInput!) {"
         " configureNamespace(namespace: $ns, input: $i) { version } }"),
        {"ns": ns, "i": {"embeddingModel": " "}}), V),
    # Item 12: namespaces.
    *[(f"write namespace {bad!r}",
       lambda ns, ids, bad=bad: (WRITE, {"input": mem(bad, "a new note")}), V)
      for bad in (" ", "a/x ", " a/x", "a/ x", "a/x\t", "a/\u202ex", "a/\u200bx", "a/x\u007f",
                  "a/x\u0085", "a/\u2028x", "a/\ufeffx", "a/\u0378x", "a/\ud800x", "a/\u00a0")],
    # Item 11: non-finite numbers in any JSON input.
    ("write metadata NaN", write(metadata={"x": NAN}), V),
    ("write metadata Infinity", write(metadata={"x": {"y": [1, INF]}}), V),
    ("write value -Infinity", write(value=-INF), V),
    ("write provenance NaN", write(provenance={"a": [NAN]}), V),
    ("patch value NaN", patch(value={"x": NAN}), V),
    ("patch metadata Infinity", patch(metadata={"x": INF}), V),
    ("addEdge metadata NaN", edge(metadata={"w": NAN}), V),
    ("storeFact metadata NaN", store_fact(metadata={"x": NAN}), V),
    ("storeFact provenance Infinity", store_fact(provenance={"x": INF}), V),
    ("writeRecord payload NaN", lambda ns, ids: (WRITE_RECORD, {"input": {
        "namespace": ns, "type": "EPISODIC", "payload": episode(load=NAN),
        "embedding": basis(1)}}), V),
    ("updateRecord payload Infinity", lambda ns, ids: (UPDATE_RECORD, {
        "ns": ns, "id": ids[0], "type": "EPISODIC", "payload": episode(load=INF)}), V),
    ("write value literal 1e400", lambda ns, ids: (
        ('mutation($ns: String!) { writeMemory(input: {namespace: $ns, content: "n",'
         f' value: 1e400, embedding: {basis(2)}}}) {{ id }} }}'), {"ns": ns}), V),
    # Lone surrogates (a JSON "\ud800" escape) no UTF-8 encoder can write.
    ("write content with a lone surrogate", lambda ns, ids: (WRITE, {"input": {
        "namespace": ns, "content": "ok \ud800", "embedding": basis(5)}}), V),
    ("patch summary with a lone surrogate", patch(summary="s\udfff"), V),
    ("addEdge metadata with a lone surrogate", edge(metadata={"w": "\udfff"}), V),
    ("write metadata key with a lone surrogate", write(metadata={"k\ud800": 1}), V),
    # Item 13: vectors that cosine cannot compare, or float32 cannot hold.
    ("write zero embedding", write(embedding=ZERO), V),
    ("write embedding beyond float32", write(embedding=[1e39] + [0.0] * (DIM - 1)), V),
    ("write embedding below float32", write(embedding=[1e-60] * DIM), V),
    ("write base64 zero embedding", write(embedding=base64.b64encode(
        struct.pack(f"<{DIM}f", *ZERO)).decode()), V),
    ("patch zero embedding", patch(embedding=ZERO), V),
    ("storeFact zero embedding", store_fact(embedding=ZERO), V),
    ("search with a zero vector", lambda ns, ids: (SEARCH, {"input": {
        "filter": {"namespace": ns}, "vector": ZERO, "mode": "SEMANTIC"}}), V),
    # Item 15.
    ("empty updateMemory patch", patch(), V),
    *[(f"storeFact claim {claim!r}", store_fact(claim), V)
      for claim in (".", "--", "?!", "\u200b", "_")],
]


async def send(gql: GraphQLClient, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    """Post as a lenient client would: Python's encoder writes NaN, Infinity and lone
    surrogates (as escapes), which httpx's own JSON encoding refuses to send."""
    response = await gql.http.post(
        "/graphql", content=json.dumps({"query": query, "variables": variables}),
        headers={"content-type": "application/json", "x-memlattice-actor": gql.actor})
    body: dict[str, Any] = response.json()
    return body


@pytest.fixture
async def seeded(gql: GraphQLClient, namespace: str) -> Ids:
    """Three active memories, tagged and keyed, the first two related."""
    written = (await gql.ok(WRITE_MANY, {"inputs": [
        mem(namespace, "alpha note", tags=["kept"], key="k1"),
        mem(namespace, "beta note", tags=["kept", "b"]),
        mem(namespace, "gamma note"),
    ]}))["writeMemories"]
    ids = [m["id"] for m in written]
    await gql.ok(ADD_EDGE, {"input": {"namespace": namespace, "sourceId": ids[0],
                                      "targetId": ids[1], "type": "RELATED"}})
    return ids


@pytest.mark.parametrize("build,expected", [(b, e) for _, b, e in CASES],
                         ids=[name for name, _, _ in CASES])
async def test_refused_input_writes_nothing(
    gql: GraphQLClient, graph_client: Any, namespace: str, seeded: Ids,
    build: Callable[[str, Ids], tuple[str, dict[str, Any]]], expected: set[str],
) -> None:
    query, variables = build(namespace, seeded)
    # A bad namespace is shared by every run against this database: compare, not zero.
    target = (variables.get("input") or {}).get("namespace", namespace)
    if not target.isprintable() and "\ud800" in target:
        target = namespace  # a lone surrogate cannot be stored, nor sent to Neo4j to count
    before = await fingerprint(graph_client, namespace), await fingerprint(graph_client, target)
    body = await send(gql, query, variables)
    assert body.get("errors"), body
    error = body["errors"][0]
    assert code(error) in expected, error
    assert_clean(error)
    after = await fingerprint(graph_client, namespace), await fingerprint(graph_client, target)
    assert after == before


async def supersedes(gql: GraphQLClient, namespace: str, source: str, target: str) -> Any:
    return await gql.raw(ADD_EDGE, {"input": {"namespace": namespace, "sourceId": source,
                                              "targetId": target, "type": "SUPERSEDES"}})


async def test_supersedes_cycle_is_refused(
        gql: GraphQLClient, graph_client: Any, namespace: str, seeded: Ids) -> None:
    a, b, c = seeded
    assert not (await supersedes(gql, namespace, a, b)).get("errors")
    assert not (await supersedes(gql, namespace, b, c)).get("errors")
    before = await fingerprint(graph_client, namespace)
    for source, target, length in ((b, a, 2), (c, a, 3)):
        body = await supersedes(gql, namespace, source, target)
        error = body["errors"][0]
        assert code(error) == "CONFLICT", error
        assert error["extensions"]["reason"] == "SUPERSEDES_CYCLE"
        # Only the memories the request named: the rest of the path (b, for c -> a)
        # may be memories the key may not see.
        assert sorted(error["extensions"]["cycle"]) == sorted({source, target})
        assert error["extensions"]["cycleLength"] == length
        assert_clean(error)
    # A batch whose own rows close the cycle is refused whole.
    body = await gql.raw(ADD_EDGES, {"ns": namespace, "inputs": [
        {"sourceId": a, "targetId": c, "type": "RELATED"},
        {"sourceId": c, "targetId": a, "type": "SUPERSEDES"}]})
    assert code(body["errors"][0]) == "CONFLICT", body
    assert await fingerprint(graph_client, namespace) == before
    # Other types may go round in circles: RELATED and SUPPORTS are not succession.
    assert not (await gql.raw(ADD_EDGE, {"input": {
        "namespace": namespace, "sourceId": c, "targetId": a, "type": "SUPPORTS"}})).get("errors")


async def test_supersedes_cycle_within_one_batch_is_refused(
        gql: GraphQLClient, graph_client: Any, namespace: str, seeded: Ids) -> None:
    a, b, _ = seeded
    before = await fingerprint(graph_client, namespace)
    body = await gql.raw(ADD_EDGES, {"ns": namespace, "inputs": [
        {"sourceId": a, "targetId": b, "type": "SUPERSEDES"},
        {"sourceId": b, "targetId": a, "type": "SUPERSEDES"}]})
    assert code(body["errors"][0]) == "CONFLICT", body
    assert await fingerprint(graph_client, namespace) == before


async def test_duplicate_edge_is_idempotent(
        gql: GraphQLClient, graph_client: Any, namespace: str, seeded: Ids) -> None:
    _, b, c = seeded
    spec = {"namespace": namespace, "sourceId": b, "targetId": c, "type": "SUPPORTS",
            "metadata": {"why": "same"}}
    first = (await gql.ok(ADD_EDGE, {"input": spec}))["addEdge"]
    before = await fingerprint(graph_client, namespace)
    for _ in range(2):
        again = (await gql.ok(ADD_EDGE, {"input": spec}))["addEdge"]
        assert again == first
    twice = (await gql.ok(ADD_EDGES, {"ns": namespace, "inputs": [
        {k: v for k, v in spec.items() if k != "namespace"}] * 2}))["addEdges"]
    assert {e["id"] for e in twice} == {first["id"]}
    assert await fingerprint(graph_client, namespace) == before
    # New metadata is a change: it is written and audited once.
    changed = (await gql.ok(ADD_EDGE, {"input": {**spec, "metadata": {"why": "new"}}}))["addEdge"]
    assert changed["id"] == first["id"] and changed["metadata"] == {"why": "new"}
    after = await fingerprint(graph_client, namespace)
    assert after == {**before, "audits": before["audits"] + 1}


async def test_empty_patch_leaves_the_version(
        gql: GraphQLClient, graph_client: Any, namespace: str, seeded: Ids) -> None:
    error = await gql.error(UPDATE, {"ns": namespace, "id": seeded[0], "patch": {}})
    assert code(error) == "VALIDATION" and "patch" in error["message"], error
    records = await graph_client.read(("MATCH (m:Memory {id: $id}) RETURN m.version AS v",
                                       {"id": seeded[0]}))
    assert records[0]["v"] == 1


async def test_plain_inputs_still_pass(gql: GraphQLClient, namespace: str) -> None:
    """What the rules must not refuse: inner spaces, scripts, emoji, small vectors,
    negative zero, finite JSON numbers, a claim that is one word."""
    nested = f"{namespace}/Équipe d'été/東京"
    vector = [-0.0] * DIM
    vector[3] = 1e-3
    written = (await gql.ok(WRITE, {"input": mem(
        nested, "  a note with\ttabs\nand lines  ", key="user.pref color", tags=["ünï cödé", "🙂"],
        agentId="agent 7", metadata={"my key": 1.5e300, "neg": -0.0}, value=[1e-300, -1],
        embedding=vector)}))["writeMemory"]
    assert written["tags"] == ["ünï cödé", "🙂"] and written["metadata"]["my key"] == 1.5e300
    stored = (await gql.ok(STORE_FACT, {"input": fact(namespace, "word", "Yes")}))["storeFact"]
    assert stored["created"]
    found = (await gql.ok(FORGET, {"ns": nested, "p": {"contains": " with\t"}}))["forget"]
    assert found["count"] == 1
