"""Fairness between tenants: a key over one of its limits is answered 429 with
`Retry-After` and RATE_LIMITED, runs and writes nothing, and other keys are served.

The limits are chosen so the outcome does not depend on timing: a bucket that
refills once in hours, a request held in flight by a reranker that waits for
the test, a subscription that stays open.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import httpx

from memlattice.core.fairness import KeyLimits
from memlattice.core.settings import FairnessSettings, LimitsSettings, Settings
from memlattice.graph.keys import ApiKeyGraph
from memlattice.search.rerank import RerankerRegistry
from memlattice.server.app import runtime_of
from memlattice.services.apikeys import KeySpec, create_key, set_key_limits
from tests.conftest import GraphQLClient
from tests.integration._apps import app_with
from tests.integration._keys import as_key
from tests.integration._support import WRITE, count_memories, mem
from tests.integration.test_subscriptions import EVENTS, connect, next_event, next_message

# One token an hour: after the burst, nothing comes back within any test.
SLOW = 1 / 3600
READ = "query($ns: String!) { memories(filter: {namespace: $ns}, first: 1) { totalCount } }"


async def limited_key(session_app: tuple[Any, Any], namespace: str,
                      limits: KeyLimits) -> tuple[str, str]:
    """(key id, secret) of a read-write key of `namespace` with its own limits."""
    graph = ApiKeyGraph(runtime_of(session_app[0]).client)
    stored, secret = await create_key(graph, KeySpec(
        name="fairness", namespaces=(namespace,), can_write=True, limits=limits))
    return stored.id, secret


def assert_rate_limited(response: httpx.Response, limit: str) -> None:
    assert response.status_code == 429, response.text
    assert int(response.headers["retry-after"]) >= 1
    body = response.json()
    assert "data" not in body  # nothing ran
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "RATE_LIMITED"
    assert error["extensions"]["limit"] == limit
    assert error["extensions"]["retryAfter"] == int(response.headers["retry-after"])


async def post(gql: GraphQLClient, query: str, variables: dict[str, Any]) -> httpx.Response:
    return await gql.http.post("/graphql", json={"query": query, "variables": variables})


async def test_a_key_over_its_rate_is_refused_and_another_key_is_served(
    session_app: tuple[Any, Any], namespace: str, graph_client: Any, gql: GraphQLClient,
) -> None:
    key_id, secret = await limited_key(session_app, namespace, KeyLimits(rate=SLOW, burst=2))
    async with as_key(session_app, secret) as flooder:
        for i in range(2):
            assert (await post(flooder, WRITE, {"input": mem(namespace, f"m{i}")})
                    ).status_code == 200
        refused = await post(flooder, WRITE, {"input": mem(namespace, "one too many")})
        assert_rate_limited(refused, "rate")
        assert await count_memories(graph_client, namespace) == 2
        # Another key (the admin's, with the server's defaults) is served meanwhile.
        assert (await gql.ok(READ, {"ns": namespace}))["memories"]["totalCount"] == 2
        # Lifting the key's rate (`memlattice keys limits ID --rate 0`) holds from the key's
        # next full check: after the early-refusal window (Gate.early), ended here at once.
        graph = ApiKeyGraph(runtime_of(session_app[0]).client)
        await set_key_limits(graph, key_id, KeyLimits(rate=0))
        session_app[0].state.gate.forget(key_id)
        assert (await post(flooder, READ, {"ns": namespace})).status_code == 200
    metrics = (await gql.http.get("/metrics")).text
    assert f'memlattice_rate_limited_total{{key="{key_id}",limit="rate"}} 1.0' in metrics
    assert f'memlattice_key_operations{{key="{key_id}",kind="requests"}} 0.0' in metrics


async def test_a_key_over_its_cost_budget_is_refused_before_anything_runs(
    session_app: tuple[Any, Any], namespace: str, graph_client: Any,
) -> None:
    _, secret = await limited_key(session_app, namespace,
                                  KeyLimits(cost_rate=SLOW, cost_burst=1))
    async with as_key(session_app, secret) as tenant:
        # A full bucket admits an operation dearer than itself, into debt...
        assert (await post(tenant, WRITE, {"input": mem(namespace, "paid")})).status_code == 200
        # ...which the next one waits out.
        refused = await post(tenant, WRITE, {"input": mem(namespace, "unpaid")})
    assert_rate_limited(refused, "cost")
    assert "costs" in refused.json()["errors"][0]["message"]
    assert await count_memories(graph_client, namespace) == 1


async def test_a_key_at_its_concurrency_is_refused_until_one_finishes(
    settings: Settings, namespace: str,
) -> None:
    go = asyncio.Event()

    async def held_reranker(query: str, documents: Sequence[tuple[str, str]]) -> list[float]:
        await go.wait()  # holds the first search in flight until the test lets it go
        return [0.0] * len(documents)

    registry = RerankerRegistry()
    registry.register("held", held_reranker)
    search = ("query($in: SearchInput!) { search(input: $in) { memory { id } } }",
              {"in": {"filter": {"namespace": namespace}, "query": "kettle", "mode": "LEXICAL",
                      "reranker": "held"}})
    # A generous time budget: a busy machine must not turn the held search into TIMEOUT.
    async with app_with(settings, rerankers=registry, auth_mode="keys",
                        limits=LimitsSettings(request_timeout_s=600)) as client:
        app = client.app  # type: ignore[attr-defined]
        graph = ApiKeyGraph(runtime_of(app).client)
        stored, secret = await create_key(graph, KeySpec(
            name="fairness", namespaces=(namespace,), can_write=True,
            limits=KeyLimits(concurrent=1)))
        tenant = GraphQLClient(client)
        client.headers["authorization"] = f"Bearer {secret}"
        await tenant.ok(WRITE, {"input": mem(namespace, "kettle on the stove")})
        first = asyncio.create_task(post(tenant, *search))
        # Until the search is admitted and held (a condition, not a duration: a busy
        # machine only makes this loop longer).
        while app.state.gate.limiter.in_flight(stored.id) != (1, 0):
            assert not first.done(), first.result().text
            await asyncio.sleep(0.01)
        refused = await post(tenant, READ, {"ns": namespace})
        go.set()
        assert (await first).status_code == 200
        assert (await post(tenant, READ, {"ns": namespace})).status_code == 200
    assert_rate_limited(refused, "concurrent")


async def test_subscriptions_count_against_their_own_allowance(
    session_app: tuple[Any, Any], namespace: str,
) -> None:
    _, secret = await limited_key(session_app, namespace, KeyLimits(streams=1, concurrent=1))
    subscribe = {"query": EVENTS, "variables": {"ns": namespace}}
    async with connect(session_app[1]) as ws:
        await ws.send_json({"type": "connection_init",
                            "payload": {"authorization": f"Bearer {secret}"}})
        assert (await next_message(ws))["type"] == "connection_ack"
        await ws.send_json({"id": "1", "type": "subscribe", "payload": subscribe})
        assert (await next_event(ws))["kind"] == "SUBSCRIBED"
        # The open stream leaves the key's one request slot free...
        async with as_key(session_app, secret) as tenant:
            assert (await post(tenant, READ, {"ns": namespace})).status_code == 200
        # ...and a second stream is refused on the same socket, which stays open.
        await ws.send_json({"id": "2", "type": "subscribe", "payload": subscribe})
        refused = await next_message(ws)
        assert refused["type"] == "error" and refused["id"] == "2"
        (error,) = refused["payload"]
        assert error["extensions"]["code"] == "RATE_LIMITED"
        assert error["extensions"]["limit"] == "streams"
        # Completing the first gives its slot back (the ping's answer comes after the
        # server has handled the complete: messages are handled in order).
        await ws.send_json({"id": "1", "type": "complete"})
        await ws.send_json({"type": "ping"})
        assert (await next_message(ws))["type"] == "pong"
        await ws.send_json({"id": "3", "type": "subscribe", "payload": subscribe})
        assert (await next_event(ws))["kind"] == "SUBSCRIBED"


async def test_the_server_defaults_apply_to_every_caller_and_can_be_off(
    settings: Settings, namespace: str,
) -> None:
    tight = FairnessSettings(rate=SLOW, burst=1)
    async with app_with(settings, fairness=tight) as client:
        gql = GraphQLClient(client)
        assert (await post(gql, READ, {"ns": namespace})).status_code == 200
        assert_rate_limited(await post(gql, READ, {"ns": namespace}), "rate")
    off = FairnessSettings(enabled=False, rate=SLOW, burst=1)
    async with app_with(settings, fairness=off) as client:
        gql = GraphQLClient(client)
        for _ in range(3):
            assert (await post(gql, READ, {"ns": namespace})).status_code == 200
