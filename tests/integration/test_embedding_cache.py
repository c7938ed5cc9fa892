"""The server embeds once per (model, sha256(text)), and the cache lives in Neo4j."""

from __future__ import annotations

from typing import Any

from memlattice.embeddings import text_digest
from memlattice.graph.embedding_cache import EmbeddingCacheGraph
from tests.conftest import GraphQLClient
from tests.integration._support import WRITE_MANY


async def test_server_embeddings_are_cached_by_model_and_digest(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    text = f"a sentence only this test writes: {namespace}"
    await gql.ok(WRITE_MANY, {"inputs": [{"namespace": namespace, "content": text},
                                         {"namespace": namespace, "content": text}]})
    records = await graph_client.read((
        "MATCH (e:EmbeddingCache) WHERE e.digest = $digest RETURN e.model AS model, e.key AS key",
        {"digest": text_digest(text)},
    ))
    assert len(records) == 1
    assert records[0]["model"] == "wordllama/l2_supercat/256"
    assert records[0]["key"] == f"wordllama/l2_supercat/256|{text_digest(text)}"


async def test_the_graph_store_round_trips_and_separates_models(graph_client: Any) -> None:
    store = EmbeddingCacheGraph(graph_client)
    digest = text_digest("round trip")
    await store.put_many("model-a", {digest: [0.25, 0.5]})
    await store.put_many("model-a", {digest: [0.25, 0.5]})  # idempotent
    assert await store.get_many("model-a", [digest, "missing"]) == {digest: [0.25, 0.5]}
    assert await store.get_many("model-b", [digest]) == {}
