"""Relevance on hits, `minRelevance`, and the entities recall reads from the graph."""

from __future__ import annotations

from typing import Any

from tests.conftest import GraphQLClient
from tests.integration._support import WRITE_MANY

HITS = """query($input: SearchInput!) {
  search(input: $input) { score relevance memory { id content } } }"""
ENTITIES = """MATCH (m:Memory {id: $id})-[:MENTIONS]->(e:Entity)
RETURN e.key AS key, e.name AS name, e.namespace AS namespace ORDER BY key"""


async def write(gql: GraphQLClient, namespace: str, *contents: str) -> list[str]:
    data = await gql.ok(WRITE_MANY, {"inputs": [{"namespace": namespace, "content": c}
                                                for c in contents]})
    return [m["id"] for m in data["writeMemories"]]


async def search(gql: GraphQLClient, namespace: str, query: str,
                 **options: Any) -> list[dict[str, Any]]:
    data = await gql.ok(HITS, {"input": {"filter": {"namespace": namespace}, "query": query,
                                         **options}})
    hits: list[dict[str, Any]] = data["search"]
    return hits


async def test_every_hit_has_a_relevance_in_the_unit_interval_in_every_mode(
        gql: GraphQLClient, namespace: str) -> None:
    await write(gql, namespace, "Alice moved to Lisbon in 2023", "Bob bakes sourdough bread",
                "The kettle is broken")
    for mode in ({}, {"mode": "LEXICAL"}, {"mode": "SEMANTIC"}, {"scoring": "RRF"}):
        hits = await search(gql, namespace, "where does Alice live now? Lisbon?", **mode)
        assert hits, mode
        assert all(0.0 <= h["relevance"] <= 1.0 for h in hits), mode


async def test_a_memory_holding_every_query_word_is_fully_relevant(
        gql: GraphQLClient, namespace: str) -> None:
    await write(gql, namespace, "Alice moved to Lisbon in 2023", "Bob moved to Porto")
    hits = await search(gql, namespace, "Alice Lisbon", mode="LEXICAL")
    assert hits[0]["memory"]["content"].startswith("Alice")
    assert hits[0]["relevance"] == 1.0
    porto = [h for h in hits if h["memory"]["content"].startswith("Bob")]
    assert all(h["relevance"] < 1.0 for h in porto)


async def test_min_relevance_answers_nothing_relevant(
        gql: GraphQLClient, namespace: str) -> None:
    await write(gql, namespace, "Alice moved to Lisbon in 2023", "Bob bakes sourdough bread")
    # The default search fills its list with the least bad candidates...
    assert await search(gql, namespace, "quantum chromodynamics lecture", mode="SEMANTIC")
    # ...a relevance floor leaves it empty when nothing holds the question.
    assert await search(gql, namespace, "quantum chromodynamics lecture",
                        minRelevance=0.9) == []
    kept = await search(gql, namespace, "sourdough bread", minRelevance=0.9)
    assert [h["memory"]["content"] for h in kept] == ["Bob bakes sourdough bread"]


async def test_a_write_links_the_names_it_mentions_in_its_namespace(
        gql: GraphQLClient, namespace: str, graph_client: Any) -> None:
    (first,) = await write(gql, namespace, "Hey Bob! I met Alice at the Bank of America.")
    rows = await graph_client.read((ENTITIES, {"id": first}))
    assert [(r["key"], r["namespace"]) for r in rows] == [
        ("alice", namespace), ("bank of america", namespace)]  # Bob is spoken to
    # A second mention of Alice meets the same entity node.
    (second,) = await write(gql, namespace, "Alice's garden is lovely.")
    (same,) = await graph_client.read((
        "MATCH (a:Memory {id: $a})-[:MENTIONS]->(e:Entity)<-[:MENTIONS]-(b:Memory {id: $b})"
        " RETURN count(e) AS shared", {"a": first, "b": second}))
    assert same["shared"] == 1


async def test_recall_reads_the_entities_each_candidate_is_about(
        gql: GraphQLClient, namespace: str) -> None:
    # Two speakers say the same words; the question names one of them in lower case.
    await gql.ok("""mutation($input: ConversationInput!) {
      ingestConversation(input: $input) { created } }""", {"input": {
        "namespace": namespace, "sessionId": "s1", "messages": [
            {"speaker": "Melanie", "content": "I painted a sunrise last week"},
            {"speaker": "Caroline", "content": "I painted a sunrise last week"},
            {"speaker": "Caroline", "content": "We should go to the lake"}]}})
    hits = await search(gql, namespace, "what did melanie paint", mode="HYBRID")
    assert hits[0]["memory"]["content"] == "Melanie: I painted a sunrise last week"


INGEST = """mutation($input: ConversationInput!) { ingestConversation(input: $input) { created } }"""


async def test_a_query_that_names_a_time_prefers_what_happened_then(
        gql: GraphQLClient, namespace: str) -> None:
    """Two turns alike in words; the year the question names decides, by the
    turns' recording time (neither names a time) and by what a turn says."""
    await gql.ok(INGEST, {"input": {"namespace": namespace, "sessionId": "trips", "messages": [
        {"speaker": "Ann", "content": "We went camping by the lake with the kids.",
         "at": "2022-07-02T10:00:00Z"},
        {"speaker": "Ann", "content": "We went camping by the lake with the dog.",
         "at": "2023-07-02T10:00:00Z"},
        {"speaker": "Ann", "content": "Back in March 2021 we hiked up a volcano.",
         "at": "2024-01-05T10:00:00Z"},
        {"speaker": "Ann", "content": "We hiked up a volcano with friends.",
         "at": "2024-01-06T10:00:00Z"},
    ]}})

    async def first(query: str) -> str:
        hits = await search(gql, namespace, query, sessionId="trips", scope="SESSION")
        return str(hits[0]["memory"]["content"])

    assert (await first("camping by the lake in 2023")).endswith("the dog.")
    assert (await first("camping by the lake in 2022")).endswith("the kids.")
    assert "Back in March 2021" in await first("which volcano did we hike in 2021?")
    assert "with friends" in await first("which volcano did we hike in 2024?")
