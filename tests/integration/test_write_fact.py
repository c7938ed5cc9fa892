"""writeMemory with `memoryType: "fact"` stores a fact exactly as storeFact would.

It is the first thing a user writing facts tries (issue 16, item 9): the fact gets
its label, kind and claim-derived id, the same claim again reinforces it, and
recallFacts finds it.
"""

from __future__ import annotations

import zlib
from typing import Any

from tests.conftest import GraphQLClient
from tests.integration._knowledge import RECALL_FACTS, STORE_FACT, fact
from tests.integration._support import code, count_memories, mem, seeded

WRITE_FACT = ("mutation($input: MemoryInput!) { writeMemory(input: $input) {"
              " id memoryType content confidence metadata } }")


def fact_memory(namespace: str, claim: str, **fields: Any) -> dict[str, Any]:
    """The same vector `fact()` gives the claim, so both paths embed alike."""
    return mem(namespace, claim, memoryType="fact",
               embedding=seeded(zlib.crc32(claim.encode())), **fields)


async def test_write_memory_fact_is_stored_as_store_fact_would(
        gql: GraphQLClient, graph_client: Any, namespace: str) -> None:
    first = await gql.raw(WRITE_FACT, {"input": fact_memory(
        namespace, "Alice prefers tea.", confidence=0.6)})
    assert not first.get("errors"), first
    written = first["data"]["writeMemory"]
    assert written["id"].startswith("fact-") and written["memoryType"] == "fact"
    assert written["metadata"]["factKind"] == "general"
    assert "stored as a new fact" in first["extensions"]["notes"][0]

    again = await gql.raw(WRITE_FACT, {"input": fact_memory(
        namespace, "alice prefers TEA", confidence=0.9)})
    assert again["data"]["writeMemory"]["id"] == written["id"]
    assert again["data"]["writeMemory"]["confidence"] == 0.9
    assert "reinforced the existing fact" in again["extensions"]["notes"][0]

    # storeFact of the same (kind, claim) lands on the very same fact.
    stored = (await gql.ok(STORE_FACT, {"input": fact(namespace, "general",
                                                      "Alice prefers tea")}))["storeFact"]
    assert stored["created"] is False and stored["fact"]["memory"]["id"] == written["id"]
    assert await count_memories(graph_client, namespace) == 1
    labels = await graph_client.read(("MATCH (m:Memory {id: $id}) RETURN m:Fact AS fact",
                                      {"id": written["id"]}))
    assert labels[0]["fact"] is True

    found = (await gql.ok(RECALL_FACTS, {"filter": {"namespace": namespace},
                                         "kind": "general"}))["recallFacts"]
    assert [h["fact"]["memory"]["id"] for h in found] == [written["id"]]


async def test_write_memory_fact_takes_its_kind_from_metadata(
        gql: GraphQLClient, namespace: str) -> None:
    written = (await gql.ok(WRITE_FACT, {"input": fact_memory(
        namespace, "Deploys need two reviews", metadata={"factKind": "policy"})}))
    stored = (await gql.ok(STORE_FACT, {"input": fact(
        namespace, "policy", "Deploys need two reviews")}))["storeFact"]
    assert stored["fact"]["memory"]["id"] == written["writeMemory"]["id"]
    assert stored["fact"]["kind"] == "policy"


async def test_write_memory_fact_refuses_an_id_and_a_bad_kind(
        gql: GraphQLClient, graph_client: Any, namespace: str) -> None:
    with_id = await gql.error(WRITE_FACT, {"input": fact_memory(
        namespace, "Bob likes coffee", id="my-fact")})
    assert code(with_id) == "VALIDATION" and with_id["extensions"]["field"] == "id"
    assert "derived from its claim" in with_id["message"]
    bad_kind = await gql.error(WRITE_FACT, {"input": fact_memory(
        namespace, "Bob likes coffee", metadata={"factKind": "Not A Kind"})})
    assert code(bad_kind) == "VALIDATION" and "kind" in bad_kind["message"]
    assert await count_memories(graph_client, namespace) == 0
