"""Cypher for moving a namespace out and in: keyset-paged reads, batched MERGE writes.

Export reads page without SKIP: memories (and, through them, their outgoing
relationships) by `(createdAt, id)` on the `(namespace, createdAt)` index,
audit entries by `id` on its uniqueness index, so every page costs the same
however deep the export is. Imports write one `UNWIND` batch per transaction
and MERGE by id, so importing the same file twice changes nothing the second
time; a row whose id already belongs to *another* namespace is never touched
(ids are global) and makes its batch fail as a whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction

from memlattice.core.errors import Conflict, NotFound
from memlattice.core.model import EdgeType, as_utc
from memlattice.core.settings import VectorIndexSettings
from memlattice.graph import history
from memlattice.graph.client import GraphClient, Query, run
from memlattice.graph.entities import mention_rows, relink_mentions
from memlattice.graph.revision_clauses import snapshot

Cursor = tuple[datetime, str]

_EDGE_TYPES = [t.value for t in EdgeType]


def _memory_keyset(var: str, after: Cursor | None) -> tuple[str, dict[str, Any]]:
    """A WHERE clause for the page after `after`; `>=` keeps the index range seek."""
    where = f"{var}.namespace = $namespace"
    if after is None:
        return where, {}
    where += (f" AND {var}.createdAt >= $afterAt"
              f" AND ({var}.createdAt > $afterAt OR {var}.id > $afterId)")
    # In UTC with a fixed offset: Neo4j orders a zone-id time and an offset time of the
    # same instant apart, which would skip the rest of a batch written at one instant.
    return where, {"afterAt": as_utc(after[0]), "afterId": after[1]}


def count_memories(namespace: str) -> Query:
    return ("CYPHER 25\nMATCH (m:Memory) WHERE m.namespace = $namespace RETURN count(m) AS n",
            {"namespace": namespace})


def count_edges(namespace: str) -> Query:
    query = (
        "CYPHER 25\nMATCH (a:Memory)-[r]->(b:Memory)\n"
        "WHERE a.namespace = $namespace AND b.namespace = $namespace AND type(r) IN $types\n"
        "RETURN count(r) AS n"
    )
    return query, {"namespace": namespace, "types": _EDGE_TYPES}


def count_audit(namespace: str) -> Query:
    query = "CYPHER 25\nMATCH (a:AuditEntry) WHERE a.namespace = $namespace RETURN count(a) AS n"
    return query, {"namespace": namespace}


def memory_page(namespace: str, after: Cursor | None, limit: int) -> Query:
    """Every property (embedding included) and the extra labels, oldest first."""
    where, params = _memory_keyset("m", after)
    query = (
        f"CYPHER 25\nMATCH (m:Memory) WHERE {where}\n"
        "RETURN m {.*} AS m, [l IN labels(m) WHERE l <> 'Memory'] AS labels\n"
        "ORDER BY m.createdAt, m.id LIMIT $limit"
    )
    return query, {**params, "namespace": namespace, "limit": limit}


def edge_page(namespace: str, after: Cursor | None, limit: int) -> Query:
    """The outgoing relationships of a page of source memories (same keyset as memories)."""
    where, params = _memory_keyset("a", after)
    query = (
        f"CYPHER 25\nMATCH (a:Memory) WHERE {where}\n"
        "WITH a ORDER BY a.createdAt, a.id LIMIT $limit\n"
        "OPTIONAL CALL (a) {\n"
        "  MATCH (a)-[r]->(b:Memory) WHERE b.namespace = $namespace AND type(r) IN $types\n"
        "  RETURN collect({r: r {.*}, type: type(r), target: b.id}) AS edges }\n"
        "RETURN a.createdAt AS at, a.id AS id, edges ORDER BY at, id"
    )
    return query, {**params, "namespace": namespace, "limit": limit, "types": _EDGE_TYPES}


def evidence_page(namespace: str, after: Cursor | None, limit: int) -> Query:
    """What a page of memories rests on (`RESTS_ON` evidence of facts and records)."""
    where, params = _memory_keyset("m", after)
    query = (
        f"CYPHER 25\nMATCH (m:Memory) WHERE {where}\n"
        "WITH m ORDER BY m.createdAt, m.id LIMIT $limit\n"
        "OPTIONAL CALL (m) {\n"
        "  MATCH (m)-[:RESTS_ON]->(e:Evidence)\n"
        "  RETURN collect(e {.kind, .ref}) AS evidence }\n"
        "RETURN m.createdAt AS at, m.id AS id, evidence ORDER BY at, id"
    )
    return query, {**params, "namespace": namespace, "limit": limit}


def count_evidence(namespace: str) -> Query:
    query = ("CYPHER 25\nMATCH (m:Memory)-[r:RESTS_ON]->(:Evidence)"
             " WHERE m.namespace = $namespace RETURN count(r) AS n")
    return query, {"namespace": namespace}


def upsert_evidence(namespace: str, rows: list[dict[str, Any]]) -> Query:
    """Rows `{memory, key, kind, ref}`: evidence nodes are shared per (namespace, kind, ref)."""
    query = (
        "CYPHER 25\nUNWIND $rows AS row\n"
        "MATCH (m:Memory {id: row.memory}) WHERE m.namespace = $namespace\n"
        "MERGE (e:Evidence {key: row.key})\n"
        "ON CREATE SET e.namespace = $namespace, e.kind = row.kind, e.ref = row.ref\n"
        "MERGE (m)-[:RESTS_ON]->(e)\n"
        "RETURN count(*) AS n"
    )
    return query, {"namespace": namespace, "rows": rows}


def audit_page(namespace: str, after: str, limit: int) -> Query:
    query = (
        "CYPHER 25\nMATCH (a:AuditEntry) WHERE a.id > $after AND a.namespace = $namespace\n"
        "RETURN a {.*} AS a ORDER BY a.id LIMIT $limit"
    )
    return query, {"namespace": namespace, "after": after, "limit": limit}


def taken_elsewhere(label: str, namespace: str, ids: list[str]) -> Query:
    """Ids that already exist in another namespace (`label` from a fixed set)."""
    assert label in ("Memory", "AuditEntry")
    query = (
        f"CYPHER 25\nUNWIND $ids AS id\nMATCH (x:{label} {{id: id}})"
        " WHERE x.namespace <> $namespace\n"
        "RETURN x.id AS id, x.namespace AS namespace"
    )
    return query, {"namespace": namespace, "ids": ids}


def existing_memories(namespace: str, ids: list[str]) -> Query:
    query = ("CYPHER 25\nUNWIND $ids AS id\nMATCH (m:Memory {id: id})"
             " WHERE m.namespace = $namespace RETURN m.id AS id")
    return query, {"namespace": namespace, "ids": ids}


def with_mentions(row: dict[str, Any]) -> dict[str, Any]:
    """An import row with the entities its memory's content names (graph.entities), so
    an imported memory is linked like a written one, in the import's transaction."""
    return {**row, "mentions": mention_rows(str(row["props"].get("content") or ""))}


def upsert_memories(namespace: str, rows: list[dict[str, Any]]) -> Query:
    """Rows `{id, props, labels}`: the node becomes exactly `props` (restore semantics),
    mentioning what its content names."""
    query = (
        "CYPHER 25\nUNWIND $rows AS row\n"
        "OPTIONAL MATCH (x:Memory {id: row.id})\n"
        "WITH row, x WHERE x IS NULL OR x.namespace = $namespace\n"
        "MERGE (m:Memory {id: row.id})\n"
        "SET m = row.props\n"
        "SET m:$(row.labels)\n"
        "WITH m, row\n"
        + relink_mentions("m", "row.mentions", carried="row")
        + "RETURN count(*) AS n"
    )
    return query, {"namespace": namespace, "rows": [with_mentions(r) for r in rows]}


def upsert_edges(namespace: str, rows: list[dict[str, Any]]) -> Query:
    """Rows `{source, target, type, props}`; one relationship per (source, type, target),
    as addEdge keeps it."""
    query = (
        "CYPHER 25\nUNWIND $rows AS row\n"
        "MATCH (a:Memory {id: row.source}) WHERE a.namespace = $namespace\n"
        "MATCH (b:Memory {id: row.target}) WHERE b.namespace = $namespace\n"
        "MERGE (a)-[r:$(row.type)]->(b)\n"
        "SET r = row.props\n"
        "RETURN count(*) AS n"
    )
    return query, {"namespace": namespace, "rows": rows}


def upsert_audit(namespace: str, rows: list[dict[str, Any]]) -> Query:
    query = (
        "CYPHER 25\nUNWIND $rows AS row\n"
        "OPTIONAL MATCH (x:AuditEntry {id: row.id})\n"
        "WITH row, x WHERE x IS NULL OR x.namespace = $namespace\n"
        "MERGE (a:AuditEntry {id: row.id})\n"
        "SET a = row.props\n"
        "RETURN count(*) AS n"
    )
    return query, {"namespace": namespace, "rows": rows}


def apply_log(namespace: str, rows: list[dict[str, Any]], actor: str) -> Query:
    """Replay an append-only log (harn events, JSONL entries) in file order.

    Each row is `{op: 'put', id, at, props, digest, auditId}` or
    `{op: 'forget', id, at, auditId}`. A put creates the memory, or, when it is
    at least as new as the memory's last change and says something different
    (`importDigest`), rewrites its fields and bumps its version (last write
    wins). A forget tombstones an active memory no newer than itself. Replaying
    the same log again therefore changes nothing.
    """
    query = (
        "CYPHER 25\nUNWIND $rows AS row\n"
        "CALL (row) {\n"
        "  WITH row WHERE row.op = 'put'\n"
        "  OPTIONAL MATCH (x:Memory {id: row.id})\n"
        "  WITH row, x WHERE x IS NULL OR x.namespace = $namespace\n"
        "  MERGE (m:Memory {id: row.id})\n"
        "  ON CREATE SET m = row.props, m.version = 1, m.createdAt = row.at,"
        " m.updatedAt = row.at, m.accessCount = 0, m.`_new` = true\n"
        "  WITH row, m, m.`_new` IS NOT NULL AS created\n"
        "  REMOVE m.`_new`\n"
        "  WITH row, m, created WHERE created OR (row.at >= m.updatedAt"
        " AND coalesce(m.importDigest, '') <> row.digest)\n"
        # A replayed change keeps the state it replaces (graph.history).
        + snapshot("m", until="row.at", imports=", row, created", when="NOT created")
        + "  SET m += row.props, m.status = 'active', m.forgottenAt = null,\n"
        "      m.version = CASE WHEN created THEN 1 ELSE m.version + 1 END,"
        " m.updatedAt = row.at\n"
        "  CREATE (:AuditEntry {id: row.auditId, memoryId: m.id, namespace: $namespace,"
        " operation: CASE WHEN created THEN 'write' ELSE 'update' END, actor: $actor,"
        " at: row.at, version: m.version, detailsJson: '{\"import\":true}'})\n"
        "  WITH m, row\n"
        + relink_mentions("m", "row.mentions", carried="row")
        + "  RETURN count(*) AS put }\n"
        "CALL (row) {\n"
        "  WITH row WHERE row.op = 'forget'\n"
        "  MATCH (m:Memory {id: row.id}) WHERE m.namespace = $namespace"
        " AND m.status = 'active' AND m.updatedAt <= row.at\n"
        + snapshot("m", until="row.at", imports=", row")
        + "  SET m.status = 'forgotten', m.forgottenAt = row.at, m.updatedAt = row.at,"
        " m.version = m.version + 1\n"
        "  CREATE (:AuditEntry {id: row.auditId, memoryId: m.id, namespace: $namespace,"
        " operation: 'forget', actor: $actor, at: row.at, version: m.version,"
        " detailsJson: '{\"import\":true}'})\n"
        "  RETURN count(*) AS forgot }\n"
        "RETURN sum(put) AS put, sum(forgot) AS forgot"
    )
    return query, {"namespace": namespace, "actor": actor,
                   "rows": [with_mentions(r) if r["op"] == "put" else r for r in rows]}


@dataclass(frozen=True)
class EdgeRow:
    source: str
    props: Mapping[str, Any]
    type: str
    target: str


class TransferGraph:
    """Export pages and import batches of one namespace."""

    def __init__(self, client: GraphClient,
                 vector_index: VectorIndexSettings | None = None) -> None:
        self.client = client
        # How an import builds the index of a side vector space it brings (default settings
        # when None); see graph.transfer_parts.
        self.vector_index = vector_index

    async def _count(self, query: Query) -> int:
        return int((await self.client.read(query))[0]["n"])

    async def count_memories(self, namespace: str) -> int:
        return await self._count(count_memories(namespace))

    async def count_edges(self, namespace: str) -> int:
        return await self._count(count_edges(namespace))

    async def count_audit(self, namespace: str) -> int:
        return await self._count(count_audit(namespace))

    async def memory_page(self, namespace: str, after: Cursor | None, limit: int,
                          ) -> list[tuple[dict[str, Any], list[str]]]:
        records = await self.client.read(memory_page(namespace, after, limit))
        return [(dict(r["m"]), list(r["labels"])) for r in records]

    async def edge_page(self, namespace: str, after: Cursor | None, limit: int,
                        ) -> tuple[list[EdgeRow], Cursor | None]:
        """Relationships of the next `limit` source memories, and the cursor past them."""
        records = await self.client.read(edge_page(namespace, after, limit))
        rows = [EdgeRow(source=r["id"], props=dict(e["r"]), type=e["type"], target=e["target"])
                for r in records
                for e in sorted(r["edges"], key=lambda e: (e["type"], e["r"].get("id", "")))]
        cursor = (records[-1]["at"].to_native(), records[-1]["id"]) if records else None
        return rows, cursor

    async def count_evidence(self, namespace: str) -> int:
        return await self._count(count_evidence(namespace))

    async def evidence_page(self, namespace: str, after: Cursor | None, limit: int,
                            ) -> tuple[list[tuple[str, str, str]], Cursor | None]:
        """(memory id, kind, ref) of the next `limit` memories, and the cursor past them."""
        records = await self.client.read(evidence_page(namespace, after, limit))
        rows = [(r["id"], e["kind"], e["ref"]) for r in records
                for e in sorted(r["evidence"], key=lambda e: (e["kind"], e["ref"]))]
        cursor = (records[-1]["at"].to_native(), records[-1]["id"]) if records else None
        return rows, cursor

    async def upsert_evidence(self, namespace: str, rows: list[dict[str, Any]]) -> int:
        try:
            return await self._upsert(upsert_evidence(namespace, rows), len(rows),
                                      "evidence links")
        except Conflict as exc:
            raise NotFound(exc.message) from exc

    async def audit_page(self, namespace: str, after: str, limit: int) -> list[dict[str, Any]]:
        records = await self.client.read(audit_page(namespace, after, limit))
        return [dict(r["a"]) for r in records]

    async def taken_elsewhere(self, label: str, namespace: str,
                              ids: Sequence[str]) -> dict[str, str]:
        records = await self.client.read(taken_elsewhere(label, namespace, list(ids)))
        return {r["id"]: r["namespace"] for r in records}

    async def existing_memories(self, namespace: str, ids: Sequence[str]) -> set[str]:
        records = await self.client.read(existing_memories(namespace, list(ids)))
        return {r["id"] for r in records}

    async def _upsert(self, query: Query, expected: int, what: str) -> int:
        async def work(tx: AsyncManagedTransaction) -> int:
            written = int((await run(tx, query))[0]["n"])
            if written != expected:
                raise Conflict(
                    f"{expected - written} {what} of this batch collide with another namespace"
                    " or lost an endpoint while importing; the batch was not written")
            return written

        return await self.client.transaction(work)

    async def upsert_memories(self, namespace: str, rows: list[dict[str, Any]]) -> int:
        return await self._upsert(upsert_memories(namespace, rows), len(rows), "memories")

    async def upsert_edges(self, namespace: str, rows: list[dict[str, Any]]) -> int:
        try:
            return await self._upsert(upsert_edges(namespace, rows), len(rows), "relationships")
        except Conflict as exc:
            raise NotFound(exc.message) from exc

    async def upsert_audit(self, namespace: str, rows: list[dict[str, Any]]) -> int:
        return await self._upsert(upsert_audit(namespace, rows), len(rows), "audit entries")

    async def upsert_revisions(self, namespace: str, rows: list[dict[str, Any]]) -> int:
        """Earlier versions of memories (graph.history), each under its memory."""
        try:
            return await self._upsert(history.upsert_revisions(namespace, rows), len(rows),
                                      "memory revisions")
        except Conflict as exc:
            raise NotFound(exc.message) from exc

    async def apply_log(self, namespace: str, rows: list[dict[str, Any]],
                        actor: str) -> tuple[int, int]:
        """Returns (memories written or changed, memories forgotten)."""
        records = await self.client.write(apply_log(namespace, rows, actor))
        return int(records[0]["put"] or 0), int(records[0]["forgot"] or 0)
