"""Health, readiness, Prometheus metrics, request ids and structured logs."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr

from memlattice.core.settings import EmbeddingSettings, Settings
from memlattice.search.rerank import RerankerRegistry
from memlattice.server.observability.logs import JsonFormatter
from tests.integration._apps import app_with
from tests.integration._keys import make_key
from tests.integration._support import WRITE, mem

DIM = 256


@pytest.fixture(scope="module")
async def client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with app_with(settings) as http:
        yield http


@pytest.fixture
def json_logs() -> Iterator[io.StringIO]:
    """Everything logged during the test, as the service's JSON lines."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(previous)


def samples(text: str, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    found: dict[tuple[tuple[str, str], ...], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                found[tuple(sorted(sample.labels.items()))] = sample.value
    return found


async def post(http: httpx.AsyncClient, query: str, variables: dict[str, object],
               headers: dict[str, str] | None = None) -> httpx.Response:
    return await http.post("/graphql", json={"query": query, "variables": variables},
                           headers=headers or {})


async def test_health_and_readiness(client: httpx.AsyncClient) -> None:
    assert (await client.get("/healthz")).json()["status"] == "ok"
    ready = await client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["status"] == "ready"


async def test_metrics_count_operations_queries_and_errors(client: httpx.AsyncClient,
                                                           namespace: str) -> None:
    ok = await post(client, WRITE, {"input": mem(namespace, "metrics are counted")})
    assert not ok.json().get("errors")
    bad = await post(client, WRITE, {"input": mem("/absolute", "refused")})
    assert bad.json()["errors"][0]["extensions"]["code"] == "VALIDATION"
    text = (await client.get("/metrics")).text
    requests = samples(text, "memlattice_request_seconds_count")
    assert requests[(("operation", "writeMemory"), ("type", "mutation"))] >= 2
    neo4j = samples(text, "memlattice_neo4j_seconds_count")
    assert any(value >= 1 and "create" in dict(labels)["query"]
               for labels, value in neo4j.items()), neo4j
    assert all("<locals>" not in dict(labels)["query"] for labels in neo4j)
    errors = samples(text, "memlattice_errors_total")
    assert errors[(("code", "VALIDATION"),)] >= 1
    assert samples(text, "memlattice_requests_in_flight")[()] >= 1  # the scrape itself


async def test_operation_labels_come_from_the_schema(client: httpx.AsyncClient) -> None:
    """A client-chosen operationName never becomes a label (unbounded series)."""
    await client.post("/graphql", json={"query": "query Anything123 { __typename }",
                                        "operationName": "Anything123"})
    await client.post("/graphql", json={"query": "{ notAField }"})
    text = (await client.get("/metrics")).text
    labels = {dict(k)["operation"] for k in samples(text, "memlattice_request_seconds_count")}
    assert "Anything123" not in labels and "notAField" not in labels
    assert "__typename" in labels and "invalid" in labels


async def test_embedding_time_is_measured(settings: Settings, namespace: str) -> None:
    local = settings.model_copy(update={"embedding": EmbeddingSettings(provider="local")})
    async with app_with(local) as http:
        written = await post(http, WRITE, {"input": {"namespace": namespace,
                                                     "content": f"embedded fresh {namespace}"}})
        assert not written.json().get("errors"), written.json()
        text = (await http.get("/metrics")).text
    embedding = samples(text, "memlattice_embedding_seconds_count")
    assert embedding.get((("provider", "local"),), 0) >= 1, embedding


async def test_request_id_is_echoed_or_generated(client: httpx.AsyncClient,
                                                 namespace: str) -> None:
    given = await post(client, WRITE, {"input": mem("/bad", "x")},
                       headers={"x-request-id": "trace-42.a"})
    assert given.headers["x-request-id"] == "trace-42.a"
    assert given.json()["errors"][0]["extensions"]["requestId"] == "trace-42.a"
    generated = await client.get("/healthz")
    assert len(generated.headers["x-request-id"]) == 32
    hostile = await client.get("/healthz", headers={"x-request-id": "bad id\twith spaces"})
    assert hostile.headers["x-request-id"] != "bad id\twith spaces"


async def test_log_lines_carry_the_request_id(client: httpx.AsyncClient, namespace: str,
                                              json_logs: io.StringIO) -> None:
    await post(client, WRITE, {"input": mem(namespace, "logged")},
               headers={"x-request-id": "log-me-1"})
    lines = [json.loads(line) for line in json_logs.getvalue().splitlines()]
    access = [line for line in lines if line["logger"] == "memlattice.access"
              and line.get("request_id") == "log-me-1"]
    assert access, lines
    assert access[0]["status"] == 200 and access[0]["path"] == "/graphql"
    assert access[0]["duration_ms"] >= 0
    assert "logged" not in json.dumps(access)  # values never land in logs


async def broken_reranker(query: str, documents: Sequence[tuple[str, str]]) -> list[float]:
    raise RuntimeError("secret internals: /srv/app/plugin.py line 3")


async def test_internal_errors_are_masked_and_logged_with_the_id(
    settings: Settings, namespace: str, json_logs: io.StringIO
) -> None:
    """A buggy plugin (here a reranker that raises) is the unexpected error: the client
    gets INTERNAL and the request id, the log gets the stack trace and the same id."""
    registry = RerankerRegistry()
    registry.register("broken", broken_reranker)
    async with app_with(settings, rerankers=registry) as http:
        await post(http, WRITE, {"input": mem(namespace, "rerank me please")})
        response = await post(
            http, "query($in: SearchInput!) { search(input: $in) { memory { id } } }",
            {"in": {"filter": {"namespace": namespace}, "query": "rerank", "mode": "LEXICAL",
                    "reranker": "broken"}}, headers={"x-request-id": "mask-1"})
        metrics = (await http.get("/metrics")).text
    error = response.json()["errors"][0]
    assert error["extensions"] == {"code": "INTERNAL", "requestId": "mask-1"}
    assert "secret" not in response.text and "RuntimeError" not in response.text
    assert samples(metrics, "memlattice_errors_total")[(("code", "INTERNAL"),)] == 1
    entries = [json.loads(line) for line in json_logs.getvalue().splitlines()]
    logged = [e for e in entries if e["logger"] == "memlattice.errors"]
    assert logged and logged[0]["request_id"] == "mask-1"
    assert "secret internals" in logged[0]["exc"]


async def test_behind_keys_metrics_are_for_operators(
    session_app: tuple[Any, Any], app_client: httpx.AsyncClient, graph_client: Any,
    namespace: str,
) -> None:
    """The session app runs with keys and neither a metrics token nor public metrics."""
    assert (await app_client.get("/metrics")).status_code == 200  # the admin key
    tenant_key = await make_key(graph_client, namespace, write=True)
    transport = httpx.ASGITransport(app=session_app[1])
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as anyone:
        refused = await anyone.get("/metrics")
        assert refused.status_code == 401
        assert refused.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
        tenant = await anyone.get("/metrics", headers={"authorization": f"Bearer {tenant_key}"})
        assert tenant.status_code == 403
        assert tenant.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"
        assert "memlattice_" not in refused.text + tenant.text


async def test_a_metrics_token_or_public_metrics_open_the_scrape(settings: Settings) -> None:
    token = "t" * 32
    async with app_with(settings, auth_mode="keys", metrics_token=SecretStr(token)) as http:
        assert (await http.get("/metrics")).status_code == 401
        wrong = await http.get("/metrics", headers={"authorization": "Bearer " + "u" * 32})
        assert wrong.status_code == 401
        right = await http.get("/metrics", headers={"authorization": f"Bearer {token}"})
        assert right.status_code == 200 and "memlattice_requests_in_flight" in right.text
        # The token opens /metrics only, never GraphQL.
        graphql = await http.post("/graphql", json={"query": "{ __typename }"},
                                  headers={"authorization": f"Bearer {token}"})
        assert graphql.status_code == 401
    async with app_with(settings, auth_mode="keys", metrics_public=True) as http:
        assert (await http.get("/metrics")).status_code == 200


def test_a_short_metrics_token_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 24"):
        Settings(environment="test", metrics_token=SecretStr("short"))
