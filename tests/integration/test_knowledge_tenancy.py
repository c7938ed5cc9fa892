"""Knowledge operations are bounded by the caller's tenant: clearance and scope.

One namespace holds records and facts a limited key may see (LOW, session
scope) beside ones it may not: above its clearance (HIGH), above its scope
(user scope) and namespace-wide (no scope). Every knowledge query and
mutation, sent with that key, returns none of the hidden ones and leaves
them, their relationships and their audit entries exactly as they were,
even when a request names them directly or shares their task, tag,
evidence, subject or claim.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from memlattice.core.model import Scope, Sensitivity
from tests.conftest import GraphQLClient
from tests.integration._keys import as_key, make_key
from tests.integration._knowledge import (
    BY_EVIDENCE,
    CONTEST,
    FORK,
    GET_RECORD,
    INVALIDATE,
    LIST_RECORDS,
    MERGE,
    RECALL_FACTS,
    RETRACT,
    STORE_FACT,
    SUPERSEDE_RECORD,
    UPDATE_RECORD,
    WRITE_RECORD,
    fact,
    record,
    spo,
)
from tests.integration._support import code

SEEN = {"scope": "SESSION", "sessionId": "s1", "sensitivity": "LOW"}
HIDDEN = {
    "high": {"scope": "SESSION", "sessionId": "s1", "sensitivity": "HIGH"},
    "user": {"scope": "USER", "userId": "u1", "sensitivity": "LOW"},
    "namespace": {"sensitivity": "LOW"},
}
# Words only the hidden records' contents hold.
SECRET_PHRASES = tuple(f"secret {name}" for name in HIDDEN)
WORK = {"threadId": "t1", "state": "executing", "nextActions": ["ship"]}
DISCARD = ("mutation($ns: String!, $task: String!) { discardTask(namespace: $ns,"
           " taskId: $task) { count ids } }")
SUMMARIZE = ("query($ns: String!, $window: SummaryWindowInput) { summarize(namespace: $ns,"
             " window: $window) { text bullets { memoryId } memories { id content } } }")
CONSOLIDATE = ("mutation($ns: String!) { consolidate(namespace: $ns) { namespace changed } }")
RECORDS_QUERY = ("query($ns: String!, $q: String) { records(namespace: $ns, query: $q,"
                 " statuses: [ACTIVE, SUPERSEDED, RETRACTED, FORGOTTEN]) { memory { id } } }")


async def _state(graph_client: Any, ids: list[str]) -> str:
    """The hidden nodes, every relationship touching them, and their audit entries."""
    rows = await graph_client.read(("""
        UNWIND $ids AS id
        MATCH (n:Memory {id: id})
        RETURN labels(n) AS labels, properties(n) AS props,
          COLLECT { MATCH (n)-[r]-(o) RETURN {type: type(r), props: properties(r),
                    start: startNode(r).id, end: endNode(r).id} } AS rels,
          COLLECT { MATCH (a:AuditEntry) WHERE a.memoryId = id RETURN properties(a) } AS audit
        """, {"ids": ids}))
    canon = [{"labels": sorted(r["labels"]), "props": r["props"],
              "rels": sorted(json.dumps(x, sort_keys=True, default=str) for x in r["rels"]),
              "audit": sorted(json.dumps(x, sort_keys=True, default=str) for x in r["audit"])}
             for r in rows]
    assert len(canon) == len(ids)
    return json.dumps(canon, sort_keys=True, default=str)


async def _seed(gql: GraphQLClient, namespace: str) -> tuple[dict[str, str], dict[str, str]]:
    """(visible ids by name, hidden ids by name), written with the admin key."""
    async def write(type: str, payload: dict[str, Any], bounds: dict[str, Any],
                    **fields: Any) -> str:
        result = (await gql.ok(WRITE_RECORD, {"input": record(
            namespace, type, payload, **bounds, **fields)}))["writeRecord"]
        return str(result["record"]["memory"]["id"])

    async def store(claim: str, bounds: dict[str, Any]) -> str:
        result = (await gql.ok(STORE_FACT, {"input": fact(
            namespace, "policy", claim, tags=["shared"], **bounds,
            evidence=[{"kind": "file", "ref": "shared.md"}])}))["storeFact"]
        return str(result["fact"]["memory"]["id"])

    seen = {
        "fact": await store("Lanterns are lit at dusk.", SEEN),
        "fact2": await store("Lanterns are cleaned weekly.", SEEN),
        "semantic": await write("SEMANTIC", spo("lantern", "colour", "amber lantern"), SEEN),
        "semantic2": await write("SEMANTIC", spo("lantern", "fuel", "oil lantern"), SEEN),
        "working": await write("WORKING", WORK, SEEN, taskId="task-1"),
    }
    hidden: dict[str, str] = {}
    for name, bounds in HIDDEN.items():
        hidden[f"fact-{name}"] = await store(f"Lanterns hide secret {name} keys.", bounds)
        hidden[f"semantic-{name}"] = await write(
            "SEMANTIC", spo("lantern", "colour", f"secret {name} lantern"), bounds)
        hidden[f"working-{name}"] = await write("WORKING", {**WORK, "threadId": name}, bounds,
                                                taskId="task-1")
    return seen, hidden


@pytest.fixture
async def limited(session_app: tuple[Any, Any], graph_client: Any,
                  namespace: str) -> Any:
    secret = await make_key(graph_client, namespace, write=True, max_scope=Scope.SESSION,
                            clearance=Sensitivity.LOW, name="limited-knowledge")
    async with as_key(session_app, secret) as client:
        yield client


def _ids(value: Any) -> set[str]:
    """Every string anywhere in a response (ids, contents, messages)."""
    if isinstance(value, dict):
        return set().union(*(_ids(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_ids(v) for v in value)) if value else set()
    return {value} if isinstance(value, str) else set()


async def test_knowledge_reads_and_writes_never_reach_past_the_key(
    gql: GraphQLClient, limited: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    seen, hidden = await _seed(gql, namespace)
    secret_ids = set(hidden.values())
    before = await _state(graph_client, sorted(secret_ids))
    responses: list[Any] = []

    async def ok(query: str, variables: dict[str, Any]) -> dict[str, Any]:
        data = await limited.ok(query, variables)
        responses.append(data)
        return data

    async def refused(query: str, variables: dict[str, Any], expected: str) -> None:
        error = await limited.error(query, variables)
        assert code(error) == expected, error
        # An id the request sent may come back in the message; nothing else of the
        # hidden records may.
        sent = _ids(variables)
        leaked = {t for t in _ids(error) if any(h in t for h in secret_ids - sent)}
        assert not leaked, error
        for phrase in SECRET_PHRASES:
            if phrase not in json.dumps(variables):
                assert phrase not in json.dumps(error), error

    # ---------------------------------------------------------------- reads
    for id in hidden.values():
        await refused(GET_RECORD, {"ns": namespace, "id": id, "asOf": None}, "NOT_FOUND")
    listed = (await ok(LIST_RECORDS, {"ns": namespace}))["records"]
    assert {r["memory"]["id"] for r in listed} == set(seen.values())
    searched = (await ok(RECORDS_QUERY, {"ns": namespace, "q": "lantern secret"}))["records"]
    assert {r["memory"]["id"] for r in searched} <= set(seen.values())
    recalled = (await ok(RECALL_FACTS, {"filter": {"namespace": namespace}}))["recallFacts"]
    assert {h["fact"]["memory"]["id"] for h in recalled} == {seen["fact"], seen["fact2"]}
    recalled = (await ok(RECALL_FACTS, {"filter": {"namespace": namespace},
                                        "query": "lanterns secret keys"}))["recallFacts"]
    assert {h["fact"]["memory"]["id"] for h in recalled} <= {seen["fact"], seen["fact2"]}
    resting = (await ok(BY_EVIDENCE, {"ns": namespace, "ref": "shared.md"}))[
        "factsByEvidence"]
    assert {r["memory"]["id"] for r in resting} == {seen["fact"], seen["fact2"]}
    for window in ({"limit": 50}, {"limit": 50, "query": "lantern secret"}):
        summary = (await ok(SUMMARIZE, {"ns": namespace, "window": window}))["summarize"]
        assert {m["id"] for m in summary["memories"]} <= set(seen.values())
        assert not any(p in summary["text"] for p in SECRET_PHRASES)

    # ------------------------------------------------- mutations on hidden records
    for name in HIDDEN:
        sem, work = hidden[f"semantic-{name}"], hidden[f"working-{name}"]
        await refused(UPDATE_RECORD, {"ns": namespace, "id": work, "type": "WORKING",
                                      "payload": {**WORK, "state": "done"}}, "NOT_FOUND")
        await refused(RETRACT, {"ns": namespace, "id": sem}, "NOT_FOUND")
        await refused(SUPERSEDE_RECORD, {"ns": namespace, "id": sem, "r": record(
            namespace, "SEMANTIC", spo("lantern", "colour", "red"), **SEEN)}, "NOT_FOUND")
        await refused(FORK, {"ns": namespace, "id": sem, "r": record(
            namespace, "SEMANTIC", spo("lantern", "colour", "blue",
                                       validity={"kind": "conditional",
                                                 "conditions": ["at night"]}), **SEEN)},
            "NOT_FOUND")
        await refused(CONTEST, {"ns": namespace, "id": seen["semantic"], "by": sem},
                      "NOT_FOUND")
        await refused(CONTEST, {"ns": namespace, "id": sem, "by": seen["semantic"]},
                      "NOT_FOUND")
        await refused(MERGE, {"ns": namespace, "ids": [seen["semantic"], sem], "r": record(
            namespace, "SEMANTIC", spo("lantern", "colour", "merged"), **SEEN)}, "NOT_FOUND")
        # Reinforcing a hidden fact through its claim: refused, nothing revealed.
        await refused(STORE_FACT, {"input": fact(namespace, "policy",
                                                 f"Lanterns hide secret {name} keys.",
                                                 confidence=1.0, **SEEN)}, "CONFLICT")
        invalidated = (await ok(INVALIDATE, {"ns": namespace,
                                             "p": {"id": hidden[f"fact-{name}"]}}))
        assert invalidated["invalidateFacts"] == {"count": 0, "ids": []}
    # Writing outside the key's bounds is refused before anything is written.
    for bounds in HIDDEN.values():
        await refused(WRITE_RECORD, {"input": record(
            namespace, "SEMANTIC", spo("lantern", "size", "big"), **bounds)}, "FORBIDDEN")
        await refused(STORE_FACT, {"input": fact(namespace, "policy", "Brand new claim.",
                                                 **bounds)}, "FORBIDDEN")
    await refused(CONSOLIDATE, {"ns": namespace}, "FORBIDDEN")

    # ------------------------------------- bulk mutations touch only what it sees
    written = (await ok(WRITE_RECORD, {"input": record(
        namespace, "SEMANTIC", spo("lantern", "colour", "green lantern secret"),
        **SEEN)}))["writeRecord"]
    assert {h["memoryId"] for h in written["hints"]} <= set(seen.values())
    assert written["hints"], "the visible lantern colour should be a candidate"
    contested = (await ok(CONTEST, {"ns": namespace, "id": seen["semantic"],
                                    "by": seen["semantic2"]}))["contestRecord"]
    assert contested["record"]["revisionStatus"] == "CONTESTED"
    discarded = (await ok(DISCARD, {"ns": namespace, "task": "task-1"}))["discardTask"]
    assert discarded["ids"] == [seen["working"]]
    for predicate in ({"tag": "shared"}, {"evidenceRef": "shared.md"}, {"kind": "policy"},
                      {"query": "lanterns secret keys"}):
        result = (await ok(INVALIDATE, {"ns": namespace, "p": predicate}))["invalidateFacts"]
        assert set(result["ids"]) <= {seen["fact"], seen["fact2"]}, predicate
    facts = (await gql.ok(RECALL_FACTS, {"filter": {"namespace": namespace}}))["recallFacts"]
    assert {h["fact"]["memory"]["id"] for h in facts} == {
        hidden[f"fact-{n}"] for n in HIDDEN}  # the admin still sees every hidden fact

    # -------------------------------------------------------------- afterwards
    for data in responses:
        assert not (_ids(data) & secret_ids), data
        assert not any(p in json.dumps(data) for p in SECRET_PHRASES), data
    assert await _state(graph_client, sorted(secret_ids)) == before


async def test_a_read_only_key_changes_no_knowledge(
    session_app: tuple[Any, Any], gql: GraphQLClient, graph_client: Any, namespace: str
) -> None:
    seen, hidden = await _seed(gql, namespace)
    every = sorted({*seen.values(), *hidden.values()})
    before = await _state(graph_client, every)
    secret = await make_key(graph_client, namespace, write=False, name="reader")
    async with as_key(session_app, secret) as reader:
        for query, variables in (
            (INVALIDATE, {"ns": namespace, "p": {"tag": "shared"}}),
            (DISCARD, {"ns": namespace, "task": "task-1"}),
            (STORE_FACT, {"input": fact(namespace, "policy", "Lanterns are lit at dusk.",
                                        **SEEN)}),
            (RETRACT, {"ns": namespace, "id": seen["semantic"]}),
            (CONTEST, {"ns": namespace, "id": seen["semantic"], "by": seen["semantic2"]}),
            (UPDATE_RECORD, {"ns": namespace, "id": seen["working"], "type": "WORKING",
                             "payload": WORK}),
        ):
            error = await reader.error(query, variables)
            assert code(error) == "FORBIDDEN", error
    assert await _state(graph_client, every) == before
