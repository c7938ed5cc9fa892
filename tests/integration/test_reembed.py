"""Changing a namespace's embedding model: background re-embed, search never stops.

The local provider serves WordLlama at 256 dimensions and, as Matryoshka
prefixes of it, at 128 and 64: three real, offline vector spaces. The test
app here is a second replica beside the suite's own (same Neo4j), which is
also how re-embedding behaves with several service processes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from memlattice.core.auth import Tenant
from memlattice.core.settings import Settings
from memlattice.core.vector_spaces import VectorSpace
from memlattice.graph.shares import IndexShareGraph
from memlattice.server.app import runtime_of
from tests.conftest import GraphQLClient
from tests.integration._apps import app_with
from tests.integration._support import code

CONFIGURE = """mutation($ns: String!, $input: NamespaceConfigInput!) {
  configureNamespace(namespace: $ns, input: $input) {
    version embeddingModel embeddingDimension backend } }"""
STATUS = """query($ns: String!) { embeddingStatus(namespace: $ns) {
  activeModel activeDimension targetModel targetDimension status embedded total error } }"""
WRITE_MANY = """mutation($inputs: [MemoryInput!]!) {
  writeMemories(inputs: $inputs) { id version updatedAt } }"""
SEARCH = """query($input: SearchInput!) {
  search(input: $input) { similarityScore memory { id content } } }"""
GET = """query($ns: String!, $id: ID!) { memory(namespace: $ns, id: $id) {
  id version updatedAt embeddingModel embeddingDimension } }"""
AUDIT = """query($ns: String!, $id: ID!) { auditTrail(namespace: $ns, id: $id) { operation } }"""
UPDATE = """mutation($ns: String!, $id: ID!, $patch: MemoryPatchInput!) {
  updateMemory(namespace: $ns, id: $id, patch: $patch) { id version } }"""
DELETE = """mutation($ns: String!, $id: ID!) { deleteMemory(namespace: $ns, id: $id) }"""

FACTS = [
    "The deployment pipeline runs every night at two o'clock",
    "Alice prefers green tea over coffee in the morning",
    "The staging database was migrated to Postgres sixteen",
    "Bob is allergic to peanuts and shellfish",
    "Our quarterly planning meeting happens in the Lisbon office",
]


@pytest.fixture(scope="module")
async def replica(settings: Settings, app_client: httpx.AsyncClient) -> AsyncIterator[
        tuple[Starlette, GraphQLClient]]:
    async with app_with(settings) as http:  # a second process of the service
        yield http.app, GraphQLClient(http)  # type: ignore[attr-defined]


async def _status(gql: GraphQLClient, namespace: str) -> dict[str, Any]:
    status: dict[str, Any] = (await gql.ok(STATUS, {"ns": namespace}))["embeddingStatus"]
    return status


async def _semantic(gql: GraphQLClient, namespace: str, query: str, **extra: Any) -> list[Any]:
    hits: list[Any] = (await gql.ok(SEARCH, {"input": {
        "filter": {"namespace": namespace}, "query": query, "mode": "SEMANTIC", **extra}}))[
        "search"]
    return hits


async def _write(gql: GraphQLClient, namespace: str, texts: list[str]) -> list[dict[str, Any]]:
    written: list[dict[str, Any]] = (await gql.ok(WRITE_MANY, {"inputs": [
        {"namespace": namespace, "content": t} for t in texts]}))["writeMemories"]
    return written


async def test_a_new_model_is_built_in_the_background_and_then_searched(
    replica: tuple[Starlette, GraphQLClient], namespace: str
) -> None:
    app, gql = replica
    worker = runtime_of(app).reembedder
    written = await _write(gql, namespace, FACTS)
    before = {w["id"]: w for w in written}
    await worker.stop()  # hold the build so the namespace is caught mid-way
    try:
        configured = (await gql.ok(CONFIGURE, {"ns": namespace, "input": {
            "embeddingModel": "l2_supercat", "embeddingDimension": 128}}))["configureNamespace"]
        assert configured["embeddingModel"] == "l2_supercat"
        assert configured["embeddingDimension"] == 128
        status = await _status(gql, namespace)
        assert status["status"] == "BUILDING"
        assert (status["activeModel"], status["activeDimension"]) == ("l2_supercat", 256)
        assert (status["targetModel"], status["targetDimension"]) == ("l2_supercat", 128)
        assert status["total"] == len(FACTS)

        # Meanwhile search keeps answering from the space the namespace had.
        hits = await _semantic(gql, namespace, "what does Alice drink?")
        assert hits[0]["memory"]["content"] == FACTS[1]
        assert code(await gql.error(SEARCH, {"input": {
            "filter": {"namespace": namespace}, "vector": [0.1] * 128, "mode": "SEMANTIC"}})
        ) == "DIMENSION_MISMATCH"
        # A memory written during the build goes into the new space too.
        (late,) = await _write(gql, namespace, ["The cat sleeps on the warm windowsill"])
    finally:
        worker.start()
        worker.kick()
    await worker.wait_idle(timeout=120)

    status = await _status(gql, namespace)
    assert status["status"] == "READY" and status["targetModel"] is None
    assert (status["activeModel"], status["activeDimension"]) == ("l2_supercat", 128)
    assert status["embedded"] == status["total"] == len(FACTS) + 1
    hits = await _semantic(gql, namespace, "where does the cat nap?")
    assert hits[0]["memory"]["id"] == late["id"]
    assert hits[0]["similarityScore"] > 0
    hits = await _semantic(gql, namespace, "peanut allergy", vector=None)
    assert hits[0]["memory"]["content"] == FACTS[3]
    # 128-d query vectors are the namespace's now; 256-d ones are refused.
    assert await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                           "vector": [0.1] * 128, "mode": "SEMANTIC"}})
    assert code(await gql.error(SEARCH, {"input": {
        "filter": {"namespace": namespace}, "vector": [0.1] * 256, "mode": "SEMANTIC"}})
    ) == "DIMENSION_MISMATCH"

    # The memories themselves were not rewritten: same version, time, primary vector, audit.
    for id, old in before.items():
        now = (await gql.ok(GET, {"ns": namespace, "id": id}))["memory"]
        assert (now["version"], now["updatedAt"]) == (old["version"], old["updatedAt"])
        assert now["embeddingDimension"] == 256
        audit = (await gql.ok(AUDIT, {"ns": namespace, "id": id}))["auditTrail"]
        assert [a["operation"] for a in audit] == ["write"]


async def test_edits_and_erasures_follow_into_the_side_space(
    replica: tuple[Starlette, GraphQLClient], namespace: str, graph_client: Any
) -> None:
    app, gql = replica
    written = await _write(gql, namespace, FACTS)
    await gql.ok(CONFIGURE, {"ns": namespace, "input": {
        "embeddingModel": "l2_supercat", "embeddingDimension": 64}})
    await runtime_of(app).reembedder.wait_idle(timeout=120)
    assert (await _status(gql, namespace))["activeDimension"] == 64

    edited = written[0]["id"]
    await gql.ok(UPDATE, {"ns": namespace, "id": edited,
                          "patch": {"content": "Volcanoes erupt lava and ash"}})
    hits = await _semantic(gql, namespace, "volcano eruption lava")
    assert hits[0]["memory"]["id"] == edited

    erased = written[1]["id"]
    await gql.ok(DELETE, {"ns": namespace, "id": erased})
    records = await graph_client.read((
        "MATCH (v:MemoryVector) WHERE v.namespace = $ns RETURN v.memoryId AS id", {"ns": namespace}))
    left = {r["id"] for r in records}
    assert erased not in left and left == {w["id"] for w in written} - {erased}
    # The side index's share counts this space's vectors of the namespace only.
    shares, tenant, space = (IndexShareGraph(graph_client), Tenant.system(namespace),
                             VectorSpace("l2_supercat", 64))
    counts = await shares.counts(tenant=tenant, space=space)
    assert counts.own == len(FACTS) - 1 and counts.everyone >= counts.own
    assert await shares.scope_counts(tenant=tenant, space=space,
                                     scope_keys=["namespace", "user:nobody"]) == {
        "namespace": len(FACTS) - 1, "user:nobody": 0}


async def test_back_to_the_default_model_is_immediate_and_drops_side_vectors(
    replica: tuple[Starlette, GraphQLClient], namespace: str, graph_client: Any
) -> None:
    app, gql = replica
    await _write(gql, namespace, FACTS)
    await gql.ok(CONFIGURE, {"ns": namespace, "input": {
        "embeddingModel": "l2_supercat", "embeddingDimension": 128}})
    await runtime_of(app).reembedder.wait_idle(timeout=120)
    # A later configuration that does not name a model keeps the one in use.
    kept = (await gql.ok(CONFIGURE, {"ns": namespace, "input": {"backend": "HYBRID"}}))[
        "configureNamespace"]
    assert (kept["embeddingModel"], kept["embeddingDimension"]) == ("l2_supercat", 128)

    await gql.ok(CONFIGURE, {"ns": namespace, "input": {
        "embeddingModel": "l2_supercat", "embeddingDimension": 256}})
    status = await _status(gql, namespace)
    assert status["status"] == "READY"
    assert (status["activeModel"], status["activeDimension"]) == ("l2_supercat", 256)
    assert (await _semantic(gql, namespace, "Alice tea"))[0]["memory"]["content"] == FACTS[1]
    await runtime_of(app).reembedder.wait_idle(timeout=120)
    records = await graph_client.read((
        "MATCH (v:MemoryVector) WHERE v.namespace = $ns RETURN count(v) AS n", {"ns": namespace}))
    assert records[0]["n"] == 0


async def test_a_model_the_provider_cannot_serve_is_refused_and_changes_nothing(
    replica: tuple[Starlette, GraphQLClient], namespace: str
) -> None:
    _, gql = replica
    await gql.ok(CONFIGURE, {"ns": namespace, "input": {"backend": "LEXICAL"}})
    for bad in ({"embeddingModel": "no_such_wordllama", "embeddingDimension": 256},
                {"embeddingModel": "l2_supercat", "embeddingDimension": 300},
                {"embeddingDimension": 128},
                {"embeddingModel": "", "embeddingDimension": 128}):
        error = await gql.error(CONFIGURE, {"ns": namespace, "input": bad})
        assert code(error) == "VALIDATION", (bad, error)
    config = await gql.ok(CONFIGURE, {"ns": namespace, "input": {"backend": "LEXICAL"}})
    assert config["configureNamespace"]["version"] == 2  # the refused ones wrote nothing
    status = await _status(gql, namespace)
    assert status["status"] == "READY" and status["targetModel"] is None
