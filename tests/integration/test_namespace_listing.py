"""`namespaces`: the namespace picker lists only what the caller's key may read."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from memlattice.graph.keys import ApiKeyGraph
from memlattice.server.app import runtime_of
from memlattice.services.apikeys import KeySpec, create_key
from tests.conftest import GraphQLClient

WRITE = "mutation($i: MemoryInput!) { writeMemory(input: $i) { id } }"
NAMESPACES = "query($p: String, $l: Int! = 200) { namespaces(prefix: $p, limit: $l) }"


async def test_a_limited_key_sees_only_its_namespaces(
    gql: GraphQLClient, session_app: tuple[Any, Any]
) -> None:
    root = f"test/ns-{uuid.uuid4().hex[:10]}"
    mine, team_a, team_b, other = (f"{root}/mine", f"{root}/team/a", f"{root}/team/b",
                                   f"{root}/other")
    for ns in (mine, team_a, team_b, other):
        await gql.ok(WRITE, {"i": {"namespace": ns, "content": f"a memory of {ns}"}})
    graph = ApiKeyGraph(runtime_of(session_app[0]).client)
    _, limited = await create_key(graph, KeySpec(name="picker", namespaces=(
        mine, f"{root}/team/*", f"{root}/never-written")))

    transport = httpx.ASGITransport(app=session_app[1])
    async with httpx.AsyncClient(transport=transport, base_url="http://test",
                                 headers={"authorization": f"Bearer {limited}"}) as http:
        seen = (await GraphQLClient(http).ok(NAMESPACES, {"p": root}))["namespaces"]
        # With no prefix, every namespace of this key (the database holds many more).
        unprefixed = (await GraphQLClient(http).ok(NAMESPACES, {}))["namespaces"]
    assert seen == [mine, team_a, team_b]  # name order; `other` is not this key's
    assert unprefixed == seen

    # The admin key (every namespace) sees the fourth too; limit cuts in name order.
    everything = (await gql.ok(NAMESPACES, {"p": root}))["namespaces"]
    assert everything == [mine, other, team_a, team_b]
    assert (await gql.ok(NAMESPACES, {"p": root, "l": 2}))["namespaces"] == [mine, other]


async def test_namespaces_refuses_a_bad_limit_and_a_missing_key(
    gql: GraphQLClient, session_app: tuple[Any, Any]
) -> None:
    error = await gql.error(NAMESPACES, {"l": 0})
    assert error["extensions"]["code"] == "VALIDATION"
    transport = httpx.ASGITransport(app=session_app[1])
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        error = await GraphQLClient(http).error(NAMESPACES, {})
    assert error["extensions"]["code"] == "UNAUTHENTICATED"
