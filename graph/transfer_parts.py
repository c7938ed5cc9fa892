"""Cypher for the parts of a namespace export that hang off its memories.

`graph.transfer` moves memories, their relationships, evidence and audit
entries; this module moves the rest of what a namespace owns:

- typed records' payload subgraphs: `(:ToolCall)` nodes under `USED_TOOL`
  joined by `DEPENDS_ON`, `(:PlanNode)` nodes under `HAS_NODE` joined by
  `DATA` / `CONTROL` (one export row per record, written back as a whole:
  the record's old subgraph is replaced, so importing twice changes nothing);
- the namespace's side vector spaces (`graph.vector_spaces`): its
  `(:VectorSpaceState)` and every `(:MemoryVector)-[:EMBEDS]->(:Memory)`,
  carried rather than re-embedded, so an imported namespace searches the
  space it searched before, at once, with no provider call;
- its `(:NamespaceConfig)` (search defaults, the configured embedding model).

Pages use the memories' `(createdAt, id)` keyset, like `graph.transfer`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neo4j import AsyncManagedTransaction

from memlattice.core.errors import NotFound
from memlattice.core.settings import VectorIndexSettings
from memlattice.core.vector_spaces import VectorSpace
from memlattice.graph.client import GraphClient, Query, run
from memlattice.graph.transfer import Cursor, _memory_keyset
from memlattice.graph.vector_spaces import create_index

# Properties the export leaves out of a subgraph node: they are the record's own.
OWNER_PROPERTIES = ("namespace", "recordId")


def _count(query: str, namespace: str) -> Query:
    return "CYPHER 25\n" + query, {"namespace": namespace}


def count_payload_graphs(namespace: str) -> Query:
    return _count("MATCH (m:Memory) WHERE m.namespace = $namespace"
                  " AND EXISTS { (m)-[:USED_TOOL|HAS_NODE]->() } RETURN count(m) AS n",
                  namespace)


def count_vectors(namespace: str) -> Query:
    return _count("MATCH (v:MemoryVector) WHERE v.namespace = $namespace"
                  " RETURN count(v) AS n", namespace)


def count_space_states(namespace: str) -> Query:
    return _count("MATCH (s:VectorSpaceState {namespace: $namespace}) RETURN count(s) AS n",
                  namespace)


def count_configs(namespace: str) -> Query:
    return _count("MATCH (c:NamespaceConfig {namespace: $namespace}) RETURN count(c) AS n",
                  namespace)


def payload_graph_page(namespace: str, after: Cursor | None, limit: int) -> Query:
    """The tool calls (with the calls each depends on), plan nodes and plan edges of a
    page of memories."""
    where, params = _memory_keyset("m", after)
    query = (
        f"CYPHER 25\nMATCH (m:Memory) WHERE {where}\n"
        "WITH m ORDER BY m.createdAt, m.id LIMIT $limit\n"
        "RETURN m.createdAt AS at, m.id AS id,\n"
        "  COLLECT { MATCH (m)-[:USED_TOOL]->(c:ToolCall) RETURN c {.*, dependsOn:"
        " COLLECT { MATCH (c)-[:DEPENDS_ON]->(d:ToolCall) RETURN d.callId }} } AS calls,\n"
        "  COLLECT { MATCH (m)-[:HAS_NODE]->(n:PlanNode) RETURN n {.*} } AS nodes,\n"
        "  COLLECT { MATCH (m)-[:HAS_NODE]->(a:PlanNode)-[r:DATA|CONTROL]->(b:PlanNode)\n"
        "    RETURN {source: a.nodeId, target: b.nodeId, type: type(r)} } AS edges\n"
        "ORDER BY at, id"
    )
    return query, {**params, "namespace": namespace, "limit": limit}


def replace_payload_graphs(namespace: str, rows: list[dict[str, Any]]) -> Query:
    """Rows `{memory, toolCalls: [props], toolDeps: [{source, target}], planNodes: [props],
    planEdges: [{source, target, type}]}`; `type` is DATA or CONTROL (checked on decode)."""
    query = (
        "CYPHER 25\nUNWIND $rows AS row\n"
        "MATCH (m:Memory {id: row.memory}) WHERE m.namespace = $namespace\n"
        "CALL (m) { MATCH (m)-[:USED_TOOL|HAS_NODE]->(x) DETACH DELETE x }\n"
        "CALL (m, row) { UNWIND row.toolCalls AS props\n"
        "  CREATE (m)-[:USED_TOOL]->(c:ToolCall)\n"
        "  SET c = props, c.namespace = m.namespace, c.recordId = m.id }\n"
        "CALL (m, row) { UNWIND row.toolDeps AS d\n"
        "  MATCH (m)-[:USED_TOOL]->(a:ToolCall {callId: d.source})\n"
        "  MATCH (m)-[:USED_TOOL]->(b:ToolCall {callId: d.target})\n"
        "  CREATE (a)-[:DEPENDS_ON]->(b) }\n"
        "CALL (m, row) { UNWIND row.planNodes AS props\n"
        "  CREATE (m)-[:HAS_NODE]->(n:PlanNode)\n"
        "  SET n = props, n.namespace = m.namespace, n.recordId = m.id }\n"
        "CALL (m, row) { UNWIND row.planEdges AS e\n"
        "  MATCH (m)-[:HAS_NODE]->(a:PlanNode {nodeId: e.source})\n"
        "  MATCH (m)-[:HAS_NODE]->(b:PlanNode {nodeId: e.target})\n"
        "  CREATE (a)-[:$(e.type)]->(b) }\n"
        "RETURN count(*) AS n"
    )
    return query, {"namespace": namespace, "rows": rows}


def vector_page(namespace: str, after: Cursor | None, limit: int) -> Query:
    """The side-space vectors of a page of memories."""
    where, params = _memory_keyset("m", after)
    query = (
        f"CYPHER 25\nMATCH (m:Memory) WHERE {where}\n"
        "WITH m ORDER BY m.createdAt, m.id LIMIT $limit\n"
        "RETURN m.createdAt AS at, m.id AS id,\n"
        "  COLLECT { MATCH (m)<-[:EMBEDS]-(v:MemoryVector) RETURN v {.*} } AS vectors\n"
        "ORDER BY at, id"
    )
    return query, {**params, "namespace": namespace, "limit": limit}


def upsert_vectors(namespace: str, space: VectorSpace, rows: list[dict[str, Any]]) -> Query:
    """Rows `{memory, vector}` of one space; namespace and scope bucket come from the
    memory, as when the vector is built (`VectorSpaceGraph.put`)."""
    query = (
        "CYPHER 25\nUNWIND $rows AS row\n"
        "MATCH (m:Memory {id: row.memory}) WHERE m.namespace = $namespace\n"
        "MERGE (v:MemoryVector {key: m.id + '|' + $space})\n"
        "SET v.space = $space, v.namespace = m.namespace, v.scopeKey = m.scopeKey,"
        " v.memoryId = m.id\n"
        # The property name comes from VectorSpace's [a-z0-9_] slug only.
        f"SET v.`{space.vector_property}` = row.vector\n"
        "MERGE (v)-[:EMBEDS]->(m)\n"
        "RETURN count(*) AS n"
    )
    return query, {"namespace": namespace, "space": space.key, "rows": rows}


def read_node(label: str, namespace: str) -> Query:
    assert label in ("VectorSpaceState", "NamespaceConfig")
    return (f"CYPHER 25\nMATCH (s:{label} {{namespace: $namespace}}) RETURN s {{.*}} AS s",
            {"namespace": namespace})


def put_node(label: str, namespace: str, props: dict[str, Any]) -> Query:
    """The namespace's one node of `label` becomes exactly `props` (restore semantics)."""
    assert label in ("VectorSpaceState", "NamespaceConfig")
    query = (f"CYPHER 25\nMERGE (s:{label} {{namespace: $namespace}})\n"
             "SET s = $props, s.namespace = $namespace\nRETURN count(*) AS n")
    return query, {"namespace": namespace, "props": props}


def parse_space_key(key: str) -> VectorSpace:
    """`VectorSpace.key` (`model@dimension`) back to its space."""
    model, _, dimension = key.rpartition("@")
    return VectorSpace(model, int(dimension))


class PartsTransfer:
    """Export pages and import batches of the parts above, for one namespace at a time."""

    def __init__(self, client: GraphClient, index: VectorIndexSettings | None = None) -> None:
        self.client = client
        self.index = index or VectorIndexSettings()

    async def count(self, query: Query) -> int:
        return int((await self.client.read(query))[0]["n"])

    async def payload_graph_page(
        self, namespace: str, after: Cursor | None, limit: int,
    ) -> tuple[list[dict[str, Any]], Cursor | None]:
        """`{memory, calls, nodes, edges}` of the next `limit` memories that have a payload
        graph, and the cursor past all `limit` memories read."""
        records = await self.client.read(payload_graph_page(namespace, after, limit))
        rows = [{"memory": r["id"], "calls": list(r["calls"]), "nodes": list(r["nodes"]),
                 "edges": list(r["edges"])}
                for r in records if r["calls"] or r["nodes"]]
        cursor = (records[-1]["at"].to_native(), records[-1]["id"]) if records else None
        return rows, cursor

    async def vector_page(
        self, namespace: str, after: Cursor | None, limit: int,
    ) -> tuple[list[tuple[str, VectorSpace, list[float]]], Cursor | None]:
        """(memory id, space, vector) of the next `limit` memories, spaces in key order."""
        records = await self.client.read(vector_page(namespace, after, limit))
        rows = []
        for r in records:
            for v in sorted(r["vectors"], key=lambda v: v["space"]):
                space = parse_space_key(v["space"])
                rows.append((r["id"], space, list(v[space.vector_property])))
        cursor = (records[-1]["at"].to_native(), records[-1]["id"]) if records else None
        return rows, cursor

    async def node(self, label: str, namespace: str) -> dict[str, Any] | None:
        records = await self.client.read(read_node(label, namespace))
        return dict(records[0]["s"]) if records else None

    async def _write(self, queries: Sequence[Query], expected: int, what: str) -> int:
        async def work(tx: AsyncManagedTransaction) -> int:
            written = 0
            for query in queries:
                written += int((await run(tx, query))[0]["n"])
            if written != expected:
                raise NotFound(f"{expected - written} {what} of this batch name a memory that"
                               " is not in this namespace; the batch was not written")
            return written

        return await self.client.transaction(work)

    async def replace_payload_graphs(self, namespace: str, rows: list[dict[str, Any]]) -> int:
        return await self._write([replace_payload_graphs(namespace, rows)], len(rows),
                                 "payload graphs")

    async def upsert_vectors(self, namespace: str,
                             rows: Sequence[tuple[str, VectorSpace, list[float]]]) -> int:
        """One statement per space (a space's vectors live under a property of its own);
        each space's index is made first, as `configureNamespace` would."""
        by_space: dict[VectorSpace, list[dict[str, Any]]] = {}
        for memory, space, vector in rows:
            by_space.setdefault(space, []).append({"memory": memory, "vector": vector})
        for space in sorted(by_space, key=lambda s: s.key):
            await self.ensure_index(space)
        return await self._write([upsert_vectors(namespace, space, batch)
                                  for space, batch in sorted(by_space.items(),
                                                             key=lambda x: x[0].key)],
                                 len(rows), "vectors")

    async def put_node(self, label: str, namespace: str, props: dict[str, Any]) -> int:
        return int((await self.client.write(put_node(label, namespace, props)))[0]["n"])

    async def ensure_index(self, space: VectorSpace) -> None:
        await self.client.write(create_index(space, self.index))
        await self.client.write(("CYPHER 25 CALL db.awaitIndex($name, 300)",
                                 {"name": space.index}))
