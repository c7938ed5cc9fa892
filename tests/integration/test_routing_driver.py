"""The service on a routing driver (`neo4j://`), as it runs against a cluster or Aura.

The suite's Neo4j is one server; with the `neo4j://` scheme the driver still
fetches a routing table and sends reads to readers and writes to the writer,
so this runs every path of the cluster configuration except the replication
delay. The delay is what the bookmarks are for: every transaction of a client,
whether a single query or a read-check-write function, must advance one causal
chain, or a read served by a lagging member would miss the write before it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import neo4j
import pytest

from memlattice.core.settings import Settings
from memlattice.server.app import runtime_of
from tests.conftest import GraphQLClient
from tests.integration._apps import app_with
from tests.integration._support import GET, UPDATE, WRITE, mem

SEARCH = "query($in: SearchInput!) { search(input: $in) { memory { id content } } }"


def routing_uri(uri: str) -> str:
    """`bolt://h:p` -> `neo4j://h:p` (and `bolt+s` -> `neo4j+s`); routing URIs unchanged."""
    scheme, rest = uri.split("://", 1)
    return scheme.replace("bolt", "neo4j", 1) + "://" + rest


@pytest.fixture(scope="module")
async def routed(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    uri = routing_uri(settings.neo4j.uri or "")
    assert uri.startswith("neo4j")
    neo4j_settings = settings.neo4j.model_copy(update={"uri": uri})
    async with app_with(settings, neo4j=neo4j_settings) as client:
        yield client


async def test_the_app_runs_a_routing_driver(routed: httpx.AsyncClient) -> None:
    client = runtime_of(routed.app).client  # type: ignore[attr-defined]
    assert isinstance(client.driver, neo4j.AsyncNeo4jDriver)
    assert not isinstance(client.driver, neo4j.AsyncBoltDriver)


async def test_a_client_reads_its_own_writes(routed: httpx.AsyncClient, namespace: str) -> None:
    gql = GraphQLClient(routed)
    written = (await gql.ok(WRITE, {"input": mem(namespace, "routed kettle")}))["writeMemory"]
    # Straight after the write: a point read, a list, and a search (read routing).
    got = (await gql.ok(GET, {"ns": namespace, "id": written["id"]}))["memory"]
    assert got["content"] == "routed kettle"
    hits = (await gql.ok(SEARCH, {"in": {"filter": {"namespace": namespace},
                                         "query": "kettle", "mode": "LEXICAL"}}))["search"]
    assert [h["memory"]["id"] for h in hits] == [written["id"]]
    updated = (await gql.ok(UPDATE, {"ns": namespace, "id": written["id"],
                                     "patch": {"content": "routed teapot"},
                                     "v": written["version"]}))["updateMemory"]
    got = (await gql.ok(GET, {"ns": namespace, "id": written["id"]}))["memory"]
    assert got["content"] == "routed teapot" and got["version"] == updated["version"]


async def test_every_transaction_advances_one_causal_chain(routed: httpx.AsyncClient,
                                                           namespace: str) -> None:
    """A single-query write (writeMemory) and a managed read-check-write
    transaction (updateMemory) both land in the bookmarks the next read waits for."""
    runtime = runtime_of(routed.app)  # type: ignore[attr-defined]
    client = runtime.client
    # The earlier test's searches left access counts: write them now, so that
    # no flush of the recorder moves the bookmarks in between.
    assert runtime.service.access is not None
    await runtime.service.access.flush()
    gql = GraphQLClient(routed)
    seen: list[Any] = [set(await client.bookmarks.get_bookmarks())]
    written = (await gql.ok(WRITE, {"input": mem(namespace, "chained")}))["writeMemory"]
    seen.append(set(await client.bookmarks.get_bookmarks()))
    await gql.ok(UPDATE, {"ns": namespace, "id": written["id"],
                          "patch": {"content": "chained again"}, "v": written["version"]})
    seen.append(set(await client.bookmarks.get_bookmarks()))
    assert seen[1] and seen[1] != seen[0], "the single-query write left no bookmark"
    assert seen[2] and seen[2] != seen[1], "the write transaction left no bookmark"
