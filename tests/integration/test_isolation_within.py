"""Isolation inside one namespace: clearance, maximum scope and scope chains.

`test_isolation` holds one tenant away from another namespace. Here one
namespace holds memories a limited key (clearance LOW, maximum scope SESSION)
may see beside ones it may not (HIGH, user scope, namespace-wide, and an erased
HIGH one), joined to the visible ones by every relationship the service makes:
links, contradictions, supersedes of memories and of records, audit entries.
Every query the key can run is sent, every answer (errors and subscription
events included) is serialised to text, and no hidden id, no id of a
relationship to a hidden memory, may appear in it; counts are exact. Visible
neighbours must still be named, so the redaction is not simply blanket.

Scope chains: a task or session id only matches within its own user and
session, on the index side and along graph-expansion paths; keys written
before buckets carried that path are migrated (graph.scope_buckets).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
from httpx_ws import AsyncWebSocketSession, aconnect_ws
from httpx_ws.transport import ASGIWebSocketTransport

from memlattice.core.model import Scope, Sensitivity
from memlattice.graph.codec import search_token
from memlattice.graph.scope_buckets import rebucket
from tests.conftest import GraphQLClient
from tests.integration._keys import as_key, make_key
from tests.integration._knowledge import (
    BY_EVIDENCE,
    GET_RECORD,
    LIST_RECORDS,
    RECALL_FACTS,
    SUPERSEDE_RECORD,
    record,
    spo,
)
from tests.integration._support import (
    ADD_EDGE,
    AUDIT,
    DELETE,
    DELETE_EDGE,
    EDGES,
    FORGET,
    GET,
    MEMORY_FIELDS,
    SUPERSEDE,
    WRITE,
    WRITE_MANY,
    basis,
    code,
    mem,
)

SEEN = {"scope": "SESSION", "userId": "u1", "sessionId": "s1", "sensitivity": "LOW"}
HIGH = {**SEEN, "sensitivity": "HIGH"}
USER = {"scope": "USER", "userId": "u1", "sensitivity": "LOW"}
WIDE = {"sensitivity": "LOW"}  # namespace-wide: above a SESSION key's maximum
LIST_ALL = ("query($filter: MemoryFilterInput!) { memories(filter: $filter, first: 500) {"
            " totalCount pageInfo { endCursor } edges { cursor node {" + MEMORY_FIELDS
            + "} } } }")
HISTORY = ("query($ns: String!, $id: ID!) { memoryHistory(namespace: $ns, id: $id) {"
           " version recordedFrom recordedUntil memory {" + MEMORY_FIELDS + "} } }")
HITS = ("query($input: SearchInput!) { search(input: $input) { score expanded"
        " path { type sourceId targetId } conflicts { id supersededBy }"
        " memory {" + MEMORY_FIELDS + "} } }")
STATUS = ("query($ns: String!) { embeddingStatus(namespace: $ns) { namespace total embedded"
          " status activeModel } }")
SUMMARIZE = ("query($ns: String!) { summarize(namespace: $ns, window: {query: \"orchard\"})"
             " { text bullets { memoryId } memories { id supersededBy } } }")
EVENTS = """
subscription($ns: String!) { memoryEvents(namespace: $ns) {
  kind memoryId memoryIds version memory { id status supersededBy } edge { id sourceId targetId }
} }
"""
ALL = ["ACTIVE", "SUPERSEDED", "FORGOTTEN", "RETRACTED"]


async def _write(gql: GraphQLClient, namespace: str, content: str,
                 bounds: dict[str, Any], axis: int) -> str:
    written = await gql.ok(WRITE, {"input": mem(namespace, content, embedding=basis(axis),
                                                **bounds)})
    return str(written["writeMemory"]["id"])


async def _link(gql: GraphQLClient, namespace: str, source: str, target: str,
                type: str = "RELATED") -> str:
    made = await gql.ok(ADD_EDGE, {"input": {"namespace": namespace, "sourceId": source,
                                             "targetId": target, "type": type}})
    return str(made["addEdge"]["id"])


async def _supersede(gql: GraphQLClient, namespace: str, old: str, content: str,
                     bounds: dict[str, Any], axis: int) -> str:
    done = await gql.ok(SUPERSEDE, {"id": old, "memory": mem(
        namespace, content, embedding=basis(axis), **bounds)})
    return str(done["supersedeMemory"]["current"]["id"])


class Store:
    """The seeded namespace: names of visible and hidden memories, hidden edge ids."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}
        self.hidden: dict[str, str] = {}
        self.hidden_edges: set[str] = set()
        self.visible_edge = ""


async def _seed(gql: GraphQLClient, ns: str) -> Store:
    s = Store()
    for i, name in enumerate(["a", "b", "c", "old_high", "old_user", "old_seen", "old_live"]):
        s.seen[name] = await _write(gql, ns, f"orchard lantern {name}", SEEN, i)
    for i, (name, bounds) in enumerate([("high", HIGH), ("user", USER), ("wide", WIDE),
                                        ("gone", HIGH)]):
        s.hidden[name] = await _write(gql, ns, f"orchard lantern secret {name}", bounds, 10 + i)
    a, b = s.seen["a"], s.seen["b"]
    s.visible_edge = await _link(gql, ns, a, b)
    for target, type in [("high", "RELATED"), ("user", "SUPPORTS"), ("wide", "RELATED"),
                         ("high", "CONTRADICTS"), ("gone", "DERIVED")]:
        s.hidden_edges.add(await _link(gql, ns, a, s.hidden[target], type))
    s.hidden_edges.add(await _link(gql, ns, s.hidden["high"], b, "SUPPORTS"))
    unlinked = await _link(gql, ns, b, s.hidden["high"], "DERIVED")
    s.hidden_edges.add(unlinked)
    await gql.ok(DELETE_EDGE, {"ns": ns, "id": unlinked})
    await gql.ok(DELETE, {"ns": ns, "id": s.hidden["gone"]})  # its link entry stays
    # Superseded by a successor above the clearance, above the scope, and a visible one.
    s.hidden["successor_high"] = await _supersede(gql, ns, s.seen["old_high"],
                                                  "orchard lantern next high", HIGH, 20)
    s.hidden["successor_user"] = await _supersede(gql, ns, s.seen["old_user"],
                                                  "orchard lantern next user", USER, 21)
    s.seen["successor_seen"] = await _supersede(gql, ns, s.seen["old_seen"],
                                                "orchard lantern next seen", SEEN, 22)
    # A semantic record superseded by one above the clearance.
    written = await gql.ok(
        "mutation($input: RecordInput!) { writeRecord(input: $input) { record { memory { id }"
        " } } }", {"input": record(ns, "SEMANTIC", spo("orchard", "has", "lanterns", evidence=[
            {"kind": "doc", "ref": "ref-1"}]), **SEEN)})
    s.seen["record"] = written["writeRecord"]["record"]["memory"]["id"]
    revised = await gql.ok(SUPERSEDE_RECORD, {"ns": ns, "id": s.seen["record"], "r": record(
        ns, "SEMANTIC", spo("orchard", "has", "secret lanterns", evidence=[
            {"kind": "doc", "ref": "ref-1"}]), **HIGH)})
    s.hidden["record_successor"] = revised["supersedeRecord"]["record"]["memory"]["id"]
    return s


def _leaks(text: str, store: Store) -> set[str]:
    return {x for x in {*store.hidden.values(), *store.hidden_edges} if x in text}


@contextlib.asynccontextmanager
async def _events(asgi: Any, namespace: str, secret: str
                  ) -> AsyncIterator[AsyncWebSocketSession]:
    transport = ASGIWebSocketTransport(app=asgi)
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://test") as client,
        aconnect_ws("http://test/graphql", client, subprotocols=["graphql-transport-ws"]) as ws,
    ):
        await ws.send_json({"type": "connection_init",
                            "payload": {"authorization": f"Bearer {secret}"}})
        assert (await ws.receive_json(timeout=10))["type"] == "connection_ack"
        await ws.send_json({"id": "1", "type": "subscribe",
                            "payload": {"query": EVENTS, "variables": {"ns": namespace}}})
        first = await ws.receive_json(timeout=10)
        assert first["payload"]["data"]["memoryEvents"]["kind"] == "SUBSCRIBED", first
        yield ws


async def test_a_limited_key_never_sees_hidden_ids_or_counts(
    gql: GraphQLClient, session_app: Any, graph_client: Any, namespace: str,
) -> None:
    ns = namespace
    store = await _seed(gql, ns)
    seen = store.seen
    secret = await make_key(graph_client, ns, clearance=Sensitivity.LOW,
                            max_scope=Scope.SESSION, name="limited")
    answers: list[tuple[str, Any]] = []
    async with as_key(session_app, secret) as key:
        async def ask(label: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
            body = await key.raw(query, variables)
            answers.append((label, body))
            return body

        for name, id in seen.items():
            await ask(f"memory {name}", GET, {"ns": ns, "id": id})
            await ask(f"history {name}", HISTORY, {"ns": ns, "id": id})
            await ask(f"audit {name}", AUDIT, {"ns": ns, "id": id})
            for direction in ("OUT", "IN", "BOTH"):
                await ask(f"edges {name}", EDGES, {"ns": ns, "id": id, "types": None,
                                                   "direction": direction})
        listed = await ask("list", LIST_ALL, {"filter": {"namespace": ns, "statuses": ALL}})
        for mode, extra in (("LEXICAL", {}), ("HYBRID", {"vector": basis(0)}),
                            ("SEMANTIC", {"vector": basis(10)})):
            await ask(f"search {mode}", HITS, {"input": {
                "filter": {"namespace": ns, "statuses": ALL}, "query": "orchard lantern",
                "mode": mode, "limit": 50, "expansion": {"maxExpand": 20, "depth": 3},
                **extra}})
        status = await ask("embedding status", STATUS, {"ns": ns})
        await ask("record", GET_RECORD, {"ns": ns, "id": seen["record"]})
        await ask("records", LIST_RECORDS, {"ns": ns, "statuses": ALL})
        await ask("recall facts", RECALL_FACTS, {"filter": {"namespace": ns},
                                                 "query": "orchard"})
        await ask("by evidence", BY_EVIDENCE, {"ns": ns, "ref": "ref-1"})
        await ask("summarize", SUMMARIZE, {"ns": ns})
        # Writing over a memory or record superseded by a hidden one: CONFLICT, unnamed.
        for name in ("old_high", "old_user"):
            body = await ask(f"supersede {name}", SUPERSEDE, {"id": seen[name], "memory": mem(
                ns, "orchard lantern again", **SEEN)})
            assert code(body["errors"][0]) == "CONFLICT"
        body = await ask("supersede record", SUPERSEDE_RECORD, {
            "ns": ns, "id": seen["record"], "r": record(ns, "SEMANTIC", spo("a", "b", "c"),
                                                        **SEEN)})
        assert code(body["errors"][0]) == "CONFLICT"

        # Live: a visible memory superseded by a hidden one, a superseded one forgotten,
        # then a visible supersede and a marker, after which the stream is caught up.
        events: list[dict[str, Any]] = []
        async with _events(session_app[1], ns, secret) as ws:
            await _supersede(gql, ns, seen["c"], "orchard lantern next c", HIGH, 23)
            await gql.ok(FORGET, {"ns": ns, "p": {"id": seen["old_high"]}})
            visible_next = await _supersede(gql, ns, seen["old_live"],
                                            "orchard lantern next live", SEEN, 24)
            marker = await _write(gql, ns, "orchard marker", SEEN, 25)
            while not events or events[-1]["memoryId"] != marker:
                message = await ws.receive_json(timeout=10)
                assert message["type"] == "next" and not message["payload"].get("errors")
                events.append(message["payload"]["data"]["memoryEvents"])
        answers.append(("events", events))

    leaked = {label: _leaks(json.dumps(body), store) for label, body in answers}
    assert not {label: ids for label, ids in leaked.items() if ids}, sorted(k for k, v in leaked.items() if v)

    # Exact counts: the memories within LOW and SESSION (before the live part).
    visible = set(seen.values())
    assert listed["data"]["memories"]["totalCount"] == len(visible) == 9
    assert {e["node"]["id"] for e in listed["data"]["memories"]["edges"]} == visible
    assert status["data"]["embeddingStatus"]["total"] == len(visible)
    assert status["data"]["embeddingStatus"]["embedded"] == len(visible)

    # What a visible neighbour is, it still is.
    by_label = dict(answers)
    assert by_label["memory successor_seen"]["data"]["memory"]["supersededBy"] is None
    assert by_label["memory old_seen"]["data"]["memory"]["supersededBy"] == seen[
        "successor_seen"]
    assert by_label["memory old_high"]["data"]["memory"]["supersededBy"] is None
    assert by_label["memory old_high"]["data"]["memory"]["status"] == "SUPERSEDED"
    trail = {e["operation"]: e["details"] for e in by_label["audit a"]["data"]["auditTrail"]
             if e["details"].get("target") == seen["b"]}
    assert trail["link"]["edge"] == store.visible_edge
    hidden_links = [e["details"] for e in by_label["audit a"]["data"]["auditTrail"]
                    if e["operation"] == "link" and e["details"].get("target") is None]
    assert len(hidden_links) == 5 and all(d["edge"] is None for d in hidden_links)
    assert {d["type"] for d in hidden_links} == {"RELATED", "SUPPORTS", "CONTRADICTS",
                                                 "DERIVED"}
    supersede = [e["details"] for e in by_label["audit old_high"]["data"]["auditTrail"]
                 if e["operation"] == "supersede"]
    assert supersede == [{"supersededBy": None}]
    conflict = by_label["supersede old_high"]["errors"][0]
    assert "already superseded;" in conflict["message"]
    assert conflict["extensions"].get("current") is None
    assert [e["id"] for e in by_label["edges a"]["data"]["edges"]] == [store.visible_edge]

    kinds = [(e["kind"], e["memoryIds"]) for e in events]
    assert ("SUPERSEDED", [seen["c"]]) in kinds
    assert ("SUPERSEDED", [seen["old_live"], visible_next]) in kinds
    forgotten = next(e for e in events if e["kind"] == "FORGOTTEN")
    assert forgotten["memory"] == {"id": seen["old_high"], "status": "FORGOTTEN",
                                   "supersededBy": None}
    live = next(e for e in events if e["memoryIds"] == [seen["old_live"], visible_next])
    assert live["memory"]["supersededBy"] == visible_next


SCOPED = ("query($input: SearchInput!) { search(input: $input) { expanded"
          " path { sourceId targetId } memory { id } } }")


async def test_a_task_or_session_id_only_matches_within_its_user_and_session(
    gql: GraphQLClient, session_app: Any, graph_client: Any, namespace: str,
) -> None:
    ns = namespace
    chain = {"userId": "u1", "sessionId": "s1", "taskId": "t1"}
    theirs = {"userId": "u2", "sessionId": "s2", "taskId": "t1"}
    written = (await gql.ok(WRITE_MANY, {"inputs": [
        mem(ns, "kettle mine", scope="TASK", embedding=basis(1), **chain),
        mem(ns, "kettle theirs", scope="TASK", embedding=basis(1), **theirs),
        mem(ns, "walnut elsewhere", scope="SESSION", userId="u1", sessionId="s9",
            embedding=basis(2)),
        mem(ns, "pebble far", scope="TASK", embedding=basis(3), **chain),
        mem(ns, "kettle same session other user", scope="SESSION", userId="u2",
            sessionId="s1", embedding=basis(1)),
        mem(ns, "odd ids", scope="TASK", userId="u/1%", sessionId="s%2F1", taskId="t/1",
            embedding=basis(4)),
    ]}))["writeMemories"]
    mine, their, elsewhere, far, other_user_session, odd = (m["id"] for m in written)
    await _link(gql, ns, mine, elsewhere)
    await _link(gql, ns, elsewhere, far)
    limited = await make_key(graph_client, ns, max_scope=Scope.SESSION, name="sessions")

    async def found(client: GraphQLClient, context: dict[str, Any], **extra: Any
                    ) -> tuple[set[str], str]:
        body = await client.ok(SCOPED, {"input": {
            "filter": {"namespace": ns}, "context": context, "mode": "LEXICAL", "limit": 20,
            "query": "kettle walnut", **extra}})
        return {h["memory"]["id"] for h in body["search"]}, json.dumps(body)

    for client_name in ("admin", "limited"):
        async with contextlib.AsyncExitStack() as stack:
            client = gql if client_name == "admin" else await stack.enter_async_context(
                as_key(session_app, limited))
            ids, _ = await found(client, theirs, scope="TASK")
            assert ids == {their}, client_name
            ids, _ = await found(client, theirs, scopes=["TASK"])
            assert ids == {their}, client_name
            # The same holds inside the vector index.
            ids, _ = await found(client, theirs, scope="TASK", mode="SEMANTIC",
                                 vector=basis(1), query=None)
            assert ids == {their}, client_name
            ids, _ = await found(client, {"userId": "u1", "sessionId": "s1"},
                                 scope="SESSION")
            assert mine not in ids and other_user_session not in ids, client_name
            # Expansion never walks through a memory outside the chain (session s9):
            # it neither names it nor reaches what lies only beyond it.
            ids, text = await found(client, chain, scope="TASK",
                                    expansion={"maxExpand": 10, "depth": 2})
            assert ids == {mine}, client_name
            assert elsewhere not in text and far not in text, client_name

    # Keys stored before buckets carried their path are migrated, and then match.
    (odd_key,) = await graph_client.read((
        "MATCH (m:Memory {id: $id}) RETURN m.scopeKey AS key", {"id": odd}))
    await graph_client.write((
        "MATCH (m:Memory) WHERE m.id IN $ids SET m.scopeKey = 'task:t1', m.scopeToken = $token",
        {"ids": [mine, their, odd], "token": search_token("task:t1")}))
    ids, _ = await found(gql, chain, scopes=["TASK"])
    assert ids == set()  # an old key is in no chain's buckets any more
    assert await rebucket(graph_client, namespace=ns) == 3
    assert await rebucket(graph_client, namespace=ns) == 0
    stored = ("MATCH (m:Memory) WHERE m.id IN $ids RETURN m.id AS id, m.scopeKey AS key,"
              " m.scopeToken AS token")
    rows = await graph_client.read((stored, {"ids": [mine, their, odd]}))
    keys = {r["id"]: (r["key"], r["token"]) for r in rows}
    # The migration's Cypher escapes ids exactly as memlattice.core.model.bucket_key does.
    assert keys[odd] == (odd_key["key"], search_token("task:u%2F1%25/s%252F1/t%2F1"))
    assert keys[mine] == ("task:u1/s1/t1", search_token("task:u1/s1/t1"))
    assert keys[their] == ("task:u2/s2/t1", search_token("task:u2/s2/t1"))
    ids, _ = await found(gql, chain, scopes=["TASK"])
    assert ids == {mine}
