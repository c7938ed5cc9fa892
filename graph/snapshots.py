"""Reads that give change events their subject: memories and relationships by id.

Events are published only when someone listens, so these reads run only then
(see memlattice.services.change_events). They ignore status and expiry on purpose: a
forgotten or superseded memory is still the subject of its event.
"""

from __future__ import annotations

from collections.abc import Sequence

from memlattice.core.model import EdgeType
from memlattice.graph.client import GraphClient, Query
from memlattice.graph.codec import Edge, Memory, edge_from_record, exists, memory_from_properties
from memlattice.graph.projections import project
from memlattice.graph.visibility import unrestricted


def memories_by_id(*, namespace: str, ids: list[str]) -> Query:
    query = (
        "CYPHER 25\nUNWIND $ids AS id\n"
        "MATCH (m:Memory {id: id}) WHERE m.namespace = $namespace\n"
        # Its successor too: whether a subscriber may see that one decides whether
        # the event may name it (memlattice.services.events.Audience).
        "OPTIONAL MATCH (later:Memory {id: m.supersededBy}) WHERE later.namespace = $namespace\n"
        f"RETURN {project()} AS m, {project('later')} AS later"
    )
    # Unredacted: each subscriber's view is cut from it (memlattice.services.events.Audience).
    return query, {**unrestricted(), "namespace": namespace, "ids": ids}


def edge_by_id(*, namespace: str, edge_id: str) -> Query:
    query = (
        "CYPHER 25\n"
        "MATCH (a:Memory)-[r]->(b:Memory)\n"
        "WHERE r.id = $edgeId AND type(r) IN $types AND a.namespace = $namespace"
        " AND b.namespace = $namespace\n"
        "RETURN r {.*} AS r, type(r) AS type, a.id AS source, b.id AS target"
    )
    return query, {"namespace": namespace, "edgeId": edge_id,
                   "types": [t.value for t in EdgeType]}


class SnapshotGraph:
    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def memories(self, *, namespace: str, ids: Sequence[str]) -> dict[str, Memory]:
        """The memories by id, plus the successor each superseded one names."""
        if not ids:
            return {}
        records = await self.client.read(memories_by_id(namespace=namespace, ids=list(ids)))
        found = [memory_from_properties(r[k]) for r in records for k in ("later", "m")
                 if r[k] is not None and exists(r[k])]
        return {m.id: m for m in found}

    async def edge(self, *, namespace: str, edge_id: str) -> Edge | None:
        records = await self.client.read(edge_by_id(namespace=namespace, edge_id=edge_id))
        if not records:
            return None
        r = records[0]
        return edge_from_record(r["r"], r["type"], r["source"], r["target"])
