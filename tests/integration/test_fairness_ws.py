"""Fairness over a WebSocket: a query or mutation sent over graphql-transport-ws is a
request like one sent over HTTP (memlattice.server.ws_messages). It takes one of its
key's `concurrent` slots (not a live-subscription one), waits for its turn in a busy
process and gives way at its stage boundaries in a crowded one, so a key cannot
escape its limits, or the sharing of the process, by moving its searches onto a
socket. Subscriptions keep their own allowance (tests.integration.test_fairness).

Held searches (a reranker that waits for the test) make every outcome a condition,
not a duration: a busy machine only makes the polling loops longer.
"""

from __future__ import annotations

import asyncio
from typing import Any

from httpx_ws import AsyncWebSocketSession

from memlattice.core.fairness import KeyLimits
from memlattice.core.settings import LimitsSettings, Settings
from memlattice.graph.keys import ApiKeyGraph
from memlattice.server.app import runtime_of
from memlattice.services.apikeys import KeySpec, create_key
from tests.integration._apps import app_with
from tests.integration._support import WRITE, mem
from tests.integration.test_fairness import (
    HEAVY,
    READ,
    YIELDING,
    assert_rate_limited,
    busy_process,
    held_reranker,
)
from tests.integration.test_subscriptions import connect

# However busy the machine: a deadline for an answer that must come, never a duration.
ANSWER_S = 300.0
HELD_SEARCH = "query($in: SearchInput!) { search(input: $in) { memory { id } } }"


async def receive(ws: AsyncWebSocketSession) -> dict[str, Any]:
    message: dict[str, Any] = await ws.receive_json(timeout=ANSWER_S)
    return message


async def opened(ws: AsyncWebSocketSession, secret: str) -> None:
    await ws.send_json({"type": "connection_init",
                        "payload": {"authorization": f"Bearer {secret}"}})
    assert (await receive(ws))["type"] == "connection_ack"


def assert_refused_on_socket(message: dict[str, Any], id: str, limit: str) -> None:
    assert message["type"] == "error" and message["id"] == id, message
    (error,) = message["payload"]
    assert error["extensions"]["code"] == "RATE_LIMITED"
    assert error["extensions"]["limit"] == limit
    assert error["extensions"]["retryAfter"] >= 1


async def test_a_query_over_a_websocket_holds_a_request_slot_of_its_key(
    settings: Settings, namespace: str,
) -> None:
    """A key allowed one operation in flight has one, whether it sends it over HTTP or
    over a socket: its held search on the socket leaves no slot for an HTTP request or
    another query on the socket (both refused `concurrent`), and gives it back."""
    registry, go = held_reranker()
    search = {"in": {"filter": {"namespace": namespace}, "query": "kettle", "mode": "LEXICAL",
                     "reranker": "held"}}
    async with app_with(settings, rerankers=registry, auth_mode="keys",
                        limits=LimitsSettings(request_timeout_s=600)) as client:
        app = client.app  # type: ignore[attr-defined]
        stored, secret = await create_key(ApiKeyGraph(runtime_of(app).client), KeySpec(
            name="socket", namespaces=(namespace,), can_write=True,
            limits=KeyLimits(concurrent=1, streams=8)))
        headers = {"authorization": f"Bearer {secret}"}
        assert (await client.post("/graphql", headers=headers, json={
            "query": WRITE, "variables": {"input": mem(namespace, "kettle on")}})
                ).status_code == 200
        async with connect(client.asgi) as ws:  # type: ignore[attr-defined]
            await opened(ws, secret)
            await ws.send_json({"id": "1", "type": "subscribe",
                                "payload": {"query": HELD_SEARCH, "variables": search}})
            limiter = app.state.gate.limiter
            while limiter.in_flight(stored.id) == (0, 0):  # a condition, not a duration
                await asyncio.sleep(0.01)
            # (requests in flight, live subscriptions): a request, not a stream.
            assert limiter.in_flight(stored.id) == (1, 0)
            refused = await client.post("/graphql", headers=headers,
                                        json={"query": READ, "variables": {"ns": namespace}})
            await ws.send_json({"id": "2", "type": "subscribe",
                                "payload": {"query": READ, "variables": {"ns": namespace}}})
            assert_refused_on_socket(await receive(ws), "2", "concurrent")
            go.set()
            answer = await receive(ws)
            assert answer["type"] == "next" and answer["id"] == "1", answer
            assert answer["payload"]["data"]["search"][0]["memory"]["id"]
            assert (await receive(ws)) == {"id": "1", "type": "complete"}
            # The slot is back: the next query on the socket is served.
            await ws.send_json({"id": "3", "type": "subscribe",
                                "payload": {"query": READ, "variables": {"ns": namespace}}})
            served = await receive(ws)
            assert served["type"] == "next" and served["id"] == "3", served
            assert served["payload"]["data"]["memories"]["totalCount"] == 1
        assert limiter.in_flight(stored.id) == (0, 0)
    assert_rate_limited(refused, "concurrent")


async def test_a_heavier_keys_query_over_a_websocket_gives_way_to_a_lighter_key(
    settings: Settings, namespace: str,
) -> None:
    """In a crowded process (capacity 1), the flooding key's dear listing sent over a
    socket is admitted beside the quiet key's held search and waits at a stage
    boundary while it runs, as the same listing over HTTP does; served once it ends."""
    async with busy_process(settings, namespace, turn_wait_s=0, holder="quiet", held=1,
                            capacity=1, yield_s=60) as busy:
        secret = busy.keys["flood"][1]["authorization"].removeprefix("Bearer ")
        async with connect(busy.client.asgi) as ws:  # type: ignore[attr-defined]
            await opened(ws, secret)
            await ws.send_json({"id": "1", "type": "subscribe", "payload": {
                "query": HEAVY, "variables": {"ns": namespace}}})
            answer = asyncio.create_task(receive(ws))
            while YIELDING not in await busy.metrics():  # a condition, not a duration
                assert not answer.done(), answer.result()
                await asyncio.sleep(0.01)
            busy.go.set()  # the quiet search ends: nothing lighter runs any more
            served = await answer
            assert (await receive(ws)) == {"id": "1", "type": "complete"}
        metrics = await busy.metrics()
    assert served["type"] == "next", served
    assert served["payload"]["data"]["memories"]["edges"][0]["node"]["content"] == "kettle on"
    assert 'memlattice_process_operations{kind="yielding"} 0.0' in metrics
