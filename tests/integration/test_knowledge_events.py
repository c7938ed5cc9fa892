"""Typed records and facts publish the memories' change events, after commit only.

Mutations go over HTTP with the admin key; events come back over a real
graphql-transport-ws socket (the helpers of test_subscriptions), in commit
order, held to the subscriber's clearance and scope like memory events.
"""

from __future__ import annotations

from typing import Any

import pytest

from memlattice.core.model import Scope, Sensitivity
from tests.conftest import GraphQLClient
from tests.integration._knowledge import (
    CONTEST,
    FORK,
    INVALIDATE,
    MERGE,
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
from tests.integration.test_subscriptions import _key, next_event, subscribed

DISCARD = ("mutation($ns: String!, $task: String!) { discardTask(namespace: $ns,"
           " taskId: $task) { count ids } }")
WORK = {"threadId": "t1", "state": "planning"}
CONDITIONAL = {"kind": "conditional", "conditions": ["in winter"]}


@pytest.fixture
def admin(admin_key: str) -> dict[str, Any]:
    return {"authorization": f"Bearer {admin_key}"}


async def _write(gql: GraphQLClient, namespace: str, type: str, payload: dict[str, Any],
                 **fields: Any) -> str:
    result = (await gql.ok(WRITE_RECORD, {"input": record(namespace, type, payload,
                                                          **fields)}))["writeRecord"]
    return str(result["record"]["memory"]["id"])


async def _store(gql: GraphQLClient, namespace: str, claim: str, **fields: Any) -> str:
    result = (await gql.ok(STORE_FACT, {"input": fact(namespace, "policy", claim,
                                                      **fields)}))["storeFact"]
    return str(result["fact"]["memory"]["id"])


async def test_every_knowledge_change_is_announced_in_commit_order(
    session_app: tuple[Any, Any], gql: GraphQLClient, namespace: str, admin: dict[str, Any],
    admin_actor: str,
) -> None:
    ns = namespace
    async with subscribed(session_app[1], ns, admin) as ws:
        a = await _write(gql, ns, "SEMANTIC", spo("kiln", "temperature", "900 degrees"))
        f = await _store(gql, ns, "Kilns cool overnight.")
        await _store(gql, ns, "kilns cool OVERNIGHT")
        w = await _write(gql, ns, "WORKING", WORK, taskId="task-1")
        await gql.ok(UPDATE_RECORD, {"ns": ns, "id": w, "type": "WORKING",
                                     "payload": {**WORK, "state": "executing"}})
        b = await _write(gql, ns, "SEMANTIC", spo("kiln", "temperature", "1200 degrees"))
        await gql.ok(CONTEST, {"ns": ns, "id": a, "by": b})
        a2 = (await gql.ok(SUPERSEDE_RECORD, {"ns": ns, "id": a, "r": record(
            ns, "SEMANTIC", spo("kiln", "temperature", "950 degrees"))}))[
            "supersedeRecord"]["record"]["memory"]["id"]
        b2 = (await gql.ok(FORK, {"ns": ns, "id": b, "r": record(
            ns, "SEMANTIC", spo("kiln", "temperature", "1100 degrees",
                                validity=CONDITIONAL))}))["forkRecord"]["record"]["memory"]["id"]
        m = (await gql.ok(MERGE, {"ns": ns, "ids": [a2, b2], "r": record(
            ns, "SEMANTIC", spo("kiln", "temperature", "about 1000 degrees"))}))[
            "mergeRecords"]["record"]["memory"]["id"]
        await gql.ok(RETRACT, {"ns": ns, "id": b})
        await gql.ok(INVALIDATE, {"ns": ns, "p": {"id": f}})
        f2 = await _store(gql, ns, "Kilns cool overnight.")
        await gql.ok(DISCARD, {"ns": ns, "task": "task-1"})

        # Relationships the operations create follow their records' events: the hint
        # b CONTRADICTS a (which the contest then finds in place: not announced
        # again), SUPERSEDES and DERIVED of the revisions, the reasserted fact's
        # SUPERSEDES.
        expected: list[tuple[str, str, tuple[str, str, str] | None]] = [
            ("WRITTEN", a, None), ("WRITTEN", f, None), ("UPDATED", f, None),
            ("WRITTEN", w, None), ("UPDATED", w, None),
            ("WRITTEN", b, None), ("EDGE_ADDED", b, ("CONTRADICTS", b, a)),
            ("UPDATED", a, None), ("UPDATED", b, None),
            ("WRITTEN", a2, None), ("SUPERSEDED", a, None),
            ("EDGE_ADDED", a2, ("SUPERSEDES", a2, a)),
            ("WRITTEN", b2, None), ("UPDATED", b, None), ("EDGE_ADDED", b2, ("DERIVED", b2, b)),
            ("WRITTEN", m, None), ("SUPERSEDED", a2, None), ("SUPERSEDED", b2, None),
            ("EDGE_ADDED", m, ("DERIVED", m, a2)), ("EDGE_ADDED", m, ("DERIVED", m, b2)),
            ("FORGOTTEN", b, None), ("FORGOTTEN", f, None),
            ("WRITTEN", f2, None), ("EDGE_ADDED", f2, ("SUPERSEDES", f2, f)),
            ("FORGOTTEN", w, None),
        ]
        got = [await next_event(ws) for _ in expected]
    assert [(e["kind"], e["memoryId"], e["edge"] and (
        e["edge"]["type"], e["edge"]["sourceId"], e["edge"]["targetId"])) for e in got] == expected
    seqs = [e["seq"] for e in got]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert all(e["namespace"] == ns and e["actor"] == admin_actor for e in got)
    assert got[2]["version"] == 2 and got[2]["memory"]["version"] == 2  # reinforced
    assert got[4]["memory"]["status"] == "ACTIVE" and got[4]["version"] == 2
    assert got[10]["memoryIds"] == [a, a2] and got[10]["memory"]["status"] == "SUPERSEDED"
    assert got[16]["memoryIds"] == [a2, m] and got[17]["memoryIds"] == [b2, m]
    assert got[20]["memory"]["status"] == "RETRACTED"
    assert got[21]["memory"]["status"] == "RETRACTED"
    assert f2 == f + "-g2" and got[22]["memory"]["status"] == "ACTIVE"
    assert got[24]["memory"]["status"] == "FORGOTTEN"
    edges = [e["edge"] for e in got if e["kind"] == "EDGE_ADDED"]
    assert all(e["id"] for e in edges) and len({e["id"] for e in edges}) == len(edges)


async def test_refused_knowledge_writes_announce_nothing(
    session_app: tuple[Any, Any], gql: GraphQLClient, namespace: str, admin: dict[str, Any]
) -> None:
    w = await _write(gql, namespace, "WORKING", WORK)
    e = await _write(gql, namespace, "EPISODIC", {"outcome": "success"})
    async with subscribed(session_app[1], namespace, admin) as ws:
        stale = await gql.error(UPDATE_RECORD, {"ns": namespace, "id": w, "type": "WORKING",
                                                "payload": WORK, "v": 7})
        assert code(stale) == "VERSION_CONFLICT"
        immutable = await gql.error(RETRACT, {"ns": namespace, "id": e})
        assert code(immutable) == "EPISODIC_IMMUTABLE"
        bad = await gql.error(STORE_FACT, {"input": fact(namespace, "Bad Kind", "x")})
        assert code(bad) == "VALIDATION"
        nothing = (await gql.ok(INVALIDATE, {"ns": namespace, "p": {"kind": "none"}}))
        assert nothing["invalidateFacts"]["count"] == 0
        last = await _store(gql, namespace, "Only this one is announced.")
        event = await next_event(ws)
    # Events arrive in commit order: anything announced before would have come first.
    assert (event["kind"], event["memoryId"]) == ("WRITTEN", last)


async def test_subscribers_never_hear_of_records_above_their_clearance_or_scope(
    session_app: tuple[Any, Any], gql: GraphQLClient, namespace: str
) -> None:
    limited = await _key(session_app[0], namespaces=(namespace,), clearance=Sensitivity.LOW,
                         max_scope=Scope.SESSION)
    session = {"scope": "SESSION", "sessionId": "s1"}
    async with subscribed(session_app[1], namespace, limited,
                          {"memoryTypes": ["fact", "semantic"]}) as ws:
        high = await _write(gql, namespace, "SEMANTIC", spo("vault", "code", "1234"),
                            sensitivity="HIGH", **session)
        await gql.ok(RETRACT, {"ns": namespace, "id": high})
        user = await _store(gql, namespace, "The vault opens at nine.", scope="USER",
                            userId="u1")
        await _store(gql, namespace, "The vault opens at nine.", scope="USER", userId="u1")
        await gql.ok(INVALIDATE, {"ns": namespace, "p": {"id": user}})
        await _store(gql, namespace, "Namespace-wide vault rule.")
        await _write(gql, namespace, "WORKING", WORK, **session)  # filtered out by type
        seen = await _store(gql, namespace, "The lobby opens at eight.", **session)
        await gql.ok(INVALIDATE, {"ns": namespace, "p": {"id": seen}})
        first, second = await next_event(ws), await next_event(ws)
    assert (first["kind"], first["memoryId"]) == ("WRITTEN", seen)
    assert (second["kind"], second["memoryId"]) == ("FORGOTTEN", seen)


async def _until_written(ws: Any, sentinel_id: str) -> list[dict[str, Any]]:
    """Every event up to the WRITTEN of `sentinel_id` (commit order makes it a fence)."""
    got: list[dict[str, Any]] = []
    while True:
        event = await next_event(ws)
        if (event["kind"], event["memoryId"]) == ("WRITTEN", sentinel_id):
            return got
        got.append(event)


async def test_a_hint_to_a_secret_claim_is_itself_a_secret(
    session_app: tuple[Any, Any], gql: GraphQLClient, namespace: str, admin: dict[str, Any]
) -> None:
    low = await _key(session_app[0], namespaces=(namespace,), clearance=Sensitivity.LOW)
    secret = await _write(gql, namespace, "SEMANTIC", spo("vault", "code", "1234"),
                          sensitivity="HIGH")
    async with subscribed(session_app[1], namespace, admin) as full, \
            subscribed(session_app[1], namespace, low) as limited:
        claim = await _write(gql, namespace, "SEMANTIC", spo("vault", "code", "9999"))
        fence = await _write(gql, namespace, "WORKING", WORK)
        seen_all = await _until_written(full, fence)
        seen_low = await _until_written(limited, fence)
    assert [(e["kind"], e["memoryId"]) for e in seen_all] == [
        ("WRITTEN", claim), ("EDGE_ADDED", claim)]
    assert seen_all[1]["edge"]["type"] == "CONTRADICTS"
    assert (seen_all[1]["edge"]["sourceId"], seen_all[1]["edge"]["targetId"]) == (claim, secret)
    assert [(e["kind"], e["memoryId"]) for e in seen_low] == [("WRITTEN", claim)]


async def test_consolidation_announces_what_it_derived(
    session_app: tuple[Any, Any], gql: GraphQLClient, namespace: str, admin: dict[str, Any],
    admin_actor: str,
) -> None:
    from tests.integration.test_consolidation import consolidate, episode

    obs = {"subject": "service", "predicate": "deploys with", "object": "kubectl"}
    e1 = await _write(gql, namespace, "EPISODIC", episode(observations=[obs]), embedding=None)
    async with subscribed(session_app[1], namespace, admin) as ws:
        first = await consolidate(gql, namespace)
        fence = await _write(gql, namespace, "WORKING", WORK)
        after_first = await _until_written(ws, fence)
        e2 = await _write(gql, namespace, "EPISODIC", episode(observations=[obs]),
                          embedding=None)
        second = await consolidate(gql, namespace)
        fence = await _write(gql, namespace, "WORKING", WORK)
        after_second = await _until_written(ws, fence)
    derived = first["created"]["semantic"] + first["created"]["planGraph"]
    assert len(derived) == 2
    assert sorted((e["kind"], e["memoryId"]) for e in after_first) == sorted(
        [("WRITTEN", d) for d in derived] + [("EDGE_ADDED", d) for d in derived])
    assert all(e["actor"] == admin_actor for e in after_first)
    assert {(e["edge"]["type"], e["edge"]["sourceId"], e["edge"]["targetId"])
            for e in after_first if e["kind"] == "EDGE_ADDED"} == {
        ("DERIVED", d, e1) for d in derived}
    # The second run creates the competence (DERIVED from both episodes) and
    # reinforces both (UPDATED, and DERIVED from the new episode).
    (skill,) = second["created"]["competence"]
    assert sorted(second["reinforced"]["semantic"] + second["reinforced"]["planGraph"]) == \
        sorted(derived)
    kinds = sorted((e["kind"], e["memoryId"]) for e in after_second)
    assert kinds == sorted([("WRITTEN", e2), ("WRITTEN", skill)]
                           + [("UPDATED", d) for d in derived]
                           + [("EDGE_ADDED", d) for d in [*derived, skill, skill]])
    assert {(e["edge"]["sourceId"], e["edge"]["targetId"]) for e in after_second
            if e["kind"] == "EDGE_ADDED"} == {(skill, e1), (skill, e2), *((d, e2) for d in derived)}


async def test_a_namespace_that_supersedes_on_its_own_announces_it(
    session_app: tuple[Any, Any], gql: GraphQLClient, namespace: str, admin: dict[str, Any],
) -> None:
    """With `autoSupersede`, a confident update confirmed on write is announced like a
    confirmation: the old state's SUPERSEDED after the new one's WRITTEN."""
    from tests.integration.test_knowledge_updates import INGEST, chat, turn_id

    await gql.ok("""mutation($ns: String!) { configureNamespace(namespace: $ns,
      input: {autoSupersede: 0.6}) { version } }""", {"ns": namespace})
    async with subscribed(session_app[1], namespace, admin) as ws:
        await gql.ok(INGEST, {"input": chat(namespace)})
        events = [await next_event(ws) for _ in range(9)]
    bergen, tromso = turn_id(namespace, "bergen"), turn_id(namespace, "tromso")
    assert [e["kind"] for e in events] == ["WRITTEN"] * 8 + ["SUPERSEDED"]
    assert events[-1]["memoryIds"] == [bergen, tromso]
    assert events[-1]["memory"]["status"] == "SUPERSEDED"
    found = (await gql.ok("""query($ns: String!) { memoryUpdates(namespace: $ns,
      statuses: [CONFIRMED]) { older { id } newer { id } } }""", {"ns": namespace}))
    assert found["memoryUpdates"] == [{"older": {"id": bergen}, "newer": {"id": tromso}}]
