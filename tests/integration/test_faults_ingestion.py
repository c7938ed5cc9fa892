"""Faults during ingestion (issue 30, item 5): cut mid-request, sent again, whole.

The service talks to the suite's Neo4j through a TCP proxy (tests._proxy),
which stands in for a Neo4j restart (every connection reset, new ones refused
for longer than the driver retries) and for a slow Neo4j (every reply
delayed). What these tests hold the service to:

* an `ingestConversation` or a `writeMemories` batch cut in the middle, by
  Neo4j going away or by the client giving up, is answered cleanly (or not at
  all, for the client that left) and, sent again, leaves exactly what an
  uninterrupted run leaves: every turn, the NEXT chain in order, the session
  node's derived keys and its COVERS relationships, one audit entry per memory;
* a Neo4j that stops answering never keeps a request past the service's
  request timeout: the budget ends it with TIMEOUT, it is not left hanging;
  also when the budget runs out while the driver opens a connection, which
  then leaks no socket (the driver's connect is let finish, not cancelled);
* a conversation over the batch limit (10,000 turns) is refused with
  VALIDATION, writing nothing; one at the limit (1,000 turns) is served, and a
  body just over the body limit gets 413; each within a bounded memory.
"""

from __future__ import annotations

import asyncio
import base64
import gc
import json
import re
import struct
import time
import tracemalloc
import uuid
import warnings
from collections.abc import AsyncIterator
from typing import Any

import httpx
import psutil
import pytest

from memlattice.core.settings import EmbeddingSettings, LimitsSettings, Settings
from tests._proxy import Neo4jProxy, neo4j_proxy
from tests._stalled import StalledPort
from tests.integration._apps import app_with
from tests.integration._faults import answer_cap_s, answered, operation, until_served
from tests.integration._support import seeded

INGEST = """mutation($input: ConversationInput!) {
  ingestConversation(input: $input) { sessionId memories { id } } }"""
WRITE_MANY = "mutation($is: [MemoryInput!]!) { writeMemories(inputs: $is) { id } }"
SEARCH = "query($in: SearchInput!) { search(input: $in) { memory { id } } }"
MEMORY = 'query($ns: String!) { memory(namespace: $ns, id: "m-1") { id } }'
# The local port in an unclosed socket's ResourceWarning.
LADDR = re.compile(r"laddr=\('[\d.]+', (\d+)\)")
SPEAKERS = ("Caroline", "Melanie", "Dana")
WORDS = ("camping", "lake", "pottery", "marathon", "violin", "garden", "Lisbon", "painting")


def vector(i: int) -> str:
    """A client vector as the compact base64 float32 the Vector scalar takes."""
    return base64.b64encode(struct.pack("<256f", *seeded(i))).decode()


def conversation(namespace: str, turns: int, session_id: str = "s-1") -> dict[str, Any]:
    return {"namespace": namespace, "sessionId": session_id, "userId": "u-1", "messages": [
        {"speaker": SPEAKERS[i % 3], "at": f"2024-03-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z",
         "content": f"turn {i}: {WORDS[i % 8]} with {SPEAKERS[(i + 1) % 3]} ({i * 7 % 13})",
         "embedding": vector(i)} for i in range(turns)]}


@pytest.fixture
async def proxy(settings: Settings) -> AsyncIterator[Neo4jProxy]:
    async with neo4j_proxy(settings.neo4j.uri or "") as running:
        yield running


# What these tests cut is Neo4j, not the request budget (but for the test of it):
# a busy machine may take longer than the default 30 s over a large ingestion.
ROOMY = LimitsSettings(request_timeout_s=600)


def through(settings: Settings, proxy: Neo4jProxy, *, neo4j: dict[str, Any] | None = None,
            **overrides: Any) -> Any:
    """An app on the suite's Neo4j, reached through the proxy; client vectors only.
    `neo4j`: Neo4jSettings fields to change (the driver's timeouts)."""
    overrides.setdefault("limits", ROOMY)
    driver = settings.neo4j.model_copy(update={"uri": proxy.uri, **(neo4j or {})})
    return app_with(settings, neo4j=driver,
                    embedding=EmbeddingSettings(provider="none", dimension=256), **overrides)


async def post(http: httpx.AsyncClient, query: str, variables: dict[str, Any], *,
               limits: LimitsSettings = ROOMY) -> dict[str, Any]:
    """The answer of a service running with `limits`; a failure when none comes within
    the answer cap (tests.integration._faults)."""
    response = await answered(
        http.post("/graphql", json={"query": query, "variables": variables}),
        within_s=answer_cap_s(limits), what=operation(query))
    assert response.status_code == 200, response.text[:500]
    body: dict[str, Any] = response.json()
    return body


async def until_none_connected(port: int, *, within_s: float = 120.0) -> None:
    """Wait until none of this process's sockets is connected to `port` (the proxy): a
    closed app holds no connection to Neo4j. A socket left open is a failure here, in
    the test that left it, rather than a ResourceWarning in whichever test collects it."""
    def connected() -> list[str]:
        return [f"{c.laddr} -> {c.raddr} {c.status}"
                for c in psutil.Process().net_connections("tcp")
                if c.raddr and c.raddr.port == port]

    for _ in range(int(within_s / 0.05)):
        if not connected():
            return
        await asyncio.sleep(0.05)
    pytest.fail(f"still connected to the proxy {within_s:g}s after the app closed: {connected()}")


def unavailable(body: dict[str, Any]) -> bool:
    return bool(body["errors"][0]["extensions"]["code"] == "UNAVAILABLE")


async def session_state(graph_client: Any, namespace: str) -> dict[str, Any]:
    """Everything a stored session is, without ids and write times: the turns along the
    NEXT chain, who spoke each, the session's derived keys and COVERS, the counts."""
    (chain,) = await graph_client.read(("""
        MATCH (first:Memory {namespace: $ns}) WHERE NOT ()-[:NEXT]->(first)
        MATCH path = (first)-[:NEXT*0..]->(last) WHERE NOT (last)-[:NEXT]->()
        WITH path ORDER BY length(path) DESC LIMIT 1
        RETURN [m IN nodes(path) | [m.content, toString(m.createdAt), m.sessionId, m.userId,
                COLLECT { MATCH (m)-[:SPOKEN_BY]->(e) RETURN e.name }]] AS turns""",
        {"ns": namespace}))
    (session,) = await graph_client.read(("""
        MATCH (s:Session {namespace: $ns})
        RETURN s {.*, namespace: null, keyedAt: null, createdAt: null, updatedAt: null}
                 AS props,
               COLLECT { MATCH (s)-[c:COVERS]->(e) RETURN [e.key, c.turns] ORDER BY e.key }
                 AS covers""", {"ns": namespace}))
    (counts,) = await graph_client.read(("""
        RETURN COUNT { (:Memory {namespace: $ns}) } AS memories,
               COUNT { (:Memory {namespace: $ns})-[:NEXT]->() } AS next,
               COUNT { (:Memory {namespace: $ns})-[:IN_SESSION]->() } AS inSession,
               COUNT { (a:AuditEntry {namespace: $ns}) } AS audits,
               COUNT { (:Session {namespace: $ns}) } AS sessions""", {"ns": namespace}))
    return {"turns": chain["turns"], "session": dict(session["props"]),
            "covers": session["covers"], "counts": dict(counts)}


async def cut_mid_request(proxy: Neo4jProxy, request: asyncio.Task[Any], *,
                          down_s: float) -> None:
    """Once the request's statements are on their way to Neo4j, drop every connection."""
    sent = proxy.upstream_bytes
    while proxy.upstream_bytes - sent < 20_000 and not request.done():
        await asyncio.sleep(0.01)
    assert not request.done(), "the request finished before it could be cut"
    proxy.cut(down_s=down_s)


@pytest.mark.parametrize("fault", ["neo4j restart", "client gone"])
async def test_an_ingestion_cut_mid_way_and_sent_again_is_whole(
        settings: Settings, proxy: Neo4jProxy, graph_client: Any, fault: str) -> None:
    reference, faulted = (f"test/{uuid.uuid4().hex[:12]}" for _ in range(2))
    turns = 60
    async with through(settings, proxy) as http:
        assert not (await post(http, INGEST, {"input": conversation(reference, turns)})
                    ).get("errors")
        # Replies slowed down: the request is surely mid-way when the cut comes.
        proxy.latency_s = 0.3
        request = asyncio.create_task(post(http, INGEST,
                                           {"input": conversation(faulted, turns)}))
        if fault == "neo4j restart":
            # Down for longer than the driver retries (max_retry_time_s = 3).
            await cut_mid_request(proxy, request, down_s=6)
            body = await request  # `post` fails it when no answer comes (a hang)
            # UNAVAILABLE, or served after all when the driver's retry got through.
            assert body.get("errors") is None or unavailable(body), body
        else:
            await cut_mid_request(proxy, request, down_s=0)
            request.cancel()  # the client hangs up: its request is cancelled
            with pytest.raises(asyncio.CancelledError):
                await request
        proxy.latency_s = 0.0
        # Sent again until served: the proxy lets connections through again after
        # down_s, and the service must reconnect by itself (however long this machine
        # takes to; `until_served` fails only when it never does).
        body, _ = await until_served(
            lambda: post(http, INGEST, {"input": conversation(faulted, turns)}),
            what="the ingestion sent again", answer_within_s=answer_cap_s(ROOMY))
        assert len(body["data"]["ingestConversation"]["memories"]) == turns
    expected = await session_state(graph_client, reference)
    assert expected["counts"] == {"memories": turns, "next": turns - 1, "inSession": turns,
                                  "audits": turns, "sessions": 1}
    assert await session_state(graph_client, faulted) == expected


async def test_a_batch_cut_mid_way_and_sent_again_is_whole(
        settings: Settings, proxy: Neo4jProxy, graph_client: Any, namespace: str) -> None:
    batch = [{"namespace": namespace, "id": str(uuid.uuid4()), "tags": ["fault"],
              "content": f"note {i} {WORDS[i % 8]}", "embedding": vector(i)}
             for i in range(150)]
    async with through(settings, proxy) as http:
        proxy.latency_s = 0.3
        request = asyncio.create_task(post(http, WRITE_MANY, {"is": batch}))
        await cut_mid_request(proxy, request, down_s=6)
        body = await request  # `post` fails it when no answer comes (a hang)
        assert body.get("errors") is None or unavailable(body), body
        (partial,) = await graph_client.read((
            "MATCH (m:Memory {namespace: $ns}) RETURN count(m) AS n", {"ns": namespace}))
        assert partial["n"] in (0, len(batch))  # a batch is one transaction
        proxy.latency_s = 0.0
        body, _ = await until_served(lambda: post(http, WRITE_MANY, {"is": batch}),
                                     what="the batch sent again",
                                     answer_within_s=answer_cap_s(ROOMY))
        assert [m["id"] for m in body["data"]["writeMemories"]] == [m["id"] for m in batch]
    rows = await graph_client.read((
        "MATCH (m:Memory {namespace: $ns}) RETURN m.id AS id, m.content AS content, m.version AS v,"
        " COUNT { (a:AuditEntry {memoryId: m.id}) } AS audits", {"ns": namespace}))
    assert sorted((r["id"], r["content"], r["v"], r["audits"]) for r in rows) == sorted(
        (m["id"], m["content"], 1, 1) for m in batch)


async def test_a_slow_neo4j_never_keeps_a_request_past_its_timeout(
        settings: Settings, proxy: Neo4jProxy, graph_client: Any, namespace: str) -> None:
    # A small budget, so that the answer cap (several times it) stays short.
    limits = LimitsSettings(request_timeout_s=2.0)
    cap_s = answer_cap_s(limits)
    # The driver gives up by itself too (a connection not made within its connection
    # timeout, retried for max_retry_time_s: UNAVAILABLE after about 10 s with the
    # defaults). Its timeouts here are beyond the answer cap, so that only the request
    # budget can end these requests within it.
    driver = {"connection_timeout_s": 120.0, "acquisition_timeout_s": 300.0}
    assert min(driver.values()) > cap_s
    async with through(settings, proxy, limits=limits, neo4j=driver) as http:
        # Neo4j stops answering: every reply from it is held for an hour, far past the
        # answer cap. So nothing but the budget ends these requests: without it they
        # wait for a reply that does not come, and `post` fails at the cap (a loaded
        # machine answers far inside it). How long they took is a figure, printed.
        proxy.latency_s = 3600.0
        for query, variables in (
                (INGEST, {"input": conversation(namespace, 5)}),
                (SEARCH, {"in": {"filter": {"namespace": namespace}, "query": "camping"}})):
            started = time.monotonic()
            body = await post(http, query, variables, limits=limits)
            took = time.monotonic() - started
            assert body["errors"][0]["extensions"]["code"] == "TIMEOUT", body
            print(f"\n# Neo4j silent: {body['errors'][0]['extensions']['code']} after"
                  f" {took:.2f}s (budget {limits.request_timeout_s:g}s)")
        # The held replies are dropped with their connections (the transaction under way
        # is rolled back by Neo4j); new ones go through at once.
        proxy.cut()
        proxy.latency_s = 0.0
    # The app has closed: the calls still running (the search's shared read) were given
    # up on before its driver closed, so no connection of it outlives it.
    await until_none_connected(proxy.port)
    # Whatever the slowed transaction does, it is one transaction: all or nothing.
    state = await graph_client.read((
        "RETURN COUNT { (:Memory {namespace: $ns}) } AS n,"
        " COUNT { (:AuditEntry {namespace: $ns}) } AS audits", {"ns": namespace}))
    assert state[0]["n"] in (0, 5) and state[0]["audits"] == state[0]["n"]


async def test_a_request_cut_by_its_budget_while_the_driver_connects_leaks_no_socket(
        settings: Settings, proxy: Neo4jProxy, namespace: str) -> None:
    limits = LimitsSettings(request_timeout_s=5.0)
    # A connect lasts up to this long: far past the answer cap, so that only the budget
    # can end the request within it (not the connect giving up).
    driver = {"connection_timeout_s": 120.0, "acquisition_timeout_s": 300.0}
    assert min(driver.values()) > answer_cap_s(limits)
    connected: set[int] = set()  # the local ports of every connect to the stalled port

    async def watch(stalled: StalledPort) -> None:
        while True:
            connected.update(stalled.connecting())
            await asyncio.sleep(0.05)

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", ResourceWarning)
        async with through(settings, proxy, limits=limits, neo4j=driver) as http:
            # Neo4j's host stops answering, down to the TCP connect: the connections
            # the service holds are dropped, and a new one hangs (tests._stalled). The
            # request finds its connection dead and opens another, which the budget
            # cuts short; `memory` reads the graph directly (a search's first reads are
            # shared ones, which a request's budget does not cancel).
            stalled = proxy.stall()
            watching = asyncio.ensure_future(watch(stalled))
            try:
                body = await post(http, MEMORY, {"ns": namespace}, limits=limits)
            finally:
                watching.cancel()
            assert body["errors"][0]["extensions"]["code"] == "TIMEOUT", body
            print(f"\n# TIMEOUT; {len(connected)} connects began, {len(stalled.connecting())}"
                  " still under way")
            stalled.close()  # the connects still under way are refused: the app closes
        gc.collect()
    # Only the sockets of those connects are this test's: a leak another test left
    # may be collected here too (it is printed, for whoever looks for it).
    unclosed = [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)]
    ours = [m for m in unclosed if (port := LADDR.search(m)) and int(port[1]) in connected]
    if len(ours) < len(unclosed):
        print(f"# not this test's: {[m for m in unclosed if m not in ours]}")
    assert not ours


async def test_conversations_at_and_over_the_limits_are_served_or_refused_cleanly(
        settings: Settings, proxy: Neo4jProxy, graph_client: Any, namespace: str) -> None:
    at_limit = json.dumps({"query": INGEST, "variables": {
        "input": conversation(namespace, 1000)}}).encode()
    over = json.dumps({"query": INGEST, "variables": {
        "input": conversation(namespace, 10_000)}}).encode()
    limits = LimitsSettings(max_body_bytes=len(at_limit) + 64, request_timeout_s=600)
    headers = {"content-type": "application/json"}
    async with through(settings, proxy, limits=limits) as http:
        tracemalloc.start()
        try:
            refused = await http.post("/graphql", content=over, headers=headers)
            assert refused.status_code == 413  # 10,000 turns: over the body limit
            roomy = LimitsSettings(max_body_bytes=len(over) + 64, request_timeout_s=600)
            async with through(settings, proxy, limits=roomy) as wide:
                body = (await wide.post("/graphql", content=over, headers=headers)).json()
            assert body["errors"][0]["extensions"]["code"] == "VALIDATION", body["errors"]
            _, peak_refusing = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            served = (await http.post("/graphql", content=at_limit, headers=headers)).json()
            _, peak_serving = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert not served.get("errors"), served.get("errors")
    assert len(served["data"]["ingestConversation"]["memories"]) == 1000
    state = await session_state(graph_client, namespace)
    assert state["counts"]["memories"] == 1000 and state["counts"]["next"] == 999
    print(f"\n# bodies: 10,000 turns {len(over) / 1e6:.1f} MB refused (peak Python memory"
          f" {peak_refusing / 1e6:.0f} MB), 1,000 turns {len(at_limit) / 1e6:.1f} MB served"
          f" (peak {peak_serving / 1e6:.0f} MB)")
    # Bounded: the Python heap's peak (the app built for the refusal included) stays
    # within a fixed budget, whatever the conversation's length.
    assert peak_refusing < 512e6 and peak_serving < 512e6
