"""Recall bumps accessCount and lastAccessedAt, off the request path."""

from __future__ import annotations

import asyncio
import time
from typing import Any

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


async def test_a_person_browsing_leaves_access_counts_alone(
    gql: GraphQLClient, namespace: str, session_app: tuple[Any, Any]
) -> None:
    """`x-memlattice-record-access: false` (the explorer's requests): reads by people
    are not recalls by agents, so the hits' popularity stays where it was."""
    from memlattice.server.app import runtime_of

    recorder = runtime_of(session_app[0]).service.access
    assert recorder is not None
    written = await gql.ok(WRITE, {"i": {"namespace": namespace, "content": "the teapot is red"}})
    id = written["writeMemory"]["id"]
    variables = {"i": {"filter": {"namespace": namespace}, "query": "teapot", "mode": "LEXICAL"}}

    async def count_after(headers: dict[str, str]) -> int:
        response = await gql.http.post("/graphql", json={"query": SEARCH, "variables": variables},
                                       headers=headers)
        body = response.json()
        assert not body.get("errors"), body
        assert [h["memory"]["id"] for h in body["data"]["search"]] == [id]
        await recorder.flush()  # whatever the search recorded is in Neo4j now
        memory = (await gql.ok(GET, {"n": namespace, "id": id}))["memory"]
        return int(memory["accessCount"])

    for value in ("false", "0", "FALSE"):
        assert await count_after({"x-memlattice-record-access": value}) == 0
    # The same search by an agent counts, so the header is what made the difference.
    assert await count_after({}) == 1
    assert await count_after({"x-memlattice-record-access": "true"}) == 2
