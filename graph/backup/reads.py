"""Read the whole database in one transaction, streamed (for `memlattice backup`).

Neo4j Community has no snapshot isolation: a transaction reads each record as
last committed (read committed). The backup therefore reads every node, then
every relationship, in one read transaction, and then the endpoints of any
relationship whose node was created after the node scan passed it (so a
relationship never dangles); what that means for writes that commit during
the backup is written out in docs/operating.md ("Backup and restore").
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

import neo4j
from neo4j import AsyncTransaction

from memlattice.graph.client import GraphClient, Query, translated_errors

T = TypeVar("T")

NODES: Query = ("MATCH (n) RETURN elementId(n) AS key, labels(n) AS labels,"
                " properties(n) AS props", {})
RELATIONSHIPS: Query = ("MATCH (a)-[r]->(b) RETURN elementId(r) AS key, type(r) AS type,"
                        " elementId(a) AS start, elementId(b) AS end,"
                        " properties(r) AS props", {})
# Indexes that a constraint owns are created by the constraint; the two token
# lookup indexes every database has are not Memlattice's to recreate.
INDEXES: Query = ("SHOW INDEXES YIELD name, type, owningConstraint, createStatement"
                  " WHERE owningConstraint IS NULL AND type <> 'LOOKUP'"
                  " RETURN name, createStatement ORDER BY name", {})
CONSTRAINTS: Query = ("SHOW CONSTRAINTS YIELD name, createStatement"
                      " RETURN name, createStatement ORDER BY name", {})


def nodes_by_key(keys: Iterable[str]) -> Query:
    """Nodes by element id: the endpoints the node scan did not see."""
    return ("MATCH (n) WHERE elementId(n) IN $keys RETURN elementId(n) AS key,"
            " labels(n) AS labels, properties(n) AS props", {"keys": list(keys)})


@dataclass(frozen=True)
class NodeRow:
    key: str
    labels: list[str]
    props: dict[str, Any]


@dataclass(frozen=True)
class RelationshipRow:
    key: str
    type: str
    start: str
    end: str
    props: dict[str, Any]


@dataclass(frozen=True)
class SchemaItem:
    """An index or constraint, by name, with the statement that creates it."""

    name: str
    statement: str


def _node(record: neo4j.Record) -> NodeRow:
    return NodeRow(record["key"], list(record["labels"]), dict(record["props"]))


class StoreSnapshot:
    """One read transaction over the whole database; see the module docstring."""

    def __init__(self, tx: AsyncTransaction) -> None:
        self._tx = tx

    async def _stream(self, query: Query) -> AsyncIterator[neo4j.Record]:
        text, params = query
        with translated_errors():
            result = await self._tx.run(text, params)
            async for record in result:
                yield record

    async def nodes(self) -> AsyncIterator[NodeRow]:
        async for record in self._stream(NODES):
            yield _node(record)

    async def relationships(self) -> AsyncIterator[RelationshipRow]:
        async for r in self._stream(RELATIONSHIPS):
            yield RelationshipRow(r["key"], r["type"], r["start"], r["end"], dict(r["props"]))

    async def nodes_by_key(self, keys: Iterable[str]) -> list[NodeRow]:
        return [_node(r) async for r in self._stream(nodes_by_key(keys))]


async def in_store_snapshot(client: GraphClient, scan: Callable[[StoreSnapshot], Awaitable[T]],
                            *, fetch_size: int = 2000) -> T:
    """`scan`'s result, run inside one read transaction over the whole database.

    A callback rather than a context manager, so that opening the transaction,
    the scan and closing it are one driver call (`GraphClient.read_once`): a
    backup cut short (Ctrl-C, a shutdown) while the driver opens its connection
    leaves no socket behind, and the session is never closed beside a read of it
    still under way."""

    async def work(tx: AsyncTransaction) -> T:
        return await scan(StoreSnapshot(tx))

    return await client.read_once(work, fetch_size=fetch_size)


async def schema(client: GraphClient) -> list[SchemaItem]:
    """Constraints first (their indexes come with them), then the other indexes."""
    items = [SchemaItem(r["name"], r["createStatement"]) for r in await client.read(CONSTRAINTS)]
    items += [SchemaItem(r["name"], r["createStatement"]) for r in await client.read(INDEXES)]
    return items


async def migration_versions(client: GraphClient) -> list[int]:
    records = await client.read(("MATCH (x:Migration) RETURN x.version AS v ORDER BY v", {}))
    return [int(r["v"]) for r in records]


async def event_positions(client: GraphClient) -> dict[str, int]:
    """Each namespace's last event number (graph.event_log): where the log stood."""
    records = await client.read(("MATCH (c:EventCounter) RETURN c.namespace AS ns,"
                                 " c.seq AS seq", {}))
    return {r["ns"]: int(r["seq"]) for r in records if r["seq"] is not None}
