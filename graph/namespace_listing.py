"""Which namespaces hold memories: the list a namespace picker offers.

The caller's key bounds are passed in as exact names and prefixes, so names of
namespaces the key may not see never leave the database.
"""

from __future__ import annotations

from memlattice.graph.client import GraphClient, Query


def list_namespaces(*, everything: bool, exact: list[str], prefixes: list[str],
                    starting_with: str, limit: int) -> Query:
    """Distinct namespaces of stored memories, in name order, read off the
    `memory_namespace` index; `everything` lifts the key's bounds (keyless dev,
    a `*` key), else a namespace must be one of `exact` or start with a prefix."""
    query = (
        "CYPHER 25\n"
        "MATCH (m:Memory)\n"
        "WHERE m.namespace STARTS WITH $startingWith\n"
        "  AND ($everything OR m.namespace IN $exact\n"
        "       OR any(p IN $prefixes WHERE m.namespace STARTS WITH p))\n"
        "RETURN DISTINCT m.namespace AS namespace\n"
        "ORDER BY namespace\n"
        "LIMIT $limit"
    )
    return query, {"everything": everything, "exact": exact, "prefixes": prefixes,
                   "startingWith": starting_with, "limit": limit}


class NamespaceListGraph:
    """Reads the set of namespaces that hold memories."""

    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def names(self, *, everything: bool, exact: list[str], prefixes: list[str],
                    starting_with: str, limit: int) -> list[str]:
        records = await self.client.read(list_namespaces(
            everything=everything, exact=exact, prefixes=prefixes,
            starting_with=starting_with, limit=limit))
        return [str(r["namespace"]) for r in records]
