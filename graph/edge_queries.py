"""Cypher about relationships between memories, as builders returning `(query, params)`.

Relationship types come only from the `EdgeType` allow-list and are passed as
`$(type)` dynamic types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from memlattice.core.auth import Tenant
from memlattice.core.errors import ValidationError
from memlattice.core.json_values import json_problem
from memlattice.core.model import Direction, EdgeType
from memlattice.graph.audit_queries import audit_entry
from memlattice.graph.client import Query
from memlattice.graph.codec import canonical_json
from memlattice.graph.prepared_memory import new_id
from memlattice.graph.visibility import owned, tenant_visible


def edge_rows(
    edges: Sequence[tuple[str, str, EdgeType, object]],
) -> list[dict[str, Any]]:
    """`add_edges`' rows for (source, target, type, metadata) relationships, each
    checked first: metadata (any value a caller sent) a JSON object, no memory
    related to itself."""
    rows = []
    for source, target, type, metadata in edges:
        if not isinstance(metadata, Mapping):
            raise ValidationError("relationship metadata must be a JSON object",
                                  field="metadata")
        bad = json_problem(dict(metadata))
        if bad is not None:
            raise ValidationError(f"relationship metadata holds {bad}", field="metadata")
        if source == target:
            raise ValidationError(f"memory {source} cannot be related to itself",
                                  field="target")
        rows.append({"source": source, "target": target, "type": type.value,
                     "edgeId": new_id(), "metadataJson": canonical_json(dict(metadata)),
                     "auditId": new_id()})
    return rows


def add_edges(
    rows: list[dict[str, Any]], *, tenant: Tenant, actor: str, now: datetime
) -> Query:
    """Relate memories in one UNWIND; one relationship per (source, type, target).

    Each row is `{source, target, type, edgeId, metadataJson, auditId}`. Adding
    an existing relationship again is idempotent: with the same metadata it
    changes nothing and writes no audit entry; with other metadata it updates
    them, audited once. Rows whose endpoints are missing produce no output
    row, which is how the caller detects them.
    """
    query = (
        "CYPHER 25\n"
        "UNWIND $rows AS row\n"
        f"MATCH (a:Memory {{id: row.source}}) WHERE {tenant_visible('a')}\n"
        f"MATCH (b:Memory {{id: row.target}}) WHERE {tenant_visible('b')}\n"
        "MERGE (a)-[r:$(row.type)]->(b)\n"
        "ON CREATE SET r.id = row.edgeId, r.createdAt = $now, r.metadataJson = row.metadataJson\n"
        "WITH a, b, r, row, r.id = row.edgeId AS created,"
        " coalesce(r.metadataJson, '') <> row.metadataJson AS changed\n"
        "SET r.metadataJson = row.metadataJson\n"
        "WITH a, b, r, row, created, changed\n"
        "CALL (a, b, r, row, created, changed) {\n"
        "  WITH * WHERE created OR changed\n  "
        + audit_entry("row.auditId", "a.id", "'link'", "null",
                 "'{\"edge\":\"' + r.id + '\",\"type\":\"' + type(r) + '\",\"target\":\"' + b.id + '\"}'")
        + "\n}\n"
        "RETURN r {.*} AS r, type(r) AS type, a.id AS source, b.id AS target"
    )
    return query, {"rows": rows, **tenant.params(), "actor": actor, "now": now}


def lock_supersedes_chains(pairs: list[dict[str, str]]) -> Query:
    """Write-lock every memory a new SUPERSEDES target leads to (itself included).

    A concurrent addEdge that would close a cycle through these nodes holds one
    of these locks (MERGE locks both ends), so the check that follows, in its
    own statement, sees that edge committed (or deadlocks, and the retried
    transaction sees it).
    """
    query = (
        "CYPHER 25\n"
        "UNWIND $pairs AS pair\n"
        "MATCH (b:Memory {id: pair.target})\n"
        "MATCH (b)-[:SUPERSEDES*0..]->(x:Memory)\n"
        "WITH DISTINCT x\n"
        "SET x.`_lock` = true REMOVE x.`_lock`\n"
        "RETURN count(x) AS locked"
    )
    return query, {"pairs": pairs}


def supersedes_cycle(pairs: list[dict[str, str]]) -> Query:
    """A SUPERSEDES cycle through a new edge source -> target: a path target -> source.

    Run after the edges are written, in their transaction: the cycle a batch
    closes with its own rows is found too.
    """
    query = (
        "CYPHER 25\n"
        "UNWIND $pairs AS pair\n"
        "MATCH (a:Memory {id: pair.source}), (b:Memory {id: pair.target})\n"
        "MATCH p = SHORTEST 1 (b)-[:SUPERSEDES]->+(a)\n"
        "RETURN [n IN nodes(p) | n.id] AS cycle\n"
        "LIMIT 1"
    )
    return query, {"pairs": pairs}


_PATTERNS = {
    Direction.OUT: "(m)-[r]->(o)",
    Direction.IN: "(m)<-[r]-(o)",
    Direction.BOTH: "(m)-[r]-(o)",
}


def list_edges(
    *, tenant: Tenant, id: str, types: list[EdgeType], direction: Direction, now: datetime
) -> Query:
    query = (
        "CYPHER 25\n"
        f"MATCH (m:Memory {{id: $id}}) WHERE {tenant_visible()}\n"
        f"MATCH {_PATTERNS[direction]}\n"
        f"WHERE type(r) IN $types AND {tenant_visible('o')}\n"
        "RETURN r {.*} AS r, type(r) AS type, startNode(r).id AS source, endNode(r).id AS target\n"
        "ORDER BY r.createdAt, r.id"
    )
    return query, {**tenant.params(), "id": id, "types": [t.value for t in types],
                   "now": now}


def delete_edge(*, tenant: Tenant, edge_id: str, actor: str, now: datetime, audit_id: str) -> Query:
    query = (
        "CYPHER 25\n"
        "MATCH (a:Memory)-[r]->(b:Memory)\n"
        f"WHERE r.id = $edgeId AND {owned('a')} AND {owned('b')}\n"
        "WITH a, b, r, r.id AS edgeId, type(r) AS type\n"
        "DELETE r\n"
        "WITH a, b, edgeId, type\n"
        + audit_entry("$auditId", "a.id", "'unlink'", "null",
                 "'{\"edge\":\"' + edgeId + '\",\"type\":\"' + type + '\",\"target\":\"' + b.id + '\"}'")
        + "\nRETURN edgeId"
    )
    return query, {**tenant.params(), "edgeId": edge_id, "actor": actor, "now": now,
                   "auditId": audit_id}
