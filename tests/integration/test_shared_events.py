"""Live events across two real service processes on the suite's Neo4j.

Two servers (`tests.integration._server`, served like `memlattice serve`) share
one database and nothing else: a write through either must reach subscribers
on both, in the same order, only when it committed, and a subscriber that
reconnects (to either) with its last cursor must get what it missed, or be
told with `missed` that the log no longer holds it.

Nothing here depends on the machine's speed: every wait is for an event to
arrive, bounded by a generous deadline (`PATIENCE_S`), never a measured time.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from httpx_ws import AsyncWebSocketSession, aconnect_ws

from memlattice.core.model import utcnow
from memlattice.core.settings import Settings
from memlattice.graph.event_log import EventLogGraph
from tests._live import Neo4jAddress
from tests._live import spawned_server as live_server
from tests.integration._support import DELETE, UPDATE, WRITE, WRITE_MANY, mem

PATIENCE_S = 120

EVENTS = """
subscription($ns: String!, $after: String) {
  memoryEvents(namespace: $ns, after: $after) {
    seq cursor kind namespace memoryId version missed
  }
}
"""


@pytest.fixture
def servers(two_processes: tuple[str, str]) -> tuple[str, str]:
    """Two service processes on the same Neo4j (the session's, tests/integration/conftest.py):
    their base URLs."""
    return two_processes


@pytest.fixture
def ns() -> str:
    return f"test/{uuid.uuid4().hex[:12]}"


async def write(base: str, namespace: str, content: str) -> str:
    """Write one memory through the server at `base`; its id."""
    async with httpx.AsyncClient(base_url=base, timeout=PATIENCE_S) as http:
        answer = (await http.post("/graphql", json={
            "query": WRITE, "variables": {"input": mem(namespace, content)}})).json()
    assert not answer.get("errors"), answer
    return str(answer["data"]["writeMemory"]["id"])


async def refused(base: str, query: str, variables: dict[str, Any]) -> None:
    """A mutation the server must refuse (and so not commit)."""
    async with httpx.AsyncClient(base_url=base, timeout=PATIENCE_S) as http:
        answer = (await http.post("/graphql", json={"query": query,
                                                    "variables": variables})).json()
    assert answer.get("errors"), answer


@contextlib.asynccontextmanager
async def subscribed(base: str, namespace: str, after: str | None = None
                     ) -> AsyncIterator[tuple[AsyncWebSocketSession, dict[str, Any]]]:
    """A graphql-transport-ws subscription on the server at `base`, live: yields the
    socket and its SUBSCRIBED event."""
    async with (httpx.AsyncClient(base_url=base, timeout=PATIENCE_S) as client,
                aconnect_ws(base + "/graphql", client,
                            subprotocols=["graphql-transport-ws"]) as ws):
        await ws.send_json({"type": "connection_init", "payload": {}})
        assert (await ws.receive_json(timeout=PATIENCE_S))["type"] == "connection_ack"
        await ws.send_json({"id": "1", "type": "subscribe", "payload": {
            "query": EVENTS, "variables": {"ns": namespace, "after": after}}})
        first = await next_event(ws)
        assert first["kind"] == "SUBSCRIBED", first
        yield ws, first


async def next_event(ws: AsyncWebSocketSession) -> dict[str, Any]:
    message = await ws.receive_json(timeout=PATIENCE_S)
    assert message["type"] == "next", message
    assert not message["payload"].get("errors"), message
    event: dict[str, Any] = message["payload"]["data"]["memoryEvents"]
    return event


async def events_until(ws: AsyncWebSocketSession, last_id: str) -> list[dict[str, Any]]:
    """Every event up to and including the one about `last_id`."""
    got = [await next_event(ws)]
    while got[-1]["memoryId"] != last_id:
        got.append(await next_event(ws))
    return got


async def test_writes_through_either_process_reach_both_in_one_order(
    servers: tuple[str, str], ns: str
) -> None:
    a, b = servers
    async with subscribed(a, ns) as (on_a, _), subscribed(b, ns) as (on_b, _):
        written = []
        for i in range(6):
            written.append(await write((a, b)[i % 2], ns, f"note {i}"))
            if i == 2:
                # Refused, so never committed: a stale version, a batch with a bad item.
                await refused(a, UPDATE, {"ns": ns, "id": written[0],
                                          "patch": {"summary": "s"}, "v": 99})
                await refused(b, WRITE_MANY, {"inputs": [mem(ns, "fine"), mem(ns, "")]})
        seen_a = await events_until(on_a, written[-1])
        seen_b = await events_until(on_b, written[-1])
    assert [e["memoryId"] for e in seen_b] == written
    assert [(e["kind"], e["version"]) for e in seen_b] == [("WRITTEN", 1)] * 6
    assert seen_a == seen_b
    seqs = [e["seq"] for e in seen_b]
    assert seqs == list(range(seqs[0], seqs[0] + 6)), seqs
    assert [e["cursor"] for e in seen_b] == [str(s) for s in seqs]


async def test_a_reconnect_with_a_cursor_gets_what_it_missed(
    servers: tuple[str, str], ns: str
) -> None:
    a, b = servers
    async with subscribed(a, ns) as (ws, _):
        first = await write(b, ns, "seen live")
        (event,) = await events_until(ws, first)
    cursor = event["cursor"]
    missed = [await write(a, ns, "while away 1"), await write(b, ns, "while away 2")]
    async with subscribed(b, ns, after=cursor) as (ws, hello):
        assert (hello["cursor"], hello["missed"]) == (cursor, 0)
        caught_up = await events_until(ws, missed[-1])
        live = await write(a, ns, "live again")
        (after,) = await events_until(ws, live)
    assert [e["memoryId"] for e in caught_up] == missed
    assert all(e["missed"] == 0 for e in [*caught_up, after])
    assert after["seq"] == caught_up[-1]["seq"] + 1


async def test_a_cursor_older_than_the_log_is_told_it_missed_events(
    servers: tuple[str, str], ns: str, graph_client: Any
) -> None:
    a, b = servers
    async with subscribed(a, ns) as (_, hello):
        start = hello["cursor"]
    for i in range(3):
        await write(b, ns, f"forgotten by the log {i}")
    # What the retention window does after its time, done now for this namespace only.
    assert await EventLogGraph(graph_client).prune(utcnow(), namespace=ns) == 3
    kept = await write(a, ns, "still kept")
    async with subscribed(b, ns, after=start) as (ws, hello):
        assert hello["missed"] == 3
        (event,) = await events_until(ws, kept)
    assert event["missed"] == 0 and event["kind"] == "WRITTEN"


async def test_a_cursor_past_the_log_is_told_the_log_was_reset(
    servers: tuple[str, str], ns: str
) -> None:
    """A cursor beyond the last event (a store emptied since) is reported as `missed`
    and the subscription goes on from the log's head. (On a cluster such a cursor
    is first checked with the writer, as a reader behind it could mislead; one
    server cannot show that lag, this runs the path.)"""
    a, b = servers
    last = await write(a, ns, "the last one")
    async with subscribed(b, ns) as (_, hello):
        head = int(hello["cursor"])
    async with subscribed(b, ns, after=str(head + 5)) as (ws, hello):
        assert (int(hello["cursor"]), hello["missed"]) == (head, 1)
        live = await write(a, ns, "after the reset")
        (event,) = await events_until(ws, live)
    assert event["seq"] == head + 1 and event["memoryId"] != last


async def test_a_cursor_that_is_not_one_is_refused(servers: tuple[str, str], ns: str) -> None:
    async with (httpx.AsyncClient(base_url=servers[0], timeout=PATIENCE_S) as client,
                aconnect_ws(servers[0] + "/graphql", client,
                            subprotocols=["graphql-transport-ws"]) as ws):
        await ws.send_json({"type": "connection_init", "payload": {}})
        assert (await ws.receive_json(timeout=PATIENCE_S))["type"] == "connection_ack"
        await ws.send_json({"id": "1", "type": "subscribe", "payload": {
            "query": EVENTS, "variables": {"ns": ns, "after": "-1"}}})
        message = await ws.receive_json(timeout=PATIENCE_S)
    errors = message["payload"] if message["type"] == "error" else message["payload"]["errors"]
    assert errors[0]["extensions"]["code"] == "VALIDATION", message


async def test_serve_with_workers_delivers_every_write_to_a_subscriber(
    settings: Settings, tmp_path_factory: pytest.TempPathFactory, ns: str
) -> None:
    """`memlattice serve --workers 2`: each write on a connection of its own (the kernel
    hands connections to either worker) reaches the subscriber, once and in order."""
    neo4j = Neo4jAddress(settings.neo4j.uri or "", settings.neo4j.user,
                         settings.neo4j.password.get_secret_value())
    log = tmp_path_factory.mktemp("workers") / "serve.log"
    with live_server(["memlattice.cli", "serve", "--workers", "2", "--no-neo4j"], neo4j, log,
                     dimension=settings.embedding.dimension, ready_timeout_s=PATIENCE_S,
                     stop_grace_s=60) as served:
        async with subscribed(served.base, ns) as (ws, _):
            written = [await write(served.base, ns, f"note {i}") for i in range(10)]
            seen = await events_until(ws, written[-1])
    assert [e["memoryId"] for e in seen] == written
    assert served.process.returncode == 0, log.read_text()[-3000:]


async def test_an_erased_memory_leaves_no_content_in_the_log(
    servers: tuple[str, str], ns: str, graph_client: Any
) -> None:
    a, b = servers
    secret = f"secret {uuid.uuid4().hex}"
    doomed = await write(a, ns, secret)
    kept = await write(a, ns, "kept as it was")
    log = EventLogGraph(graph_client)
    assert any(secret in payload for _, payload in await log.naming(ns, doomed))
    async with subscribed(b, ns) as (ws, _):
        async with httpx.AsyncClient(base_url=b, timeout=PATIENCE_S) as http:
            answer = (await http.post("/graphql", json={
                "query": DELETE, "variables": {"ns": ns, "id": doomed}})).json()
        assert not answer.get("errors"), answer
        (deleted,) = await events_until(ws, doomed)
    assert deleted["kind"] == "DELETED"
    stored = sorted(await log.naming(ns, doomed))
    # Its WRITTEN and its DELETED (the other memory's WRITTEN came between).
    assert [seq for seq, _ in stored] == [deleted["seq"] - 2, deleted["seq"]]
    assert not any(secret in payload for _, payload in stored)
    (untouched,) = await log.naming(ns, kept)
    assert "kept as it was" in untouched[1]
