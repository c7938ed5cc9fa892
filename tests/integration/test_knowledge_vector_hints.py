"""Near-duplicate hints by vector: paraphrases word overlap misses, found in the index
the namespace searches (primary or side space), only among what the writer may see."""

from __future__ import annotations

import math
import random
from typing import Any

from memlattice.core.model import Sensitivity
from memlattice.core.records.hints import NEAR_DUPLICATE_COSINE, overlap
from memlattice.server.app import runtime_of
from tests.conftest import GraphQLClient
from tests.integration._keys import as_key, make_key
from tests.integration._knowledge import STORE_FACT, fact, spo, write_record
from tests.integration._support import EDGES, seeded

EMBEDDING = "near-duplicate claim (embedding)"
CONFIGURE = """mutation($ns: String!, $input: NamespaceConfigInput!) {
  configureNamespace(namespace: $ns, input: $input) { embeddingModel embeddingDimension } }"""
# With the local WordLlama model: cosine 0.94 (256-d) / 0.96 (64-d), word overlap 0.4.
CLAIM = "Tokyo is the capital of Japan"
PARAPHRASE = "The Japanese capital city is Tokyo"
UNRELATED = "The deploy pipeline runs on Fridays"


def near(vector: list[float], seed: int, noise: float = 0.15) -> list[float]:
    """`vector` nudged in a random direction: cosine about 1 / sqrt(1 + noise²)."""
    rng = random.Random(seed)
    moved = [x + rng.gauss(0.0, noise / math.sqrt(len(vector))) for x in vector]
    norm = math.sqrt(sum(x * x for x in moved))
    return [x / norm for x in moved]


async def store(gql: GraphQLClient, namespace: str, claim: str, **fields: Any) -> dict[str, Any]:
    result: dict[str, Any] = (await gql.ok(STORE_FACT, {"input": fact(
        namespace, "geo", claim, **fields)}))["storeFact"]
    return result


def hinted(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(h["kind"], h["memoryId"], h["reason"]) for h in result["hints"]]


async def test_a_paraphrase_is_found_by_the_local_embedding(gql: GraphQLClient,
                                                             namespace: str) -> None:
    assert overlap(CLAIM, PARAPHRASE) < 0.6  # word overlap alone would miss it
    first = await store(gql, namespace, CLAIM, embedding=None)  # the server embeds
    second = await store(gql, namespace, PARAPHRASE, embedding=None)
    first_id = first["fact"]["memory"]["id"]
    assert hinted(second) == [("SUPPORTS", first_id, EMBEDDING)]
    assert second["hints"][0]["score"] >= NEAR_DUPLICATE_COSINE
    edges = (await gql.ok(EDGES, {"ns": namespace, "id": second["fact"]["memory"]["id"],
                                  "types": ["SUPPORTS"], "direction": "OUT"}))["edges"]
    assert [e["targetId"] for e in edges] == [first_id]
    assert edges[0]["metadata"] == {"candidate": True, "reason": EMBEDDING,
                                    "score": second["hints"][0]["score"]}
    assert (await store(gql, namespace, UNRELATED, embedding=None))["hints"] == []


async def test_the_vector_index_finds_what_shares_no_word(gql: GraphQLClient,
                                                          namespace: str) -> None:
    """No shared word, so neither the subject look-up nor fulltext can find it."""
    vector = seeded(7)
    first = await store(gql, namespace, "Quarterly revenue grew strongly", embedding=vector)
    second = await store(gql, namespace, "Sales went up a lot this period",
                         embedding=near(vector, 1))
    assert hinted(second) == [("SUPPORTS", first["fact"]["memory"]["id"], EMBEDDING)]
    # Far in vector space: no hint. Close but saying "not": a contradiction candidate.
    assert (await store(gql, namespace, "Sales rose a great deal lately",
                        embedding=seeded(8)))["hints"] == []
    denied = await store(gql, namespace, "Sales did not go up this period",
                         embedding=near(vector, 2))
    assert {(kind, id) for kind, id, _ in hinted(denied)} == {
        ("CONTRADICTS", first["fact"]["memory"]["id"]),
        ("CONTRADICTS", second["fact"]["memory"]["id"])}
    assert all("negates" in reason for _, _, reason in hinted(denied))


async def test_semantic_paraphrases_must_agree_on_subject_and_object(
    gql: GraphQLClient, namespace: str
) -> None:
    vector = seeded(11)
    lisbon = (await write_record(gql, namespace, "SEMANTIC", spo("Alice", "lives in", "Lisbon"),
                                 embedding=vector))["record"]["memory"]["id"]
    home = await write_record(gql, namespace, "SEMANTIC",
                              spo("Alice", "has her home in", "Lisbon"),
                              embedding=near(vector, 3))
    assert hinted(home) == [("SUPPORTS", lisbon, EMBEDDING)]
    porto = await write_record(gql, namespace, "SEMANTIC",
                               spo("Alice", "has her house in", "Porto"),
                               embedding=near(vector, 4))
    assert porto["hints"] == []


async def test_records_above_the_writers_clearance_are_never_candidates(
    gql: GraphQLClient, namespace: str, graph_client: Any, session_app: Any
) -> None:
    vector = seeded(21)
    secret = await store(gql, namespace, "Quarterly revenue grew strongly", embedding=vector,
                         sensitivity="HIGH")
    key = await make_key(graph_client, namespace, clearance=Sensitivity.MEDIUM)
    async with as_key(session_app, key) as medium:
        unseen = await store(medium, namespace, "Sales went up a lot this period",
                             embedding=near(vector, 5))
    assert unseen["hints"] == []
    seen = await store(gql, namespace, "Turnover climbed steeply", embedding=near(vector, 6))
    assert {h["memoryId"] for h in seen["hints"]} == {secret["fact"]["memory"]["id"],
                                                      unseen["fact"]["memory"]["id"]}


async def test_a_namespace_on_a_side_space_is_probed_in_that_space(
    gql: GraphQLClient, namespace: str, session_app: Any
) -> None:
    """Primary vectors here are unrelated random ones: only the side space (64-d local
    model, embedded from the text) can see that the two claims say the same."""
    await gql.ok(CONFIGURE, {"ns": namespace, "input": {
        "embeddingModel": "l2_supercat", "embeddingDimension": 64}})
    await runtime_of(session_app[0]).reembedder.wait_idle(timeout=120)
    first = await store(gql, namespace, CLAIM)  # `fact` gives a seeded primary vector
    second = await store(gql, namespace, PARAPHRASE)
    assert hinted(second) == [("SUPPORTS", first["fact"]["memory"]["id"], EMBEDDING)]
    assert (await store(gql, namespace, UNRELATED))["hints"] == []
