"""Version history of memories: snapshots taken before in-place edits, and reads as of T.

An in-place change of a memory (`updateMemory`, `updateRecord`, and every
other mutation that bumps `version`: supersede, retract, contest, forget,
discard, reinforce, prune) first copies the node's state, in the same
statement and so in the same transaction, into a

    (m:Memory)-[:HAS_REVISION]->(:MemoryRevision {memoryId, version,
        recordedFrom, recordedUntil, ...every other property of m})

node: `recordedFrom` is when that state began (the memory's `updatedAt`
then), `recordedUntil` when it ended (the change's time), so the versions of
a memory tile system time without gaps. A revision holds no embedding, no
`id` (`memoryId` instead) and no fulltext tokens, and it is not a `:Memory`,
so no memory index (range, vector, fulltext) ever sees it. Records keep their
payload in `payloadJson`, from which their payload subgraph (tool calls,
plan nodes, evidence) is a pure function (`graph.record_codec.subgraph_rows`),
so snapshotting `payloadJson` makes a replaced subgraph reconstructable
without copying its nodes.

A read as of T keeps using the current node to find candidates and to apply
the time rules (`createdAt`, `supersededAt`, ...), then takes the state of
each candidate at T: the revision of lowest version whose `recordedUntil` is
after T, else the node itself. Filters and the tenant's clearance apply to
that state, and the clearance to the current node as well, so a caller never
sees a version above its clearance, then or now.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memlattice.core.auth import Tenant
from memlattice.core.errors import NotFound, ValidationError
from memlattice.core.records.payloads import RecordType, parse_payload
from memlattice.graph.client import GraphClient, Query
from memlattice.graph.codec import Memory, memory_from_properties, to_datetime
from memlattice.graph.projections import project_state
from memlattice.graph.record_codec import Record, record_from_record, subgraph_rows
from memlattice.graph.revision_clauses import REVISION
from memlattice.graph.visibility import allowed, tenant_visible

MAX_HISTORY = 500


# ------------------------------------------------------------------ queries


def memory_history(*, tenant: Tenant, id: str, now: datetime, limit: int) -> Query:
    """A memory and its revisions, newest first. A revision above the tenant's
    clearance, or any revision of a forgotten memory, comes without its state."""
    query = (
        "CYPHER 25\n"
        f"MATCH (m:Memory {{id: $id}}) WHERE {tenant_visible()}\n"
        f"RETURN {project_state('m', 'm')} AS m,\n"
        f"  COLLECT {{ MATCH (m)-[:HAS_REVISION]->(r:{REVISION}) WHERE r.version < m.version\n"
        "    WITH r ORDER BY r.version DESC LIMIT $limit\n"
        "    RETURN {version: r.version, recordedFrom: r.recordedFrom,"
        " recordedUntil: r.recordedUntil,\n"
        f"      state: CASE WHEN m.status <> 'forgotten' AND {allowed('r')}"
        f" THEN {project_state('m', 'r')} END}} }} AS revisions"
    )
    return query, {**tenant.params(), "id": id, "now": now, "limit": limit}


# ------------------------------------------------------------------ export and import


def revision_page(namespace: str, after: tuple[str, int] | None, limit: int) -> Query:
    """Every stored property of the revisions of a namespace's memories, by
    (memoryId, version); revisions an import left beyond a memory's version are not
    part of its history and are skipped."""
    keyset = ("" if after is None else
              " AND (r.memoryId > $afterId OR (r.memoryId = $afterId AND r.version > $afterV))")
    query = (
        f"CYPHER 25\nMATCH (m:Memory)-[:HAS_REVISION]->(r:{REVISION})\n"
        f"WHERE m.namespace = $namespace AND r.version < m.version{keyset}\n"
        "RETURN r {.*} AS r ORDER BY r.memoryId, r.version LIMIT $limit"
    )
    return query, {"namespace": namespace, "limit": limit,
                   "afterId": after[0] if after else None, "afterV": after[1] if after else None}


def count_revisions(namespace: str) -> Query:
    query = (f"CYPHER 25\nMATCH (m:Memory)-[:HAS_REVISION]->(r:{REVISION})"
             " WHERE m.namespace = $namespace AND r.version < m.version RETURN count(r) AS n")
    return query, {"namespace": namespace}


def upsert_revisions(namespace: str, rows: list[dict[str, Any]]) -> Query:
    """Rows `{memoryId, version, props}`: the revision becomes exactly `props`."""
    query = (
        "CYPHER 25\nUNWIND $rows AS row\n"
        "MATCH (m:Memory {id: row.memoryId}) WHERE m.namespace = $namespace\n"
        f"MERGE (r:{REVISION} {{memoryId: row.memoryId, version: row.version}})\n"
        "SET r = row.props\n"
        "MERGE (m)-[:HAS_REVISION]->(r)\n"
        "RETURN count(*) AS n"
    )
    return query, {"namespace": namespace, "rows": rows}


# ------------------------------------------------------------------ reading


@dataclass(frozen=True)
class MemoryVersion:
    """One version of a memory and the system-time window it was current in
    (`recorded_until` None: it still is); `memory` None when withheld."""

    version: int
    recorded_from: datetime
    recorded_until: datetime | None
    memory: Memory | None


def history_from_record(row: Mapping[str, Any]) -> list[MemoryVersion]:
    current = memory_from_properties(row["m"])
    versions = [MemoryVersion(version=current.version, recorded_from=current.updated_at,
                              recorded_until=None, memory=current)]
    for r in row["revisions"]:
        state = r["state"]
        versions.append(MemoryVersion(
            version=int(r["version"]), recorded_from=to_datetime(r["recordedFrom"]),  # type: ignore[arg-type]
            recorded_until=to_datetime(r["recordedUntil"]),
            memory=memory_from_properties(state) if state is not None else None))
    return versions


def record_from_state(row: Mapping[str, Any]) -> Record:
    """Read a row of `graph.records.record_return_then`: a record as it was then.

    The payload subgraph in the row is the current one; a historic state with
    another payload gets the subgraph that payload makes (the same pure function
    wrote it then), so a replaced tool or plan graph reads as it was.
    """
    if not row.get("historic") or row["m"].get("payloadJson") == row.get("currentPayload"):
        return record_from_record(row)
    props = row["m"]
    try:
        payload = parse_payload(RecordType(props.get("memoryType")),
                                json.loads(props["payloadJson"]))
    except (ValueError, TypeError, KeyError, ValidationError):
        return record_from_record(row)  # not a typed record's payload: keep the row's
    rows = subgraph_rows(props["namespace"], payload)
    depends: dict[str, list[str]] = {}
    for d in rows["toolDeps"]:
        depends.setdefault(d["source"], []).append(d["target"])
    return record_from_record({
        "m": props,
        "calls": [{**c, "dependsOn": depends.get(c["callId"], [])} for c in rows["toolCalls"]],
        "nodes": rows["planNodes"],
        "edges": [{"source": e["source"], "target": e["target"], "kind": e["type"]}
                  for e in rows["planEdges"]],
        "evidence": [{"kind": e["kind"], "ref": e["ref"]} for e in rows["evidence"]],
    })


async def read_history(client: GraphClient, *, tenant: Tenant, id: str, now: datetime,
                       limit: int = 100) -> list[MemoryVersion]:
    """The newest `limit` versions of a memory (the current one first)."""
    if not 1 <= limit <= MAX_HISTORY:
        raise ValidationError(f"limit must be between 1 and {MAX_HISTORY}", field="limit")
    records = await client.read(memory_history(tenant=tenant, id=id, now=now, limit=limit))
    if not records:
        raise NotFound(f"no memory {id} in namespace {tenant.namespace}", id=id)
    return history_from_record(records[0])[:limit]
