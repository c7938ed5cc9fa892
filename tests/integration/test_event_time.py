"""Event time on write (eventStart/eventEnd from the content's time expressions,
resolved against the memory's own time) and the eventAfter/eventBefore filter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memlattice.graph.transfer import TransferGraph
from memlattice.portability.importer import import_export
from memlattice.server.app import runtime_of
from tests.conftest import GraphQLClient
from tests.integration._support import basis, seeded
from tests.integration.test_portability import export_text, wipe

FIELDS = "id content createdAt eventStart eventEnd"
INGEST = ("mutation($input: ConversationInput!) {"
          f" ingestConversation(input: $input) {{ memories {{ {FIELDS} }} }} }}")
WRITE = f"mutation($input: MemoryInput!) {{ writeMemory(input: $input) {{ {FIELDS} }} }}"
WRITE_MANY = ("mutation($inputs: [MemoryInput!]!) {"
              f" writeMemories(inputs: $inputs) {{ {FIELDS} }} }}")
GET = f"query($ns: String!, $id: ID!) {{ memory(namespace: $ns, id: $id) {{ {FIELDS} }} }}"
LIST = """query($filter: MemoryFilterInput!) {
  memories(filter: $filter, first: 50) { totalCount edges { node { id } } } }"""
SEARCH = """query($input: SearchInput!) { search(input: $input) { memory { id } } }"""


def day(text: str) -> str:
    return f"{text}T00:00:00+00:00"


async def test_a_turn_saying_yesterday_gets_the_day_before_its_time(
    gql: GraphQLClient, graph_client: Any, namespace: str,
) -> None:
    data = await gql.ok(INGEST, {"input": {
        "namespace": namespace, "sessionId": "s-1", "messages": [
            {"speaker": "Caroline", "content": "I went there yesterday",
             "at": "2023-05-08T13:56:00Z", "embedding": seeded(1)},
            {"speaker": "Melanie", "content": "Lovely! How was it?",
             "at": "2023-05-08T13:56:30Z", "embedding": seeded(2)},
        ]}})
    told, asked = data["ingestConversation"]["memories"]
    assert (told["eventStart"], told["eventEnd"]) == (day("2023-05-07"), day("2023-05-08"))
    # System time stays the turn's own time; event time is apart from it.
    assert told["createdAt"].startswith("2023-05-08T13:56:00")
    assert (asked["eventStart"], asked["eventEnd"]) == (None, None)
    # Stored as Neo4j DateTimes (so Cypher compares them as instants), read back alike.
    (row,) = await graph_client.read((
        "MATCH (m:Memory {id: $id}) RETURN valueType(m.eventStart) AS type,"
        " m.eventStart = datetime('2023-05-07T00:00:00Z') AS same,"
        " m.eventEnd = datetime('2023-05-08T00:00:00Z') AS end", {"id": told["id"]}))
    assert (row["type"], row["same"], row["end"]) == ("ZONED DATETIME NOT NULL", True, True)
    got = (await gql.ok(GET, {"ns": namespace, "id": told["id"]}))["memory"]
    assert got == told


async def test_written_memories_resolve_against_their_own_time(
    gql: GraphQLClient, namespace: str,
) -> None:
    one = (await gql.ok(WRITE, {"input": {
        "namespace": namespace, "content": "We moved to Lisbon in May 2023",
        "now": "2024-02-01T09:00:00Z"}}))["writeMemory"]
    assert (one["eventStart"], one["eventEnd"]) == (day("2023-05-01"), day("2023-06-01"))
    many = (await gql.ok(WRITE_MANY, {"inputs": [
        {"namespace": namespace, "content": "I quit my job two years ago",
         "now": "2023-05-08T12:00:00Z"},
        {"namespace": namespace, "content": "Last week I went camping",
         "now": "2023-05-08T12:00:00Z"},
        {"namespace": namespace, "content": "I like green tea"},
    ]}))["writeMemories"]
    assert [(m["eventStart"], m["eventEnd"]) for m in many] == [
        (day("2021-01-01"), day("2022-01-01")),
        (day("2023-05-01"), day("2023-05-08")),  # the ISO week before Monday 8 May
        (None, None),
    ]


async def test_event_filter_keeps_memories_whose_event_time_overlaps(
    gql: GraphQLClient, namespace: str,
) -> None:
    at = "2023-05-08T12:00:00Z"  # a Monday
    written = (await gql.ok(WRITE_MANY, {"inputs": [
        {"namespace": namespace, "content": "kayak trip yesterday", "now": at,
         "embedding": basis(1)},                                        # 7 May
        {"namespace": namespace, "content": "kayak trip in 2021", "now": at,
         "embedding": basis(1)},                                        # 2021
        {"namespace": namespace, "content": "kayak trip next month", "now": at,
         "embedding": basis(1)},                                        # June 2023
        {"namespace": namespace, "content": "kayak trip, some time", "now": at,
         "embedding": basis(1)},                                        # none
    ]}))["writeMemories"]
    may7, y2021, june, timeless = (m["id"] for m in written)

    async def listed(**window: str) -> set[str]:
        data = await gql.ok(LIST, {"filter": {"namespace": namespace, **window}})
        return {e["node"]["id"] for e in data["memories"]["edges"]}

    async def searched(mode: str, **window: str) -> set[str]:
        data = await gql.ok(SEARCH, {"input": {
            "filter": {"namespace": namespace, **window}, "query": "kayak trip",
            "vector": basis(1), "mode": mode, "limit": 10}})
        return {h["memory"]["id"] for h in data["search"]}

    assert await listed() == {may7, y2021, june, timeless}
    # Overlap with [after, before): a range touching the window's edge only is out.
    assert await listed(eventAfter="2023-05-07T12:00:00Z") == {may7, june}
    assert await listed(eventAfter="2023-05-08T00:00:00Z") == {june}
    assert await listed(eventBefore="2023-01-01T00:00:00Z") == {y2021}
    assert await listed(eventAfter="2023-05-01T00:00:00Z",
                        eventBefore="2023-06-01T00:00:00Z") == {may7}
    assert await listed(eventAfter="2030-01-01T00:00:00Z") == set()
    for mode in ("LEXICAL", "SEMANTIC", "HYBRID"):
        assert await searched(mode) == {may7, y2021, june, timeless}, mode
        assert await searched(mode, eventAfter="2023-05-01T00:00:00Z",
                              eventBefore="2023-06-01T00:00:00Z") == {may7}, mode
        assert await searched(mode, eventAfter="2022-01-01T00:00:00Z") == {may7, june}, mode


async def test_event_time_survives_export_and_import(
    gql: GraphQLClient, graph_client: Any, session_app: tuple[Any, Any], namespace: str,
    tmp_path: Path,
) -> None:
    runtime = runtime_of(session_app[0])
    transfer = TransferGraph(runtime.client)
    written = (await gql.ok(WRITE, {"input": {
        "namespace": namespace, "content": "We moved to Lisbon in May 2023",
        "now": "2024-02-01T09:00:00Z"}}))["writeMemory"]
    exported = await export_text(transfer, namespace)
    (record,) = [json.loads(line) for line in exported.splitlines()
                 if json.loads(line).get("id") == written["id"]]
    assert (record["eventStart"], record["eventEnd"]) == (day("2023-05-01"), day("2023-06-01"))
    path = tmp_path / "export.jsonl"
    path.write_text(exported)
    await wipe(graph_client, namespace)
    await import_export(transfer, path, embedder=runtime.service.embedder,
                        dimension=runtime.service.dimension)
    assert (await gql.ok(GET, {"ns": namespace, "id": written["id"]}))["memory"] == written
    (row,) = await graph_client.read((
        "MATCH (m:Memory {id: $id}) RETURN m.eventStart = datetime('2023-05-01T00:00:00Z')"
        " AS same", {"id": written["id"]}))
    assert row["same"] is True
