"""The share of the shared vector index a search's filter admits (its namespace,
narrowed to its scope buckets), which sizes the search's first pool."""

from __future__ import annotations

import asyncio
from typing import Any

from memlattice.core.auth import Tenant
from memlattice.graph.shares import IndexShareGraph
from memlattice.search.index_shares import IndexShares
from tests.conftest import GraphQLClient

WRITE_MANY = "mutation($inputs: [MemoryInput!]!) { writeMemories(inputs: $inputs) { id } }"
SEARCH = """query($i: SearchInput!) { search(input: $i) { memory { content } } }"""


async def _write(gql: GraphQLClient, namespace: str, count: int, **scope: str) -> None:
    await gql.ok(WRITE_MANY, {"inputs": [
        {"namespace": namespace, "content": f"memory number {i} of {namespace}",
         "embedding": [1.0 if j == i % 256 else 0.0 for j in range(256)], **scope}
        for i in range(count)]})


async def test_counts_are_the_namespace_beside_the_whole_index(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    graph = IndexShareGraph(graph_client)
    tenant = Tenant.system(namespace)
    assert (await graph.counts(tenant=tenant, space=None)).own == 0
    await _write(gql, namespace, 7)
    await _write(gql, namespace + "-neighbour", 5)
    counts = await graph.counts(tenant=tenant, space=None)
    assert counts.own == 7
    # Other tests' memories share the database; the whole is at least these two.
    assert counts.everyone >= 12
    assert counts.share == 7 / counts.everyone


async def test_a_search_never_waits_for_the_count_and_a_stale_one_is_redone(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    await _write(gql, namespace, 3)
    shares = IndexShares(IndexShareGraph(graph_client), ttl_s=0.0)
    tenant = Tenant.system(namespace)
    # Unknown at first: the caller gets None at once (and asks for the full pool).
    assert shares.share(tenant, None) is None
    await shares.wait_idle()
    first = shares.share(tenant, None)
    assert first is not None and 0 < first <= 1
    await shares.wait_idle()
    await _write(gql, namespace, 30)
    # ttl 0: every read is stale, so it answers with the last count and counts again.
    assert shares.share(tenant, None) == first
    await shares.wait_idle()
    later = shares.share(tenant, None)
    assert later is not None and later > first
    await shares.stop()


async def test_only_the_most_recently_counted_are_kept(
    graph_client: Any, namespace: str
) -> None:
    shares = IndexShares(IndexShareGraph(graph_client), max_entries=2)
    for suffix in "abc":
        await shares.refresh(Tenant.system(f"{namespace}-{suffix}"), None)
    assert shares.share(Tenant.system(f"{namespace}-c"), None) is not None
    assert shares.share(Tenant.system(f"{namespace}-b"), None) is not None
    assert shares.share(Tenant.system(f"{namespace}-a"), None) is None  # forgotten
    await shares.stop()


async def test_scope_buckets_are_counted_one_by_one_and_summed(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    await _write(gql, namespace, 6, scope="USER", userId="u1")
    await _write(gql, namespace, 3, scope="SESSION", sessionId="s1", userId="u1")
    await _write(gql, namespace, 2)  # namespace-wide
    graph = IndexShareGraph(graph_client)
    tenant = Tenant.system(namespace)
    assert await graph.scope_counts(tenant=tenant, space=None, scope_keys=[
        "session:u1/s1", "user:u1", "namespace", "session:none"]) == {
        "session:u1/s1": 3, "user:u1": 6, "namespace": 2, "session:none": 0}

    shares = IndexShares(graph)
    chain = ("session:u1/s1", "user:u1", "namespace")
    assert shares.share(tenant, None, chain) is None  # nothing counted yet
    await shares.wait_idle()
    everyone = (await graph.counts(tenant=tenant, space=None)).everyone
    assert shares.share(tenant, None, chain) == 11 / everyone
    assert shares.share(tenant, None, ("user:u1",)) == 6 / everyone
    # A new session of the same user: only its own bucket is missing.
    assert shares.share(tenant, None, ("session:s2", "user:u1", "namespace")) is None
    await shares.wait_idle()
    assert shares.share(tenant, None, ("session:s2", "user:u1", "namespace")) == 8 / everyone
    assert shares.share(tenant, None) == 11 / everyone  # the whole namespace
    await shares.stop()


async def test_searches_answer_before_and_after_the_share_is_known(
    gql: GraphQLClient, namespace: str
) -> None:
    await _write(gql, namespace, 12)
    query = {"filter": {"namespace": namespace}, "mode": "SEMANTIC", "scoring": "SIMILARITY",
             "limit": 3, "vector": [1.0 if j == 4 else 0.0 for j in range(256)]}
    # The first search of a namespace asks for the full pool; later ones for the
    # share-sized first pool. Both give the same answer.
    first = (await gql.ok(SEARCH, {"i": query}))["search"]
    await asyncio.sleep(0.3)
    second = (await gql.ok(SEARCH, {"i": query}))["search"]
    assert first == second
    assert first[0]["memory"]["content"] == f"memory number 4 of {namespace}"
