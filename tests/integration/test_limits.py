"""GraphQL hardening: depth, aliases, cost, tokens, batches, body size, time, introspection.

Every refusal carries a stable code, says which limit was hit, leaks nothing
and writes nothing (checked in the graph).

The shared app's request timeout is generous, so that a slow, busy machine
never turns a structural refusal into a TIMEOUT; the timeout has a test and
an app of its own, with a reranker that never finishes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import pytest

from memlattice.core.settings import LimitsSettings, Settings
from memlattice.search.rerank import RerankerRegistry
from tests.conftest import GraphQLClient
from tests.integration._apps import app_with
from tests.integration._support import WRITE, code, count_memories, mem
from tests.integration.test_errors import assert_clean

LIMITS = LimitsSettings(max_depth=3, max_aliases=3, max_cost=400, max_tokens=400,
                        max_body_bytes=16384, request_timeout_s=120.0)
TIGHT_TIMEOUT = LimitsSettings(request_timeout_s=1.0)


@pytest.fixture(scope="module")
async def limited(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with app_with(settings, limits=LIMITS) as client:
        yield client


@pytest.fixture
def lgql(limited: httpx.AsyncClient) -> GraphQLClient:
    return GraphQLClient(limited)


WRITE_ALIASED = """
mutation($a: MemoryInput!, $b: MemoryInput!, $c: MemoryInput!, $d: MemoryInput!) {
  a: writeMemory(input: $a) { id }
  b: writeMemory(input: $b) { id }
  c: writeMemory(input: $c) { id }
  d: writeMemory(input: $d) { id }
}
"""


async def test_within_limits_works(lgql: GraphQLClient, namespace: str) -> None:
    data = await lgql.ok(
        "mutation($i: MemoryInput!) { writeMemory(input: $i) { id content } }",
        {"i": mem(namespace, "fine")})
    assert data["writeMemory"]["content"] == "fine"


async def test_too_many_aliases_writes_nothing(lgql: GraphQLClient, graph_client: Any,
                                               namespace: str) -> None:
    variables = {k: {"namespace": namespace, "content": f"alias {k}"} for k in "abcd"}
    error = await lgql.error(WRITE_ALIASED, variables)
    assert code(error) == "TOO_COMPLEX"
    assert error["extensions"]["aliases"] == 4
    assert "aliases" in error["message"]
    assert_clean(error)
    assert await count_memories(graph_client, namespace) == 0


async def test_too_deep_is_refused(lgql: GraphQLClient, graph_client: Any,
                                   namespace: str) -> None:
    deep = ("query($ns: String!) { memories(filter: {namespace: $ns}) {"
            " edges { node { id } } } }")
    error = await lgql.error(deep, {"ns": namespace})
    assert code(error) == "TOO_COMPLEX"
    assert error["extensions"]["depth"] == 4
    assert "levels deep" in error["message"]
    shallow = "query($ns: String!) { memories(filter: {namespace: $ns}) { totalCount } }"
    assert (await lgql.ok(shallow, {"ns": namespace}))["memories"]["totalCount"] == 0


async def test_depth_through_fragments_counts(lgql: GraphQLClient, namespace: str) -> None:
    query = """
    query($ns: String!) { memories(filter: {namespace: $ns}) { ...A } }
    fragment A on MemoryConnection { edges { ...B } }
    fragment B on MemoryEdge { node { id } }
    """
    error = await lgql.error(query, {"ns": namespace})
    assert code(error) == "TOO_COMPLEX"
    assert error["extensions"]["depth"] == 4


async def test_cost_follows_variables(lgql: GraphQLClient, namespace: str) -> None:
    query = "query($in: SearchInput!) { search(input: $in) { memory { id content tags } } }"
    search = {"filter": {"namespace": namespace}, "query": "x", "mode": "LEXICAL"}
    await lgql.ok(query, {"in": {**search, "limit": 5}})
    error = await lgql.error(query, {"in": {**search, "limit": 150}})
    assert code(error) == "TOO_COMPLEX"
    assert error["extensions"]["cost"] > LIMITS.max_cost
    assert "limit" in error["message"]
    inline = ("query($ns: String!) { search(input: {filter: {namespace: $ns}, query: \"x\","
              " limit: 150}) { memory { id content tags } } }")
    assert code(await lgql.error(inline, {"ns": namespace})) == "TOO_COMPLEX"


async def test_token_limit_stops_parsing(lgql: GraphQLClient) -> None:
    fields = " ".join(["__typename"] * 500)
    error = await lgql.error("{ " + fields + " }")
    assert code(error) == "BAD_REQUEST"
    assert "tokens" in error["message"]


async def test_body_over_limit_is_413(limited: httpx.AsyncClient, graph_client: Any,
                                      namespace: str) -> None:
    big = mem(namespace, "x" * 20000)
    response = await limited.post("/graphql", json={"query": WRITE, "variables": {"input": big}})
    assert response.status_code == 413
    error = response.json()["errors"][0]
    assert error["extensions"]["code"] == "PAYLOAD_TOO_LARGE"
    assert error["extensions"]["requestId"] == response.headers["x-request-id"]
    assert await count_memories(graph_client, namespace) == 0


async def test_chunked_body_over_limit_is_413(limited: httpx.AsyncClient, graph_client: Any,
                                              namespace: str) -> None:
    payload = json.dumps({"query": WRITE, "variables": {"input": mem(namespace, "y" * 20000)}})

    async def chunks() -> AsyncIterator[bytes]:
        data = payload.encode()
        for start in range(0, len(data), 1000):
            yield data[start:start + 1000]

    response = await limited.post("/graphql", content=chunks(),
                                  headers={"content-type": "application/json"})
    assert "content-length" not in response.request.headers
    assert response.status_code == 413
    assert response.json()["errors"][0]["extensions"]["code"] == "PAYLOAD_TOO_LARGE"
    assert await count_memories(graph_client, namespace) == 0


async def test_chunked_body_within_limit_works(limited: httpx.AsyncClient,
                                               namespace: str) -> None:
    payload = json.dumps({"query": "mutation($i: MemoryInput!) { writeMemory(input: $i) { id } }",
                          "variables": {"i": {"namespace": namespace, "content": "chunked"}}})

    async def chunks() -> AsyncIterator[bytes]:
        data = payload.encode()
        for start in range(0, len(data), 100):
            yield data[start:start + 100]

    response = await limited.post("/graphql", content=chunks(),
                                  headers={"content-type": "application/json"})
    assert response.status_code == 200, response.text
    assert response.json()["data"]["writeMemory"]["id"]


async def test_batches_are_refused_by_default(limited: httpx.AsyncClient, graph_client: Any,
                                              namespace: str) -> None:
    one = {"query": "mutation($i: MemoryInput!) { writeMemory(input: $i) { id } }",
           "variables": {"i": {"namespace": namespace, "content": "batched"}}}
    response = await limited.post("/graphql", json=[one, one])
    assert response.status_code == 400
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    assert await count_memories(graph_client, namespace) == 0


async def test_batches_are_capped_when_enabled(settings: Settings, graph_client: Any,
                                               namespace: str) -> None:
    # The same memory twice: allowDuplicate, or the second would reinforce the first.
    one = {"query": "mutation($i: MemoryInput!) { writeMemory(input: $i) { id } }",
           "variables": {"i": {"namespace": namespace, "content": "batched",
                               "allowDuplicate": True}}}
    async with app_with(settings, limits=LimitsSettings(max_batch_operations=2)) as client:
        refused = await client.post("/graphql", json=[one, one, one])
        assert refused.status_code == 400
        assert refused.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
        # A batch item that is not an operation object was a 500.
        for item in (5, "x", None, [one]):
            odd = await client.post("/graphql", json=[one, item])
            assert odd.status_code == 400, odd.text
            assert odd.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
        assert await count_memories(graph_client, namespace) == 0
        accepted = await client.post("/graphql", json=[one, one])
        assert accepted.status_code == 200
        assert all(r["data"]["writeMemory"]["id"] for r in accepted.json())
    assert await count_memories(graph_client, namespace) == 2


async def test_slow_request_times_out(lgql: GraphQLClient, settings: Settings,
                                      namespace: str) -> None:
    await lgql.ok("mutation($i: MemoryInput!) { writeMemory(input: $i) { id } }",
                  {"i": mem(namespace, "kettle on the stove")})
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def endless_reranker(query: str, documents: Sequence[tuple[str, str]]) -> list[float]:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()
        return []

    registry = RerankerRegistry()
    registry.register("endless", endless_reranker)
    # Without the timeout this search would never answer: the client's own
    # timeout (60 s) would fail the test. On a slow machine the timeout may
    # strike before the reranker is reached; the answer is TIMEOUT either way.
    async with app_with(settings, rerankers=registry, limits=TIGHT_TIMEOUT) as client:
        error = await GraphQLClient(client).error(
            "query($in: SearchInput!) { search(input: $in) { memory { id } } }",
            {"in": {"filter": {"namespace": namespace}, "query": "kettle", "mode": "LEXICAL",
                    "reranker": "endless"}})
    assert code(error) == "TIMEOUT"
    assert error["extensions"]["timeoutSeconds"] == TIGHT_TIMEOUT.request_timeout_s
    assert_clean(error)
    # The work was stopped, not left running behind the answer (if it started).
    assert cancelled.is_set() == started.is_set()


async def test_introspection_on_outside_production(lgql: GraphQLClient) -> None:
    data = await lgql.ok("{ __schema { queryType { name } } }")
    assert data["__schema"]["queryType"]["name"] == "Query"


async def test_introspection_can_be_switched_off(settings: Settings) -> None:
    async with app_with(settings, introspection=False) as client:
        gql = GraphQLClient(client)
        error = await gql.error("{ __schema { queryType { name } } }")
        assert code(error) == "VALIDATION"
        assert "introspection" in error["message"].lower()
        data = await gql.ok("{ __typename }")
        assert data["__typename"] == "Query"


def test_introspection_defaults_off_in_production() -> None:
    production = Settings(environment="production", neo4j={"password": "a-real-secret"})
    assert production.introspection_enabled is False
    assert Settings(environment="production", neo4j={"password": "s"},
                    introspection=True).introspection_enabled is True
    assert Settings(environment="development").introspection_enabled is True
