"""Revisions of records: supersede, fork, contest, retract, merge.

Each revision is one managed transaction that first takes the write lock of
every record it touches (in id order, so two merges over the same records
cannot deadlock) and re-reads them: of concurrent exclusive revisions
(retract, supersede, merge) exactly one finds its records active and wins;
the others fail with CONFLICT and write nothing. Every step leaves an audit
entry; episodic records refuse every revision with EPISODIC_IMMUTABLE.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction

from memlattice.core.errors import Conflict, ValidationError
from memlattice.core.model import EdgeType, Status
from memlattice.core.records.payloads import Payload, RecordType, RevisionStatus
from memlattice.graph.audit_queries import audit_entry
from memlattice.graph.client import GraphClient, Query, run
from memlattice.graph.codec import Edge, canonical_json, edge_from_record
from memlattice.graph.prepared_memory import PreparedMemory, new_id
from memlattice.graph.record_codec import Record
from memlattice.graph.records import Clearance, RecordGraph, locked
from memlattice.graph.refusals import check_version, refuse_episodic
from memlattice.graph.revision_clauses import snapshot

# What a retired record's status becomes, and the time property that records it.
_RETIRE_TIME = {Status.SUPERSEDED: "supersededAt", Status.RETRACTED: "retractedAt"}


def retire(
    *, namespace: str, ids: Sequence[str], status: Status, by: str | None, actor: str,
    now: datetime, operation: str, details: dict[str, Any],
) -> Query:
    """Mark locked, checked records superseded or retracted, one version up, audited."""
    time_prop = _RETIRE_TIME[status]
    revision = ", m.revisionStatus = 'retracted'" if status is Status.RETRACTED else ""
    query = (
        "CYPHER 25\n"
        "UNWIND $ids AS id\n"
        "MATCH (m:Memory {id: id}) WHERE m.namespace = $namespace\n"
        + snapshot("m")
        + f"SET m.status = $status, m.{time_prop} = $now, m.supersededBy = $by{revision},\n"
        "    m.version = m.version + 1, m.updatedAt = $now\n"
        "WITH m\n"
        + audit_entry("randomUUID()", "m.id", "$operation", "m.version", "$details")
        + "\nRETURN m.id AS id"
    )
    return query, {"namespace": namespace, "ids": list(ids), "status": status.value,
                   "by": by, "actor": actor, "now": now, "operation": operation,
                   "details": canonical_json(details)}


def link(
    *, namespace: str, source: str, target: str, type: EdgeType, metadata: dict[str, Any],
    now: datetime,
) -> Query:
    """One relationship per (source, type, target); linking again keeps the first.
    `created` is true only when this statement made it (the id is its own)."""
    query = (
        "CYPHER 25\n"
        "MATCH (a:Memory {id: $source}) WHERE a.namespace = $namespace\n"
        "MATCH (b:Memory {id: $target}) WHERE b.namespace = $namespace\n"
        "MERGE (a)-[r:$($type)]->(b)\n"
        "ON CREATE SET r.id = $edgeId, r.createdAt = $now, r.metadataJson = $metadataJson\n"
        "RETURN r.id = $edgeId AS created, properties(r) AS props"
    )
    return query, {"namespace": namespace, "source": source, "target": target,
                   "type": type.value, "metadataJson": canonical_json(metadata),
                   "edgeId": new_id(), "now": now}


async def linked(
    tx: AsyncManagedTransaction, *, namespace: str, source: str, target: str, type: EdgeType,
    metadata: dict[str, Any], now: datetime,
) -> list[Edge]:
    """Link inside `tx`; the relationship comes back only if this call created it,
    so that the caller announces new relationships (EDGE_ADDED) and no others."""
    rows = await run(tx, link(namespace=namespace, source=source, target=target, type=type,
                              metadata=metadata, now=now))
    return [edge_from_record(r["props"], type.value, source, target) for r in rows
            if r["created"]]


def set_revision_status(
    *, namespace: str, ids: Sequence[str], status: RevisionStatus, actor: str, now: datetime,
    operation: str, details: dict[str, Any],
) -> Query:
    query = (
        "CYPHER 25\n"
        "UNWIND $ids AS id\n"
        "MATCH (m:Memory {id: id}) WHERE m.namespace = $namespace\n"
        + snapshot("m")
        + "SET m.revisionStatus = $revisionStatus, m.version = m.version + 1, m.updatedAt = $now\n"
        "WITH m\n"
        + audit_entry("randomUUID()", "m.id", "$operation", "m.version", "$details")
        + "\nRETURN m.id AS id"
    )
    return query, {"namespace": namespace, "ids": list(ids), "revisionStatus": status.value,
                   "actor": actor, "now": now, "operation": operation,
                   "details": canonical_json(details)}


@dataclass(frozen=True)
class Revised:
    """What a revision left: its records (in the order each method documents) and the
    relationships it created, which only the caller may announce, once it committed."""

    records: tuple[Record, ...]
    edges: tuple[Edge, ...] = ()


@dataclass(frozen=True)
class NewRecord:
    """A successor, fork or merge result, prepared by the service (id, time, vector)."""

    prepared: PreparedMemory
    type: RecordType
    payload: Payload
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    extra: dict[str, Any] | None = None


class RevisionGraph:
    def __init__(self, client: GraphClient, records: RecordGraph) -> None:
        self.client = client
        self.records = records

    async def _revise(
        self, namespace: str, ids: Sequence[str], now: datetime, verb: str,
        work: Callable[[AsyncManagedTransaction, dict[str, Record]], Awaitable[Any]],
        clearance: Clearance = None, type: RecordType | None = None,
    ) -> Any:
        """Lock `ids` in order, refuse episodic or inactive ones, then run `work`."""
        if len(set(ids)) != len(ids):
            raise ValidationError("a revision names the same record twice", fields=["ids"])

        async def tx_work(tx: AsyncManagedTransaction) -> Any:
            current: dict[str, Record] = {}
            for id in sorted(ids):
                record = await locked(tx, namespace=namespace, id=id, now=now,
                                      clearance=clearance)
                refuse_episodic(record.memory, verb)
                if type is not None and record.type != type.value:
                    raise Conflict(f"record {id} is {record.type}; it cannot be {verb} by a"
                                   f" {type.value} record", id=id, actual=record.type)
                if record.memory.status is not Status.ACTIVE:
                    by = record.memory.superseded_by
                    raise Conflict(
                        f"record {id} is already {record.memory.status.value}"
                        + (f" by {by}" if by else "") + f"; it cannot be {verb}",
                        id=id, status=record.memory.status.value, current=by,
                    )
                current[id] = record
            return await work(tx, current)

        return await self.client.transaction(tx_work)

    async def supersede(
        self, *, namespace: str, id: str, successor: NewRecord, expected_version: int | None,
        actor: str, clearance: Clearance = None,
    ) -> Revised:
        """`successor` replaces `id` (records: old as retired, new; SUPERSEDES new->old)."""
        now = successor.prepared.now

        async def work(tx: AsyncManagedTransaction, old: dict[str, Record]) -> Revised:
            check_version(old[id].memory, expected_version)
            new = await self._create(tx, successor, actor)
            edges = await linked(tx, namespace=namespace, source=new.memory.id, target=id,
                                 type=EdgeType.SUPERSEDES, metadata={}, now=now)
            await run(tx, retire(namespace=namespace, ids=[id], status=Status.SUPERSEDED,
                                 by=new.memory.id, actor=actor, now=now,
                                 operation="supersede",
                                 details={"supersededBy": new.memory.id}))
            return Revised((await locked(tx, namespace=namespace, id=id, now=now), new),
                           tuple(edges))

        result: Revised = await self._revise(
            namespace, [id], now, "superseded", work, clearance, successor.type)
        return result

    async def fork(self, *, namespace: str, id: str, branch: NewRecord, actor: str,
                   clearance: Clearance = None) -> Revised:
        """A conditional variant beside the original: both stay active, DERIVED joins them.
        Records: (original as the fork left it, fork)."""
        now = branch.prepared.now

        async def work(tx: AsyncManagedTransaction, old: dict[str, Record]) -> Revised:
            new = await self._create(tx, branch, actor)
            edges = await linked(tx, namespace=namespace, source=new.memory.id, target=id,
                                 type=EdgeType.DERIVED, metadata={"revision": "fork"}, now=now)
            await run(tx, set_revision_status(
                namespace=namespace, ids=[id],
                status=RevisionStatus(old[id].revision_status or "active"), actor=actor,
                now=now, operation="fork", details={"forkedInto": new.memory.id}))
            return Revised((await locked(tx, namespace=namespace, id=id, now=now), new),
                           tuple(edges))

        result: Revised = await self._revise(namespace, [id], now, "forked", work, clearance,
                                             branch.type)
        return result

    async def contest(
        self, *, namespace: str, id: str, by: str, reason: str | None, actor: str,
        now: datetime, clearance: Clearance = None,
    ) -> Revised:
        """`by` CONTRADICTS `id`; both become contested (and stay in search).
        Records: (id, by); no relationship when `by` already contradicted `id`."""

        async def work(tx: AsyncManagedTransaction, cur: dict[str, Record]) -> Revised:
            edges = await linked(tx, namespace=namespace, source=by, target=id,
                                 type=EdgeType.CONTRADICTS,
                                 metadata={"revision": "contest", "reason": reason}, now=now)
            await run(tx, set_revision_status(
                namespace=namespace, ids=[id, by], status=RevisionStatus.CONTESTED, actor=actor,
                now=now, operation="contest", details={"pair": sorted([id, by]),
                                                       "reason": reason}))
            return Revised((await locked(tx, namespace=namespace, id=id, now=now),
                            await locked(tx, namespace=namespace, id=by, now=now)), tuple(edges))

        result: Revised = await self._revise(namespace, [id, by], now, "contested", work,
                                             clearance)
        return result

    async def retract(
        self, *, namespace: str, id: str, reason: str | None, expected_version: int | None,
        actor: str, now: datetime, clearance: Clearance = None,
    ) -> Record:
        async def work(tx: AsyncManagedTransaction, cur: dict[str, Record]) -> Record:
            check_version(cur[id].memory, expected_version)
            await run(tx, retire(namespace=namespace, ids=[id], status=Status.RETRACTED,
                                 by=None, actor=actor, now=now, operation="retract",
                                 details={"reason": reason}))
            return await locked(tx, namespace=namespace, id=id, now=now)

        result: Record = await self._revise(namespace, [id], now, "retracted", work, clearance)
        return result

    async def merge(
        self, *, namespace: str, ids: Sequence[str], into: NewRecord, actor: str,
        clearance: Clearance = None,
    ) -> Revised:
        """Several records become one: the sources are superseded, DERIVED from the new one.
        Records: (the new one, then each source as retired, in `ids` order)."""
        if len(ids) < 2:
            raise ValidationError("merge needs at least two records", fields=["ids"])
        now = into.prepared.now

        async def work(tx: AsyncManagedTransaction, cur: dict[str, Record]) -> Revised:
            new = await self._create(tx, into, actor)
            edges: list[Edge] = []
            for source in ids:
                edges += await linked(tx, namespace=namespace, source=new.memory.id,
                                      target=source, type=EdgeType.DERIVED,
                                      metadata={"revision": "merge"}, now=now)
            await run(tx, retire(namespace=namespace, ids=ids, status=Status.SUPERSEDED,
                                 by=new.memory.id, actor=actor, now=now, operation="merge",
                                 details={"mergedInto": new.memory.id}))
            sources = [await locked(tx, namespace=namespace, id=i, now=now) for i in ids]
            return Revised((new, *sources), tuple(edges))

        result: Revised = await self._revise(namespace, list(ids), now, "merged", work,
                                             clearance, into.type)
        return result

    async def _create(self, tx: AsyncManagedTransaction, new: NewRecord, actor: str) -> Record:
        return await self.records.create(
            new.prepared, type=new.type, payload=new.payload, valid_from=new.valid_from,
            valid_to=new.valid_to, actor=actor, tx=tx, extra=new.extra,
        )
