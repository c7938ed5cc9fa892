"""memoryEvents over a real graphql-transport-ws WebSocket, against the real Neo4j.

The app runs with its lifespan; mutations go over HTTP through the same ASGI
app, events come back over the socket (httpx-ws), in commit order.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect, aconnect_ws
from httpx_ws.transport import ASGIWebSocketTransport

from memlattice.core.model import Scope, Sensitivity
from memlattice.graph.keys import ApiKeyGraph
from memlattice.server.app import runtime_of
from memlattice.services.apikeys import KeySpec, create_key, revoke_key
from tests.conftest import GraphQLClient
from tests.integration._support import (
    ADD_EDGE,
    DELETE,
    DELETE_EDGE,
    FORGET,
    SUPERSEDE,
    UPDATE,
    WRITE,
    WRITE_MANY,
    mem,
)

EVENTS = """
subscription($ns: String!, $filter: MemoryEventFilterInput) {
  memoryEvents(namespace: $ns, filter: $filter) {
    seq kind namespace memoryId memoryIds version actor at missed
    memory { id content status tags version }
    edge { id type sourceId targetId }
  }
}
"""


@pytest.fixture
def live(session_app: tuple[Any, Any]) -> tuple[Any, Any]:
    """The session's app (API keys on): (Starlette app, ASGI app to connect to)."""
    return session_app


@contextlib.asynccontextmanager
async def connect(asgi: Any) -> AsyncIterator[AsyncWebSocketSession]:
    """A graphql-transport-ws socket; opened and closed in the test's own task, as the
    transport's task group requires."""
    transport = ASGIWebSocketTransport(app=asgi)
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://test") as client,
        aconnect_ws("http://test/graphql", client, subprotocols=["graphql-transport-ws"]) as ws,
    ):
        yield ws


@pytest.fixture
def http(gql: GraphQLClient) -> GraphQLClient:
    """Mutations over HTTP, with the admin key, through the same app."""
    return gql


@pytest.fixture
def admin(admin_key: str) -> dict[str, Any]:
    return {"authorization": f"Bearer {admin_key}"}


@contextlib.asynccontextmanager
async def subscribed(asgi: Any, namespace: str, init: dict[str, Any],
                     flt: dict[str, Any] | None = None) -> AsyncIterator[AsyncWebSocketSession]:
    """Open a socket, initialise with a key, subscribe, and wait until SUBSCRIBED says
    it is live."""
    async with connect(asgi) as ws:
        await ws.send_json({"type": "connection_init", "payload": init})
        assert (await ws.receive_json(timeout=10))["type"] == "connection_ack"
        await ws.send_json({"id": "1", "type": "subscribe",
                            "payload": {"query": EVENTS,
                                        "variables": {"ns": namespace, "filter": flt}}})
        first = await next_event(ws)
        assert first["kind"] == "SUBSCRIBED" and first["namespace"] == namespace
        yield ws


async def next_message(ws: AsyncWebSocketSession) -> dict[str, Any]:
    message: dict[str, Any] = await ws.receive_json(timeout=10)
    return message


async def next_event(ws: AsyncWebSocketSession) -> dict[str, Any]:
    message = await next_message(ws)
    assert message["type"] == "next", message
    assert not message["payload"].get("errors"), message
    event: dict[str, Any] = message["payload"]["data"]["memoryEvents"]
    return event


async def test_every_change_arrives_in_commit_order(
    live: tuple[Any, Any], http: GraphQLClient, namespace: str,
    admin: dict[str, Any], admin_actor: str,
) -> None:
    async with subscribed(live[1], namespace, admin) as ws:
        a = (await http.ok(WRITE, {"input": mem(namespace, "alpha", tags=["x"])}))["writeMemory"]
        b = (await http.ok(WRITE, {"input": mem(namespace, "beta")}))["writeMemory"]
        await http.ok(UPDATE, {"ns": namespace, "id": a["id"], "patch": {"summary": "s"}})
        new = (await http.ok(SUPERSEDE, {"id": b["id"], "memory": mem(namespace, "beta 2")}))[
            "supersedeMemory"]["current"]
        edge = (await http.ok(ADD_EDGE, {"input": {
            "namespace": namespace, "sourceId": a["id"], "targetId": new["id"],
            "type": "SUPPORTS"}}))["addEdge"]
        await http.ok(DELETE_EDGE, {"ns": namespace, "id": edge["id"]})
        await http.ok(FORGET, {"ns": namespace, "p": {"id": a["id"]}})
        await http.ok(DELETE, {"ns": namespace, "id": new["id"]})

        got = [await next_event(ws) for _ in range(9)]
    kinds = [(e["kind"], e["memoryId"]) for e in got]
    assert kinds == [
        ("WRITTEN", a["id"]), ("WRITTEN", b["id"]), ("UPDATED", a["id"]),
        ("WRITTEN", new["id"]), ("SUPERSEDED", b["id"]), ("EDGE_ADDED", a["id"]),
        ("EDGE_DELETED", a["id"]), ("FORGOTTEN", a["id"]), ("DELETED", new["id"]),
    ]
    seqs = [e["seq"] for e in got]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert all(e["namespace"] == namespace and e["actor"] == admin_actor for e in got)
    assert got[0]["memory"] == {"id": a["id"], "content": "alpha", "status": "ACTIVE",
                                "tags": ["x"], "version": 1}
    assert got[2]["version"] == 2 and got[2]["memory"]["version"] == 2
    assert got[4]["memoryIds"] == [b["id"], new["id"]]
    assert got[4]["memory"]["status"] == "SUPERSEDED"
    assert got[5]["edge"] == {"id": edge["id"], "type": "SUPPORTS", "sourceId": a["id"],
                              "targetId": new["id"]}
    assert got[5]["memory"] is None
    assert got[6]["edge"]["id"] == edge["id"]
    assert got[7]["memory"]["status"] == "FORGOTTEN"
    assert got[8]["memory"] is None and got[8]["memoryIds"] == [new["id"]]


async def test_filter_by_kind_tag_and_scope(
    live: tuple[Any, Any], http: GraphQLClient, namespace: str,
    admin: dict[str, Any],
) -> None:
    flt = {"kinds": ["WRITTEN", "FORGOTTEN"], "tagsAny": ["keep"], "userId": "u1"}
    async with subscribed(live[1], namespace, admin, flt) as ws:
        await http.ok(WRITE_MANY, {"inputs": [
            mem(namespace, "wrong tag", tags=["drop"], scope="USER", userId="u1"),
            mem(namespace, "wrong user", tags=["keep"], scope="USER", userId="u2"),
            mem(namespace, "no scope", tags=["keep"]),
        ]})
        kept = (await http.ok(WRITE, {"input": mem(
            namespace, "kept", tags=["keep", "other"], scope="USER", userId="u1")}))[
            "writeMemory"]
        await http.ok(UPDATE, {"ns": namespace, "id": kept["id"], "patch": {"summary": "x"}})
        await http.ok(FORGET, {"ns": namespace, "p": {"id": kept["id"]}})
        first, second = await next_event(ws), await next_event(ws)
    assert (first["kind"], first["memoryId"]) == ("WRITTEN", kept["id"])
    assert (second["kind"], second["memoryId"]) == ("FORGOTTEN", kept["id"])


async def test_another_namespace_never_arrives(
    live: tuple[Any, Any], http: GraphQLClient, namespace: str,
    admin: dict[str, Any],
) -> None:
    other = f"test/{uuid.uuid4().hex[:12]}"
    async with subscribed(live[1], namespace, admin) as ws:
        foreign = (await http.ok(WRITE, {"input": mem(other, "not yours")}))["writeMemory"]
        await http.ok(FORGET, {"ns": other, "p": {"id": foreign["id"]}})
        await http.ok(DELETE, {"ns": other, "id": foreign["id"]})
        mine = (await http.ok(WRITE, {"input": mem(namespace, "mine")}))["writeMemory"]
        event = await next_event(ws)
    # Events arrive in commit order: had anything of `other` been delivered it would come first.
    assert (event["namespace"], event["memoryId"]) == (namespace, mine["id"])


async def test_a_subscriber_that_never_reads_does_not_block_writers(
    live: tuple[Any, Any], http: GraphQLClient, namespace: str,
    admin: dict[str, Any],
) -> None:
    bus = runtime_of(live[0]).events
    capacity = bus.capacity
    bus.capacity = 5
    try:
        async with subscribed(live[1], namespace, admin) as ws:
            started = time.monotonic()
            written = (await http.ok(WRITE_MANY, {"inputs": [
                mem(namespace, f"burst {i}") for i in range(40)]}))["writeMemories"]
            more = (await http.ok(WRITE, {"input": mem(namespace, "after")}))["writeMemory"]
            elapsed = time.monotonic() - started
            assert bus.subscriber_count(namespace) == 1
            # The 40 events were published in one go: the queue kept the newest 5 and says
            # how many it dropped; the writer never waited for the reader.
            first = await next_event(ws)
            assert first["missed"] == 35
            assert first["memoryId"] == written[35]["id"]
            rest = [await next_event(ws) for _ in range(5)]
            assert [e["memoryId"] for e in rest] == [w["id"] for w in written[36:]] + [
                more["id"]]
            assert all(e["missed"] == 0 for e in rest)
            assert elapsed < 30
    finally:
        bus.capacity = capacity
    assert bus.subscriber_count(namespace) == 0


async def test_bad_namespace_and_filter_are_validation_errors(
    live: tuple[Any, Any], namespace: str, admin: dict[str, Any]
) -> None:
    async with connect(live[1]) as ws:
        await ws.send_json({"type": "connection_init", "payload": admin})
        assert (await next_message(ws))["type"] == "connection_ack"
        for i, (ns, flt) in enumerate([("/abs", None), (namespace, {"tagsAny": [""]})]):
            await ws.send_json({"id": str(i), "type": "subscribe", "payload": {
                "query": EVENTS, "variables": {"ns": ns, "filter": flt}}})
            message = await next_message(ws)
            assert message["type"] == "next", message
            assert message["payload"]["errors"][0]["extensions"]["code"] == "VALIDATION"
            assert (await next_message(ws)) == {"id": str(i), "type": "complete"}


async def test_a_connection_without_a_valid_key_is_refused(
    live: tuple[Any, Any], namespace: str
) -> None:
    for payload in ({}, {"authorization": "Bearer mlk_not_a_key"}):
        async with connect(live[1]) as ws:
            await ws.send_json({"type": "connection_init", "payload": payload})
            with pytest.raises(WebSocketDisconnect) as closed:
                await ws.receive_json(timeout=10)
            assert closed.value.code == 4403


async def _key(app: Any, **spec: Any) -> dict[str, Any]:
    graph = ApiKeyGraph(runtime_of(app).client)
    _, secret = await create_key(graph, KeySpec(name="subscriber", **spec))
    return {"authorization": f"Bearer {secret}"}


async def test_keys_are_held_to_their_namespaces_clearance_and_scope(
    live: tuple[Any, Any], http: GraphQLClient, namespace: str
) -> None:
    other = await _key(live[0], namespaces=("elsewhere/*",))
    async with connect(live[1]) as ws:
        await ws.send_json({"type": "connection_init", "payload": other})
        assert (await next_message(ws))["type"] == "connection_ack"
        await ws.send_json({"id": "1", "type": "subscribe", "payload": {
            "query": EVENTS, "variables": {"ns": namespace}}})
        message = await next_message(ws)
        assert message["payload"]["errors"][0]["extensions"]["code"] == "FORBIDDEN"

    limited = await _key(live[0], namespaces=(namespace,), clearance=Sensitivity.LOW,
                         max_scope=Scope.USER)
    async with subscribed(live[1], namespace, limited) as ws:
        await http.ok(WRITE, {"input": mem(namespace, "secret", sensitivity="HIGH")})
        await http.ok(WRITE, {"input": mem(namespace, "agent-wide", scope="AGENT",
                                           agentId="a1")})
        secret = (await http.ok(WRITE, {"input": mem(namespace, "another secret",
                                                     sensitivity="HYPER")}))["writeMemory"]
        await http.ok(FORGET, {"ns": namespace, "p": {"id": secret["id"]}})
        visible = (await http.ok(WRITE, {"input": mem(namespace, "ordinary", scope="USER",
                                                      userId="u1")}))["writeMemory"]
        event = await next_event(ws)
    assert (event["kind"], event["memoryId"]) == ("WRITTEN", visible["id"])


async def test_revoking_a_key_ends_its_live_subscriptions_and_operations(
    live: tuple[Any, Any], http: GraphQLClient, namespace: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A WebSocket authenticates once; revoking its key must still stop it: the live
    subscription ends with UNAUTHENTICATED within the re-check time, even with no
    events to deliver, and a new operation on the old connection is refused at
    once."""
    app = live[0]
    monkeypatch.setattr(runtime_of(app), "key_recheck_s", 0.3)
    graph = ApiKeyGraph(runtime_of(app).client)
    stored, secret = await create_key(graph, KeySpec(name="revoked", namespaces=(namespace,)))
    init = {"authorization": f"Bearer {secret}"}
    async with subscribed(live[1], namespace, init) as ws:
        before = (await http.ok(WRITE, {"input": mem(namespace, "before")}))["writeMemory"]
        assert (await next_event(ws))["memoryId"] == before["id"]
        # Quiet for longer than the re-check time: the key still holds, nothing ends.
        await asyncio.sleep(0.8)
        await revoke_key(graph, stored.id)
        ended = await next_message(ws)  # no event comes: the clock alone re-checks
        assert ended["type"] == "next", ended
        assert ended["payload"]["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
        assert (await next_message(ws))["type"] == "complete"
        # The same connection may start nothing new, query or subscription.
        await ws.send_json({"id": "2", "type": "subscribe", "payload": {
            "query": "query($ns: String!) { memories(filter: {namespace: $ns}) { totalCount } }",
            "variables": {"ns": namespace}}})
        refused = await next_message(ws)
        assert refused["payload"]["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
        assert refused["payload"]["data"] is None
        assert await next_message(ws) == {"id": "2", "type": "complete"}
        await ws.send_json({"id": "3", "type": "subscribe", "payload": {
            "query": EVENTS, "variables": {"ns": namespace}}})
        refused = await next_message(ws)
        assert refused["payload"]["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
