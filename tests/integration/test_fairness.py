"""Fairness between tenants: a key over one of its limits is answered 429 with
`Retry-After` and RATE_LIMITED, runs and writes nothing, and other keys are served.

The limits are chosen so the outcome does not depend on timing: a bucket that
refills once in hours, a request held in flight by a reranker that waits for
the test, a subscription that stays open.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
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
    key_id, secret = await limited_key(session_app, namespace,
                                       KeyLimits(cost_rate=SLOW, cost_burst=1))
    async with as_key(session_app, secret) as tenant:
        # A full bucket admits an operation dearer than itself, into debt...
        assert (await post(tenant, WRITE, {"input": mem(namespace, "paid")})).status_code == 200
        # ...which the next one waits out. Within a second of the key's check it is
        # refused early, not knowing its cost; judged in full, its charge says it.
        session_app[0].state.gate.forget(key_id)
        refused = await post(tenant, WRITE, {"input": mem(namespace, "unpaid")})
    assert_rate_limited(refused, "cost")
    assert "costs" in refused.json()["errors"][0]["message"]
    assert await count_memories(graph_client, namespace) == 1


async def test_an_operation_dearer_than_the_keys_whole_cost_budget_runs_once_it_is_full(
    settings: Settings, namespace: str,
) -> None:
    """A write costs more than this key's whole cost burst (1): it runs on a full
    bucket, into debt; the next is refused with a message that says why and a
    Retry-After that, once waited (on the gate's clock, moved by the test), lets it
    run. Never refused for good."""
    async with app_with(settings, auth_mode="keys") as client:
        app = client.app  # type: ignore[attr-defined]
        gate = app.state.gate
        real, skipped = gate.clock, [0.0]
        gate.clock = lambda: real() + skipped[0]
        graph = ApiKeyGraph(runtime_of(app).client)
        stored, secret = await create_key(graph, KeySpec(
            name="fairness", namespaces=(namespace,), can_write=True,
            limits=KeyLimits(cost_rate=1, cost_burst=1)))
        client.headers["authorization"] = f"Bearer {secret}"
        tenant = GraphQLClient(client)
        assert (await post(tenant, WRITE, {"input": mem(namespace, "paid")})).status_code == 200
        gate.forget(stored.id)  # judged in full, by its charge
        refused = await post(tenant, WRITE, {"input": mem(namespace, "waits")})
        assert_rate_limited(refused, "cost")
        message = refused.json()["errors"][0]["message"]
        assert "more than this API key's whole cost budget holds" in message, message
        skipped[0] += int(refused.headers["retry-after"])  # the client waits as told
        assert (await post(tenant, WRITE, {"input": mem(namespace, "waits")})).status_code == 200
        assert await count_memories(runtime_of(app).client, namespace) == 2


# A search of limit 50 asking for every score and memory field: cost 551
# (resolvers.limits), over five times what one request of a key's rate stands for.
HEAVY_SEARCH = ("query($in: SearchInput!) { search(input: $in) { score similarityScore"
                " ftsScore recencyScore memory { id content tags metadata createdAt version } } }")


async def test_a_keys_heavy_searches_spend_its_rate_faster_than_light_ones(
    session_app: tuple[Any, Any], namespace: str, gql: GraphQLClient,
) -> None:
    """With no cost budget set anywhere, a key's budget is its rate's, each request
    priced at MEMLATTICE_FAIRNESS_REQUEST_COST (100): the burst of 5 requests holds 500,
    which one search of cost 551 spends, and the next waits, early-refused (`cost`)."""
    key_id, secret = await limited_key(session_app, namespace, KeyLimits(rate=SLOW, burst=5))
    heavy = {"in": {"filter": {"namespace": namespace}, "query": "kettle", "limit": 50}}
    await gql.ok(WRITE, {"input": mem(namespace, "kettle on")})  # charged to the admin
    async with as_key(session_app, secret) as flooder:
        assert (await post(flooder, HEAVY_SEARCH, heavy)).status_code == 200
        assert_rate_limited(await post(flooder, HEAVY_SEARCH, heavy), "cost")
        assert_rate_limited(await post(flooder, READ, {"ns": namespace}), "cost")
        session_app[0].state.gate.forget(key_id)  # judged in full: refused by its charge
        refused = await post(flooder, HEAVY_SEARCH, heavy)
        assert_rate_limited(refused, "cost")
        assert "costs 551" in refused.json()["errors"][0]["message"]
    metrics = (await gql.http.get("/metrics")).text
    assert f'memlattice_rate_limited_total{{key="{key_id}",limit="cost"}} 3.0' in metrics
    charged = next(line for line in metrics.splitlines()
                   if line.startswith(f'memlattice_cost_charged_total{{key="{key_id}"}}'))
    assert float(charged.split()[-1]) == 551  # the one search served, nothing refused


def held_reranker() -> tuple[RerankerRegistry, asyncio.Event]:
    """A reranker named `held` that holds every search using it in flight until the
    event is set: a request the test keeps running, whatever the machine's speed."""
    go = asyncio.Event()

    async def held(query: str, documents: Sequence[tuple[str, str]]) -> list[float]:
        await go.wait()
        return [0.0] * len(documents)

    registry = RerankerRegistry()
    registry.register("held", held)
    return registry, go

async def test_a_key_at_its_concurrency_is_refused_until_one_finishes(
    settings: Settings, namespace: str,
) -> None:
    registry, go = held_reranker()
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


def held_search(namespace: str) -> tuple[str, dict[str, Any]]:
    """A search that the `held` reranker holds in flight until the test lets it go."""
    return ("query($in: SearchInput!) { search(input: $in) { memory { id } } }",
            {"in": {"filter": {"namespace": namespace}, "query": "kettle", "mode": "LEXICAL",
                    "reranker": "held"}})


class BusyProcess:
    """An app of capacity 2 (by default) with two keys, `flood` and `quiet`, and two
    searches of `flood` (by default) held in flight by a reranker until `go` is set:
    the process is busy."""

    def __init__(self, client: httpx.AsyncClient, go: asyncio.Event,
                 step: asyncio.Semaphore) -> None:
        self.client = client
        self.go = go
        self.step = step  # each release lets one `stepped` search go on
        self.keys: dict[str, tuple[str, dict[str, str]]] = {}
        self.held: list[asyncio.Task[httpx.Response]] = []

    async def send(self, name: str, query: str, variables: dict[str, Any]) -> httpx.Response:
        return await self.client.post("/graphql", headers=self.keys[name][1],
                                      json={"query": query, "variables": variables})

    async def metrics(self) -> str:
        return (await self.client.get("/metrics")).text


@asynccontextmanager
async def busy_process(settings: Settings, namespace: str, turn_wait_s: float, *,
                       holder: str = "flood", held: int = 2, capacity: int = 2,
                       yield_s: float = 0.5, queue: int = 8) -> AsyncIterator[BusyProcess]:
    registry, go = held_reranker()
    step = asyncio.Semaphore(0)

    async def stepped(query: str, documents: Sequence[tuple[str, str]]) -> list[float]:
        await step.acquire()
        return [0.0] * len(documents)

    registry.register("stepped", stepped)
    search = held_search(namespace)
    # A key stays active for an hour: longer than any test, however busy the machine.
    fairness = FairnessSettings(capacity=capacity, active_s=3600, turn_wait_s=turn_wait_s,
                                yield_s=yield_s, queue=queue)
    async with app_with(settings, rerankers=registry, auth_mode="keys", fairness=fairness,
                        limits=LimitsSettings(request_timeout_s=600),
                        metrics_public=True) as client:
        busy = BusyProcess(client, go, step)
        graph = ApiKeyGraph(runtime_of(client.app).client)  # type: ignore[attr-defined]
        for name in ("flood", "quiet"):
            stored, secret = await create_key(graph, KeySpec(
                name=name, namespaces=(namespace,), can_write=True))
            busy.keys[name] = (stored.id, {"authorization": f"Bearer {secret}"})
        assert (await busy.send("flood", WRITE, {"input": mem(namespace, "kettle on")})
                ).status_code == 200
        busy.held = [asyncio.create_task(busy.send(holder, *search)) for _ in range(held)]
        share = client.app.state.gate.limiter.share  # type: ignore[attr-defined]
        while share.total != held:  # a condition, not a duration
            assert not any(task.done() for task in busy.held)
            await asyncio.sleep(0.01)
        try:
            yield busy
        finally:
            go.set()
            assert [(await task).status_code for task in busy.held] == [200] * held


async def test_a_busy_process_refuses_the_key_with_most_in_flight_and_serves_the_others(
    settings: Settings, namespace: str,
) -> None:
    """memlattice.core.sharing: alone, the flooding key has the whole busy process;
    once another key is active, that key is served and the flooding one is refused
    its turn (429, limit `share`; no wait here), however generous its own limits."""
    async with busy_process(settings, namespace, turn_wait_s=0) as busy:
        assert (await busy.send("flood", READ, {"ns": namespace})).status_code == 200
        assert (await busy.send("quiet", READ, {"ns": namespace})).status_code == 200
        refused = await busy.send("flood", READ, {"ns": namespace})
        assert (await busy.send("quiet", READ, {"ns": namespace})).status_code == 200
        busy.go.set()
        await asyncio.gather(*busy.held)
        assert (await busy.send("flood", READ, {"ns": namespace})).status_code == 200
        metrics = await busy.metrics()
    assert_rate_limited(refused, "share")
    assert "other keys' operations go first" in refused.json()["errors"][0]["message"]
    flood, quiet = busy.keys["flood"][0], busy.keys["quiet"][0]
    assert f'memlattice_rate_limited_total{{key="{flood}",limit="share"}} 1.0' in metrics
    assert f'memlattice_rate_limited_total{{key="{quiet}"' not in metrics
    assert 'memlattice_process_operations{kind="capacity"} 2.0' in metrics


async def test_a_request_waits_for_its_turn_and_runs_when_one_ends(
    settings: Settings, namespace: str,
) -> None:
    """Within `turn_wait_s` a request refused its turn waits, and is served once an
    operation ends and it is no longer the one ahead."""
    async with busy_process(settings, namespace, turn_wait_s=60) as busy:
        assert (await busy.send("quiet", READ, {"ns": namespace})).status_code == 200
        waiting = asyncio.create_task(busy.send("flood", READ, {"ns": namespace}))
        while 'memlattice_process_operations{kind="waiting"} 1.0' not in await busy.metrics():
            assert not waiting.done(), waiting.result().text
            await asyncio.sleep(0.01)
        busy.go.set()  # the held searches end: the process is no longer busy
        assert (await waiting).status_code == 200
        metrics = await busy.metrics()
    assert 'memlattice_process_operations{kind="waiting"} 0.0' in metrics
    assert 'limit="share"' not in metrics


# A listing that costs several hundred (resolvers.limits): far more than a held search.
HEAVY = ("query($ns: String!) { memories(filter: {namespace: $ns}, first: 100) { edges {"
         " node { id content tags metadata createdAt version } } } }")
YIELDING = 'memlattice_process_operations{kind="yielding"} 1.0'


async def test_a_running_request_of_a_heavier_key_gives_way_until_the_lighter_one_ends(
    settings: Settings, namespace: str,
) -> None:
    """memlattice.core.pacing: in a crowded process (capacity 1), the flooding key's
    dear listing is admitted beside the quiet key's held search (it has none in
    flight), then waits at a stage boundary while that search runs, and is served
    once it ends."""
    async with busy_process(settings, namespace, turn_wait_s=0, holder="quiet", held=1,
                            capacity=1, yield_s=60) as busy:
        heavy = asyncio.create_task(busy.send("flood", HEAVY, {"ns": namespace}))
        while YIELDING not in await busy.metrics():
            assert not heavy.done(), heavy.result().text
            await asyncio.sleep(0.01)
        busy.go.set()  # the quiet search ends: nothing lighter runs any more
        served = await heavy
        metrics = await busy.metrics()
    assert served.status_code == 200, served.text
    assert served.json()["data"]["memories"]["edges"][0]["node"]["content"] == "kettle on"
    assert 'memlattice_process_operations{kind="yielding"} 0.0' in metrics


async def test_with_no_budget_to_give_way_a_heavier_keys_request_runs_beside_the_lighter(
    settings: Settings, namespace: str,
) -> None:
    """MEMLATTICE_FAIRNESS_YIELD_S=0: admitted is run, as before stage boundaries."""
    async with busy_process(settings, namespace, turn_wait_s=0, holder="quiet", held=1,
                            capacity=1, yield_s=0) as busy:
        served = await busy.send("flood", HEAVY, {"ns": namespace})  # quiet's still held
        assert not any(task.done() for task in busy.held)
    assert served.status_code == 200, served.text


async def test_a_tenants_cheap_request_goes_before_a_floods_dear_one_while_busy(
    settings: Settings, namespace: str,
) -> None:
    """memlattice.core.sharing weighs work in flight by what each key's operations
    cost: with one search each in flight (capacity 1), the quiet key, whose searches
    are cheap, starts another at once, while the key that has just listed 100
    memories (cost 702) waits for its turn (429 `share` here: no wait)."""
    async with busy_process(settings, namespace, turn_wait_s=0, held=1, capacity=1) as busy:
        # Alone, the flooding key is never refused: its dear listing is served.
        assert (await busy.send("flood", HEAVY, {"ns": namespace})).status_code == 200
        gate = busy.client.app.state.gate  # type: ignore[attr-defined]
        quiet = busy.keys["quiet"][0]
        held = asyncio.create_task(busy.send("quiet", *held_search(namespace)))
        while gate.limiter.share.recent_cost(quiet, gate.clock()) == 0:
            assert not held.done(), held.result().text  # admitted and charged: a condition
            await asyncio.sleep(0.01)
        assert gate.limiter.share.in_flight(quiet) == 1
        served = await busy.send("quiet", READ, {"ns": namespace})
        refused = await busy.send("flood", READ, {"ns": namespace})
        busy.go.set()
        assert (await held).status_code == 200
    assert served.status_code == 200, served.text
    assert_rate_limited(refused, "share")
