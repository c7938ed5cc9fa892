"""Recall bumps accessCount and lastAccessedAt, off the request path."""

from __future__ import annotations

import asyncio
import time

from tests.conftest import GraphQLClient

WRITE = "mutation($i: MemoryInput!) { writeMemory(input: $i) { id accessCount } }"
SEARCH = "query($i: SearchInput!) { search(input: $i) { memory { id } } }"
GET = "query($n: String!, $id: ID!) { memory(namespace: $n, id: $id) { accessCount lastAccessedAt } }"


async def test_every_search_hit_is_counted(gql: GraphQLClient, namespace: str) -> None:
    written = await gql.ok(WRITE, {"i": {"namespace": namespace, "content": "the kettle is blue"}})
    id = written["writeMemory"]["id"]
    assert written["writeMemory"]["accessCount"] == 0
    for _ in range(3):
        await gql.ok(SEARCH, {"i": {"filter": {"namespace": namespace}, "query": "kettle",
                                    "mode": "LEXICAL"}})
    # The counts land within a flush interval (1 s); the deadline is generous
    # for a busy machine, and only bounds the wait.
    deadline = time.monotonic() + 60
    while True:
        memory = (await gql.ok(GET, {"n": namespace, "id": id}))["memory"]
        if memory["accessCount"] >= 3 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    assert memory["accessCount"] == 3
    assert memory["lastAccessedAt"] is not None
