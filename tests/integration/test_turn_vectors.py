"""A conversation turn's server-side vector is of its words, its speaker apart, and
the same wherever the server embeds it: ingestion, the side-space write, the
background re-embed, an update (memlattice.core.embedding_text).

The local WordLlama provider serves 256 dimensions and, as a Matryoshka prefix,
128: the namespace is moved to 128 so that the re-embed builds a side space.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from memlattice.core.embedding_text import EmbeddingText
from memlattice.core.settings import Settings
from memlattice.core.vector_spaces import VectorSpace
from memlattice.embeddings import WordLlamaEmbedder
from memlattice.embeddings.memory_vectors import embed_memories
from memlattice.server.app import runtime_of
from tests.conftest import GraphQLClient
from tests.integration._apps import app_with

INGEST = """mutation($input: ConversationInput!) {
  ingestConversation(input: $input) { memories { id content } } }"""
CONFIGURE = """mutation($ns: String!, $input: NamespaceConfigInput!) {
  configureNamespace(namespace: $ns, input: $input) { version } }"""
UPDATE = """mutation($ns: String!, $id: ID!, $patch: MemoryPatchInput!) {
  updateMemory(namespace: $ns, id: $id, patch: $patch) { id content } }"""

SIDE = VectorSpace("l2_supercat", 128)


@pytest.fixture(scope="module")
async def replica(settings: Settings, app_client: httpx.AsyncClient) -> AsyncIterator[
        tuple[Starlette, GraphQLClient]]:
    async with app_with(settings) as http:  # a second process of the service
        yield http.app, GraphQLClient(http)  # type: ignore[attr-defined]


def _cos(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (math.hypot(*a) * math.hypot(*b))


async def _ingest(gql: GraphQLClient, namespace: str, session: str,
                  turns: list[tuple[str, str]]) -> list[dict[str, Any]]:
    done: list[dict[str, Any]] = (await gql.ok(INGEST, {"input": {
        "namespace": namespace, "sessionId": session, "messages": [
            {"speaker": who, "content": text, "at": f"2024-03-0{i + 1}T10:00:00Z"}
            for i, (who, text) in enumerate(turns)]}}))["ingestConversation"]["memories"]
    return done


async def _primary(graph: Any, namespace: str) -> dict[str, list[float]]:
    records = await graph.read(("MATCH (m:Memory {namespace: $ns}) RETURN m.id AS id,"
                                " m.embedding AS v", {"ns": namespace}))
    return {r["id"]: list(r["v"]) for r in records}


async def _side(graph: Any, namespace: str) -> dict[str, list[float]]:
    records = await graph.read((
        f"MATCH (v:MemoryVector {{space: $space}}) WHERE v.namespace = $ns"
        f" RETURN v.memoryId AS id, v.`{SIDE.vector_property}` AS v",
        {"ns": namespace, "space": SIDE.key}))
    return {r["id"]: list(r["v"]) for r in records}


async def test_a_turn_is_embedded_as_its_words_everywhere_the_server_embeds_it(
    replica: tuple[Starlette, GraphQLClient], namespace: str, graph_client: Any
) -> None:
    app, gql = replica
    wide, narrow = WordLlamaEmbedder(dimension=256), WordLlamaEmbedder(dimension=SIDE.dimension)
    turns = [("Jonas", "Maps is eating half my battery"), ("Ines", "Sure!"), ("Jonas", "Sure!")]
    first = await _ingest(gql, namespace, "s-1", turns)
    texts = [EmbeddingText(text, who) for who, text in turns]

    # Ingestion: the turn's words with its speaker apart, not "Jonas: ..." as one text.
    primary = await _primary(graph_client, namespace)
    expected = await embed_memories(wide, texts)
    prefixed = await wide.embed([m["content"] for m in first])
    assert first[0]["content"] == "Jonas: Maps is eating half my battery"
    words = await wide.embed([text for _, text in turns])
    for memory, want, old in zip(first, expected, prefixed, strict=True):
        assert _cos(primary[memory["id"]], want) > 0.9999
        assert _cos(primary[memory["id"]], old) < 0.999
    # "Jonas: Sure!" as one text was mostly the name; now it is mostly "Sure!".
    short = primary[first[2]["id"]]
    assert _cos(prefixed[2], words[2]) < 0.5
    assert _cos(short, words[2]) > 0.8
    # Two speakers' "Sure!" are told apart, but no longer by most of the vector.
    assert 0.6 < _cos(primary[first[1]["id"]], short) < 0.99

    # The background re-embed builds the side space from the stored turns: the same recipe.
    await gql.ok(CONFIGURE, {"ns": namespace, "input": {
        "embeddingModel": SIDE.model, "embeddingDimension": SIDE.dimension}})
    await runtime_of(app).reembedder.wait_idle(timeout=120)
    built = await _side(graph_client, namespace)
    for memory, want in zip(first, await embed_memories(narrow, texts), strict=True):
        assert _cos(built[memory["id"]], want) > 0.9999

    # A turn ingested now goes into both spaces on the write path: the same vectors as
    # the re-embed gave the same turn of the other session.
    (again,) = await _ingest(gql, namespace, "s-2", [("Jonas", "Sure!")])
    side, primary = await _side(graph_client, namespace), await _primary(graph_client, namespace)
    assert _cos(side[again["id"]], built[first[2]["id"]]) > 0.9999
    assert _cos(primary[again["id"]], primary[first[2]["id"]]) > 0.9999

    # An update of the turn's content re-embeds its words, in both spaces.
    await gql.ok(UPDATE, {"ns": namespace, "id": again["id"],
                          "patch": {"content": "Jonas: The battery lasts all day now"}})
    text = EmbeddingText("The battery lasts all day now", "Jonas")
    side, primary = await _side(graph_client, namespace), await _primary(graph_client, namespace)
    assert _cos(primary[again["id"]], (await embed_memories(wide, [text]))[0]) > 0.9999
    assert _cos(side[again["id"]], (await embed_memories(narrow, [text]))[0]) > 0.9999

    # Metadata that no longer names the turn's speaker: the content is embedded whole.
    await gql.ok(UPDATE, {"ns": namespace, "id": again["id"],
                          "patch": {"metadata": {"speaker": "Jo"}}})
    (whole,) = await wide.embed(["Jonas: The battery lasts all day now"])
    side, primary = await _side(graph_client, namespace), await _primary(graph_client, namespace)
    assert _cos(primary[again["id"]], whole) > 0.9999
    (whole,) = await narrow.embed(["Jonas: The battery lasts all day now"])
    assert _cos(side[again["id"]], whole) > 0.9999
