"""How much of a vector index one namespace, or one of its scope buckets, holds
(see memlattice.search.pool).

The whole is read from the label's count store, which Neo4j keeps current, so
it costs nothing; the namespace's part and a bucket's are index seeks that
count their entries, so they cost time in proportion to what they count
(about 20 ms for 100k memories) and are cached by the caller
(memlattice.search.index_shares).

The whole counts every node of the label, not only those in the index
(memories without an embedding, vectors of other spaces): the share comes out
smaller than it is, which only widens the pool. Never narrower.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memlattice.core.auth import Tenant
from memlattice.core.vector_spaces import VectorSpace
from memlattice.graph.client import GraphClient, Query


@dataclass(frozen=True, slots=True)
class IndexCounts:
    own: int
    everyone: int

    @property
    def share(self) -> float:
        """The namespace's fraction of the index; an empty index is all its own."""
        return self.own / self.everyone if self.everyone else 1.0


def counts_query(tenant: Tenant, space: VectorSpace | None) -> Query:
    if space is None:
        return (
            "CYPHER 25\n"
            "CALL () { MATCH (m:Memory) RETURN count(m) AS everyone }\n"
            "CALL () { MATCH (m:Memory) WHERE m.namespace = $namespace RETURN count(m) AS own }\n"
            "RETURN own, everyone",
            {"namespace": tenant.namespace},
        )
    return (
        "CYPHER 25\n"
        "CALL () { MATCH (v:MemoryVector) RETURN count(v) AS everyone }\n"
        "CALL () { MATCH (v:MemoryVector) WHERE v.namespace = $namespace AND v.space = $space\n"
        "  RETURN count(v) AS own }\n"
        "RETURN own, everyone",
        {"namespace": tenant.namespace, "space": space.key},
    )


def scope_counts_query(tenant: Tenant, space: VectorSpace | None,
                       scope_keys: Sequence[str]) -> Query:
    """Entries per scope bucket of the namespace, in one pass (the planner seeks
    the buckets or the namespace, whichever is narrower); empty buckets are absent."""
    label, extra, params = ("Memory", "", {}) if space is None else (
        "MemoryVector", " AND m.space = $space", {"space": space.key})
    return (
        "CYPHER 25\n"
        f"MATCH (m:{label}) WHERE m.namespace = $namespace AND m.scopeKey IN $scopeKeys{extra}\n"
        "RETURN m.scopeKey AS key, count(*) AS n",
        {"namespace": tenant.namespace, "scopeKeys": list(scope_keys), **params},
    )


class IndexShareGraph:
    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def counts(self, *, tenant: Tenant, space: VectorSpace | None) -> IndexCounts:
        """The tenant's namespace's entries in the vector index `space` searches
        (the primary one when None), beside all entries that index may hold."""
        (record,) = await self.client.read(counts_query(tenant, space))
        return IndexCounts(own=int(record["own"]), everyone=int(record["everyone"]))

    async def scope_counts(self, *, tenant: Tenant, space: VectorSpace | None,
                           scope_keys: Sequence[str]) -> dict[str, int]:
        """The namespace's entries in each of `scope_keys` (0 for an empty bucket)."""
        records = await self.client.read(scope_counts_query(tenant, space, scope_keys))
        found = {str(r["key"]): int(r["n"]) for r in records}
        return {k: found.get(k, 0) for k in scope_keys}
