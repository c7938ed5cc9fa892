"""A search reads of its candidates what ranking needs and what the caller selected
(projection pushdown, memlattice.resolvers.selections): the order, the scores and
every selected field are what a search selecting everything gets."""

from __future__ import annotations

from typing import Any

import pytest

from memlattice.server.app import runtime_of
from tests.conftest import GraphQLClient
from tests.integration._support import MEMORY_FIELDS, WRITE, WRITE_MANY, mem, seeded

SCORES = ("score relevance similarityScore ftsScore recencyScore popularityScore graphScore"
          " boost similarityRank ftsRank expanded")
FULL = ("query($input: SearchInput!) { search(input: $input) { " + SCORES
        + " memory {" + MEMORY_FIELDS + "} conflicts { id content }"
        " outdatedBy { id content status } path { type sourceId targetId } } }")
# Nothing of the memory but its id: the candidates carry only what ranking reads.
BARE = ("query($input: SearchInput!) { search(input: $input) { " + SCORES
        + " memory { id } conflicts { id content } outdatedBy { id content status }"
        " path { type sourceId targetId } } }")
INGEST = """mutation($input: ConversationInput!) {
  ingestConversation(input: $input) { sessionId } }"""
SUPERSEDE = """mutation($id: ID!, $memory: MemoryInput!) {
  supersedeMemory(id: $id, memory: $memory) { current { id } } }"""
PROPOSE = """mutation($ns: String!, $newer: ID!, $older: ID!) {
  proposeUpdate(namespace: $ns, newerId: $newer, olderId: $older, confirm: true) { id } }"""
ADD_EDGE = """mutation($ns: String!, $input: EdgeInput!) {
  addEdge(namespace: $ns, input: $input) { id } }"""
NOT_RECORDED = {"x-memlattice-record-access": "false"}
# Both searches of a comparison rank as of one instant: recency moves with the clock.
NOW = "2026-06-01T12:00:00Z"


async def post(gql: GraphQLClient, query: str, variables: dict[str, Any]) -> Any:
    """A search that leaves access counts alone, so that two of them score alike."""
    response = await gql.http.post("/graphql", json={"query": query, "variables": variables},
                                   headers=NOT_RECORDED)
    body = response.json()
    assert not body.get("errors"), body
    return body["data"]


async def rich_namespace(gql: GraphQLClient, namespace: str) -> dict[str, str]:
    """Memories using every property ranking reads: speakers and turns around them,
    key, summary, tags, agent and user, confidence, salience, event times, creation
    times years apart, a supersession, a confirmed update, a contradiction, and
    access counts."""
    turns = [("Caroline", "Have you been anywhere nice lately?", "2023-05-07T10:00:00Z"),
             ("Melanie", "We went camping by the lake last weekend.", "2023-05-07T10:00:05Z"),
             ("Caroline", "Who went camping with you?", "2023-05-07T10:00:10Z"),
             ("Melanie", "My kids and my husband, we roasted marshmallows.",
              "2023-05-07T10:00:15Z")]
    await gql.ok(INGEST, {"input": {"namespace": namespace, "sessionId": "s-1", "userId": "u-1",
                                    "messages": [{"speaker": who, "content": text, "at": at,
                                                  "embedding": seeded(i + 300)}
                                                 for i, (who, text, at) in enumerate(turns)]}})
    specs = {
        "keyed": mem(namespace, "The camping gear lives in the garage loft.", key="gear",
                     tags=["camping", "home"], summary="where the tent is", salience=0.9,
                     agentId="planner", now="2021-03-01T09:00:00Z"),
        "doubtful": mem(namespace, "Maybe the lake campsite closes in October.",
                        confidence=0.3, userId="u-1", tags=["camping"],
                        now="2024-09-01T09:00:00Z"),
        "dated": mem(namespace, "On 2023-05-06 the family camped at Lake Tahoe.",
                     metadata={"speaker": "Melanie"}, now="2023-05-08T09:00:00Z"),
        "lives": mem(namespace, "Melanie lives in Bergen.", now="2020-01-01T09:00:00Z"),
        "moved": mem(namespace, "Melanie moved to Oslo for work.", now="2024-01-01T09:00:00Z"),
        "claim": mem(namespace, "The lake is warm enough for swimming in May.",
                     now="2023-05-09T09:00:00Z"),
        "denial": mem(namespace, "The lake is far too cold for swimming in May.",
                      now="2023-05-10T09:00:00Z"),
        "old": mem(namespace, "The campsite booking is under Caroline's name.",
                   now="2022-01-01T09:00:00Z"),
    }
    written = (await gql.ok(WRITE_MANY, {"inputs": list(specs.values())}))["writeMemories"]
    ids = {name: m["id"] for name, m in zip(specs, written)}
    current = (await gql.ok(SUPERSEDE, {"id": ids["old"], "memory": mem(
        namespace, "The campsite booking is under Melanie's name now.",
        now="2023-04-01T09:00:00Z")}))["supersedeMemory"]["current"]
    ids["current"] = current["id"]
    await gql.ok(PROPOSE, {"ns": namespace, "newer": ids["moved"], "older": ids["lives"]})
    await gql.ok(ADD_EDGE, {"ns": namespace, "input": {
        "sourceId": ids["denial"], "targetId": ids["claim"], "type": "CONTRADICTS"}})
    return ids


QUESTIONS = [
    {"query": "where is the camping gear?"},
    {"query": "what did the family do in May 2023?"},
    {"query": "where does Melanie live now?"},
    {"query": "is the lake warm enough for swimming?", "scoring": "SIMILARITY"},
    {"query": "lake camping", "scoring": "RRF"},
    {"query": "camping", "mode": "HYBRID", "scoring": "HYBRID", "keyBoost": 2.0,
     "tagBoost": 1.5, "useConfidence": True, "useSalience": True},
    {"query": "who went camping?", "contextHops": 2},
    {"query": "lake swimming", "expansion": {"depth": 2, "types": ["CONTRADICTS", "SUPERSEDES", "RELATED"]}},
    {"query": "camping lake", "mmrLambda": 0.5},
    {"query": "campsite booking", "filter": {"statuses": ["ACTIVE", "SUPERSEDED"]}},
    {"query": "campsite booking", "filter": {"tagsAny": ["camping"]}},
]


@pytest.mark.parametrize("asked", QUESTIONS, ids=[str(i) for i in range(len(QUESTIONS))])
async def test_selecting_only_the_id_ranks_and_scores_as_selecting_everything(
    gql: GraphQLClient, namespace: str, session_app: tuple[Any, Any], asked: dict[str, Any],
) -> None:
    ids = await rich_namespace(gql, namespace)
    recorder = runtime_of(session_app[0]).service.access
    assert recorder is not None
    for _ in range(2):  # popularity has counts to read
        await gql.ok("query($i: SearchInput!) { search(input: $i) { memory { id } } }",
                     {"i": {"filter": {"namespace": namespace}, "query": "camping lake"}})
    await recorder.flush()
    asked = {**asked, "filter": {"namespace": namespace, **asked.get("filter", {})},
             "embedding": seeded(301), "limit": 12, "now": NOW}
    full = (await post(gql, FULL, {"input": asked}))["search"]
    bare = (await post(gql, BARE, {"input": asked}))["search"]
    assert len(full) >= 2
    assert [{**h, "memory": h["memory"]["id"]} for h in bare] == [
        {**h, "memory": h["memory"]["id"]} for h in full]
    everything = {h["memory"]["id"]: h["memory"] for h in full}
    assert set(everything) <= set(ids.values()) | set(await turn_ids(gql, namespace))


async def turn_ids(gql: GraphQLClient, namespace: str) -> list[str]:
    data = await gql.ok("""query($f: MemoryFilterInput!) { memories(filter: $f, first: 50) {
        edges { node { id } } } }""", {"f": {"namespace": namespace, "sessionId": "s-1"}})
    return [e["node"]["id"] for e in data["memories"]["edges"]]


async def test_fields_selected_through_fragments_and_aliases_hold_their_values(
    gql: GraphQLClient, namespace: str,
) -> None:
    """A field selected only inside a named fragment, an inline fragment, under an alias
    or behind `@include` is read like any other: never its default in place of its value."""
    await rich_namespace(gql, namespace)
    asked = {"filter": {"namespace": namespace}, "query": "camping gear garage",
             "embedding": seeded(301), "limit": 12}
    full = (await post(gql, FULL, {"input": asked}))["search"]
    spread = (await post(gql, """query($input: SearchInput!, $yes: Boolean!) {
        search(input: $input) { memory { id ...Parts ... on Memory { where: metadata }
          salience @include(if: $yes) } } }
      fragment Parts on Memory { key summary tags agentId confidence createdAt version
        ... on Memory { sensitivity memoryType lastAccessedAt } }""",
                            {"input": asked, "yes": True}))["search"]
    assert [h["memory"]["id"] for h in spread] == [h["memory"]["id"] for h in full]
    for shown, whole in zip(spread, full):
        m, w = shown["memory"], whole["memory"]
        assert m["where"] == w["metadata"]
        for name in ("key", "summary", "tags", "agentId", "confidence", "createdAt", "version",
                     "sensitivity", "lastAccessedAt"):
            assert m[name] == w[name], name
    keyed = next(h["memory"] for h in spread if h["memory"]["key"] == "gear")
    assert keyed["summary"] == "where the tent is" and keyed["salience"] == 0.9
    assert keyed["version"] == 1 and keyed["agentId"] == "planner"


async def test_a_memory_field_that_reads_the_whole_memory_gets_it(
    gql: GraphQLClient, namespace: str,
) -> None:
    """`mayReplace` reads more than its own property: such a selection projects all."""
    written = (await gql.ok(WRITE, {"input": mem(
        namespace, "The standup is at 9:30.", now="2025-01-01T09:00:00Z")}))["writeMemory"]
    await gql.ok(WRITE, {"input": mem(namespace, "The standup moved to 11:00.",
                                      now="2025-03-01T09:00:00Z")})
    data = await post(gql, """query($input: SearchInput!) { search(input: $input) {
        memory { id mayReplace { memory { id } } } } }""", {"input": {
        "filter": {"namespace": namespace}, "query": "standup moved", "limit": 5}})
    newer = next(h["memory"] for h in data["search"] if h["memory"]["id"] != written["id"])
    assert [c["memory"]["id"] for c in newer["mayReplace"]] == [written["id"]]
