"""Write then search through /graphql: the foundation's promise, end to end."""

from __future__ import annotations

from tests.conftest import GraphQLClient

WRITE = """
mutation($input: MemoryInput!) { writeMemory(input: $input) { id version status } }
"""
SEARCH = """
query($input: SearchInput!) {
  search(input: $input) { score similarityScore ftsScore memory { id content } }
}
"""


async def test_write_then_search_returns_the_memory(gql: GraphQLClient, namespace: str) -> None:
    written = await gql.ok(WRITE, {"input": {"namespace": namespace,
                                             "content": "Alice moved to Lisbon in 2023"}})
    await gql.ok(WRITE, {"input": {"namespace": namespace, "content": "Bob prefers green tea"}})
    memory = written["writeMemory"]
    assert memory["version"] == 1 and memory["status"] == "ACTIVE"

    data = await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                           "query": "Where does Alice live now?"}})
    hits = data["search"]
    assert hits[0]["memory"]["id"] == memory["id"]
    assert hits[0]["ftsScore"] is not None and hits[0]["similarityScore"] is not None
