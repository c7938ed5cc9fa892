"""Facts: stable ids, reinforcement on re-store, evidence nodes, tombstones.

A fact is a `:Memory:Fact` node (memoryType `fact`) whose content is the
claim. Its id is derived from (namespace, kind, normalised claim), so storing
the same claim again finds the same node and reinforces it (confidence is
the higher of the two, salience +0.1, evidence added, expiry renewed)
instead of duplicating it. Evidence refs are `(:Evidence {namespace, kind,
ref})` nodes shared by every fact and record resting on them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction

from graph.client import GraphClient, run
from graph.codec import canonical_json, memory_properties
from graph.memories import PreparedMemory, new_id
from graph.queries import _audit, fenced_lucene, visible
from graph.record_codec import Record, normalise, record_from_record
from graph.records import Clearance, Query, clearance_condition, create_record, record_return
from memlattice.records.payloads import EvidenceRef

FACT_META_KIND = "factKind"
REINFORCEMENT = 0.1


def fact_id(namespace: str, kind: str, claim: str) -> str:
    """Deterministic: the same claim of the same kind in a namespace is one fact."""
    digest = hashlib.sha256(f"{namespace}\x00{kind}\x00{normalise(claim)}".encode()).hexdigest()
    return f"fact-{digest[:32]}"


@dataclass(frozen=True)
class InvalidatePredicate:
    """A conjunction; at least one field is set (checked by the service)."""

    id: str | None = None
    key: str | None = None
    kind: str | None = None
    claim: str | None = None
    tag: str | None = None
    evidence_ref: str | None = None
    lucene: str | None = None


def reinforce_fact(
    *, namespace: str, id: str, confidence: float, expires_at: datetime | None,
    evidence: list[dict[str, Any]], actor: str, now: datetime,
) -> Query:
    query = (
        "CYPHER 25\n"
        "MATCH (m:Fact {id: $id}) WHERE m.namespace = $namespace\n"
        "SET m.`_lock` = true REMOVE m.`_lock`\n"
        "WITH m, m.status <> 'active' AS revived\n"
        "SET m.confidence = CASE WHEN $confidence > m.confidence THEN $confidence"
        " ELSE m.confidence END,\n"
        "    m.salience = CASE WHEN coalesce(m.salience, 0.5) + $step > 1.0 THEN 1.0"
        " ELSE coalesce(m.salience, 0.5) + $step END,\n"
        "    m.reinforcements = coalesce(m.reinforcements, 0) + 1,\n"
        "    m.expiresAt = $expiresAt, m.validTo = $expiresAt,\n"
        "    m.status = 'active', m.revisionStatus = 'active', m.retractedAt = null,"
        " m.forgottenAt = null,\n"
        "    m.version = m.version + 1, m.updatedAt = $now\n"
        "WITH m, revived\n"
        "CALL (m) { UNWIND $evidence AS ev\n"
        "  MERGE (e:Evidence {key: ev.key})\n"
        "  ON CREATE SET e.namespace = m.namespace, e.kind = ev.kind, e.ref = ev.ref\n"
        "  MERGE (m)-[:RESTS_ON]->(e) }\n"
        "WITH m, revived\n"
        + _audit("$auditId", "m.id", "CASE WHEN revived THEN 'restore' ELSE 'reinforce' END",
                 "m.version")
        + f"\nRETURN {record_return()}"
    )
    return query, {"namespace": namespace, "id": id, "confidence": confidence,
                   "expiresAt": expires_at, "evidence": evidence, "actor": actor, "now": now,
                   "step": REINFORCEMENT, "auditId": new_id()}


def invalidate_facts(
    *, namespace: str, predicate: InvalidatePredicate, actor: str, now: datetime,
) -> Query:
    """Tombstone (status retracted) every active fact matching the whole predicate."""
    conds = [visible(), "m.status = 'active'"]
    params: dict[str, Any] = {}
    for field, cond in (("id", "m.id = $id"), ("key", "m.key = $key"),
                        ("kind", "m.kind = $kind"), ("claim", "m.claimKey = $claim"),
                        ("tag", "$tag IN m.tags"),
                        ("evidence_ref", "EXISTS { (m)-[:RESTS_ON]->(:Evidence {ref: $ref}) }")):
        value = getattr(predicate, field)
        if value is not None:
            conds.append(cond)
            params[{"evidence_ref": "ref"}.get(field, field)] = (
                normalise(value) if field == "claim" else value)
    source = (
        "CALL db.index.fulltext.queryNodes('memory_fulltext', $lucene) YIELD node AS m\n"
        "WITH m WHERE m:Fact\n"
        if predicate.lucene is not None else "MATCH (m:Fact)\n"
    )
    query = (
        "CYPHER 25\n" + source + "WITH m WHERE " + " AND ".join(conds) + "\n"
        "SET m.`_lock` = true REMOVE m.`_lock`\n"
        "WITH m WHERE m.status = 'active'\n"
        "SET m.status = 'retracted', m.revisionStatus = 'retracted', m.retractedAt = $now,\n"
        "    m.version = m.version + 1, m.updatedAt = $now\n"
        "WITH m\n"
        + _audit("randomUUID()", "m.id", "'invalidate'", "m.version")
        + "\nRETURN m.id AS id ORDER BY id"
    )
    lucene = (fenced_lucene(predicate.lucene, namespace, None)
              if predicate.lucene is not None else None)
    return query, {**params, "namespace": namespace, "now": now, "actor": actor,
                   "lucene": lucene}


def by_evidence(
    *, namespace: str, ref: str, kind: str | None, now: datetime, clearance: Clearance,
    include_inactive: bool,
) -> Query:
    cond, params = clearance_condition(clearance)
    status = "true" if include_inactive else "m.status = 'active'"
    query = (
        "CYPHER 25\n"
        "MATCH (e:Evidence) WHERE e.namespace = $namespace AND e.ref = $ref"
        " AND ($kind IS NULL OR e.kind = $kind)\n"
        "MATCH (m:Memory)-[:RESTS_ON]->(e)\n"
        f"WHERE {visible()} AND {status} AND {cond}\n"
        "WITH DISTINCT m ORDER BY m.createdAt, m.id\n"
        f"RETURN {record_return()}"
    )
    return query, {**params, "namespace": namespace, "ref": ref, "kind": kind, "now": now}


def records_by_ids(*, namespace: str, ids: Sequence[str], now: datetime) -> Query:
    query = (
        "CYPHER 25\n"
        "UNWIND $ids AS id\n"
        f"MATCH (m:Memory {{id: id}}) WHERE {visible()}\n"
        f"RETURN {record_return()}"
    )
    return query, {"namespace": namespace, "ids": list(ids), "now": now}


class FactGraph:
    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def store(
        self, prepared: PreparedMemory, *, kind: str, evidence: Sequence[EvidenceRef],
        actor: str, tx: AsyncManagedTransaction,
    ) -> tuple[Record, bool]:
        """Create the fact, or reinforce the one with its id; returns (fact, created)."""
        memory = prepared.input
        rows = [{"key": f"{memory.namespace}|{e.kind}|{e.ref}", "kind": e.kind, "ref": e.ref}
                for e in dict.fromkeys(evidence)]
        existing = await run(tx, reinforce_fact(
            namespace=memory.namespace, id=prepared.id, confidence=memory.confidence,
            expires_at=memory.expires_at, evidence=rows, actor=actor, now=prepared.now,
        ))
        if existing:
            return record_from_record(existing[0]), False
        props = memory_properties(memory, id=prepared.id, now=prepared.now,
                                  embedding=prepared.embedding,
                                  embedding_model=prepared.embedding_model)
        props.update(kind=kind, claimKey=normalise(memory.content), revisionStatus="active",
                     validTo=memory.expires_at, reinforcements=0,
                     payloadJson=canonical_json({
                         "kind": kind, "claim": memory.content,
                         "evidence": [{"kind": e.kind, "ref": e.ref} for e in evidence]}))
        props = {k: v for k, v in props.items() if v is not None}
        query, params = create_record(props=props, label="Fact",
                                      rows={"toolCalls": [], "toolDeps": [], "planNodes": [],
                                            "planEdges": [], "evidence": rows},
                                      actor=actor, audit_id=new_id())
        created = await run(tx, (query, params))
        return record_from_record(created[0]), True

    async def invalidate(
        self, *, namespace: str, predicate: InvalidatePredicate, actor: str, now: datetime
    ) -> list[str]:
        records = await self.client.write(invalidate_facts(
            namespace=namespace, predicate=predicate, actor=actor, now=now))
        return [r["id"] for r in records]

    async def by_evidence(
        self, *, namespace: str, ref: str, kind: str | None, now: datetime,
        clearance: Clearance, include_inactive: bool = False,
    ) -> list[Record]:
        records = await self.client.read(by_evidence(
            namespace=namespace, ref=ref, kind=kind, now=now, clearance=clearance,
            include_inactive=include_inactive))
        return [record_from_record(r) for r in records]

    async def records(self, *, namespace: str, ids: Sequence[str], now: datetime
                      ) -> dict[str, Record]:
        if not ids:
            return {}
        records = await self.client.read(records_by_ids(namespace=namespace, ids=ids, now=now))
        found = [record_from_record(r) for r in records]
        return {r.memory.id: r for r in found}
