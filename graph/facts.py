"""Facts: stable ids, reinforcement on re-store, evidence nodes, tombstones.

A fact is a `:Memory:Fact` node (memoryType `fact`) whose content is the
claim. Its id is derived from (namespace, kind, normalised claim), so storing
the same claim again finds the same node and reinforces it (confidence is
the higher of the two, salience +0.1, evidence added, expiry renewed)
instead of duplicating it. Evidence refs are `(:Evidence {namespace, kind,
ref})` nodes shared by every fact and record resting on them.

Generations: once a fact is invalidated (or otherwise no longer active) its
tombstone stays as it is, so history and `asOf` stay true. Storing the claim
again creates the next generation, a new node with the deterministic id
`<fact id>-g<n>` (the first generation keeps the bare fact id), the same
`factKey` and `(new)-[:SUPERSEDES]->(tombstone)`; storing it once more
reinforces that current generation.

Visibility: every statement applies the caller's clearance and scopes. A
claim whose current generation lies outside them is refused with CONFLICT
(ids are deterministic, so it cannot be created beside it), without
reinforcing it or returning any of it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction

from memlattice.core.errors import Conflict
from memlattice.core.model import EdgeType
from memlattice.core.records.payloads import EvidenceRef
from memlattice.graph.audit_queries import audit_entry
from memlattice.graph.client import GraphClient, Query, run
from memlattice.graph.codec import Edge, canonical_json, exists, memory_properties
from memlattice.graph.indexes import fenced_lucene
from memlattice.graph.prepared_memory import PreparedMemory, new_id
from memlattice.graph.record_codec import Record, normalise, record_from_record
from memlattice.graph.records import (
    Clearance,
    believed_at,
    clearance_condition,
    create_record,
    record_return,
    record_return_then,
)
from memlattice.graph.revision_clauses import snapshot, state_at
from memlattice.graph.revisions import linked
from memlattice.graph.visibility import visible

FACT_META_KIND = "factKind"
REINFORCEMENT = 0.1


def fact_id(namespace: str, kind: str, claim: str) -> str:
    """Deterministic: the same claim of the same kind in a namespace is one fact."""
    digest = hashlib.sha256(f"{namespace}\x00{kind}\x00{normalise(claim)}".encode()).hexdigest()
    return f"fact-{digest[:32]}"


def generation_id(base: str, generation: int) -> str:
    """The id of a fact's `generation` (1 is the bare fact id)."""
    return base if generation == 1 else f"{base}-g{generation}"


@dataclass(frozen=True)
class StoredFact:
    """What storing a claim did: created a fact, reinforced the current one, or
    reasserted an invalidated claim as a new generation (`created` and `reasserted`)."""

    record: Record
    created: bool
    reasserted: bool = False
    # A reasserted generation SUPERSEDES the invalidated one it follows.
    edges: tuple[Edge, ...] = ()


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


def fact_head(*, namespace: str, base: str, clearance: Clearance) -> Query:
    """Lock and read the current (newest) generation of the fact `base`, and whether the
    caller may see it; nothing of an invisible one leaves the database."""
    cond, params = clearance_condition(clearance)
    query = (
        "CYPHER 25\n"
        "CALL () {\n"
        "  MATCH (m:Memory {id: $base}) WHERE m:Fact AND m.namespace = $namespace RETURN m\n"
        "  UNION\n"
        "  MATCH (m:Fact) WHERE m.namespace = $namespace AND m.factKey = $base RETURN m\n"
        "}\n"
        "WITH m ORDER BY coalesce(m.generation, 1) DESC LIMIT 1\n"
        "SET m.`_lock` = true REMOVE m.`_lock`\n"
        "WITH m WHERE m.id IS NOT NULL\n"
        f"WITH m, {cond} AS visible\n"
        "RETURN visible, CASE WHEN visible THEN m.id END AS id,"
        " CASE WHEN visible THEN coalesce(m.generation, 1) END AS generation,"
        " CASE WHEN visible THEN m.status END AS status"
    )
    return query, {**params, "namespace": namespace, "base": base}


def reinforce_fact(
    *, namespace: str, id: str, confidence: float, expires_at: datetime | None,
    evidence: list[dict[str, Any]], actor: str, now: datetime, clearance: Clearance,
) -> Query:
    """Reinforce the (locked, checked) active generation `id`."""
    cond, params = clearance_condition(clearance)
    query = (
        "CYPHER 25\n"
        f"MATCH (m:Memory {{id: $id}}) WHERE m:Fact AND m.namespace = $namespace AND {cond}\n"
        "  AND m.status = 'active'\n"
        + snapshot("m")  # the state reinforced stays readable as of then (graph.history)
        + "SET m.confidence = CASE WHEN $confidence > m.confidence THEN $confidence"
        " ELSE m.confidence END,\n"
        "    m.salience = CASE WHEN coalesce(m.salience, 0.5) + $step > 1.0 THEN 1.0"
        " ELSE coalesce(m.salience, 0.5) + $step END,\n"
        "    m.reinforcements = coalesce(m.reinforcements, 0) + 1,\n"
        "    m.expiresAt = $expiresAt, m.validTo = $expiresAt,\n"
        "    m.version = m.version + 1, m.updatedAt = $now\n"
        "WITH m\n"
        "CALL (m) { UNWIND $evidence AS ev\n"
        "  MERGE (e:Evidence {key: ev.key})\n"
        "  ON CREATE SET e.namespace = m.namespace, e.kind = ev.kind, e.ref = ev.ref\n"
        "  MERGE (m)-[:RESTS_ON]->(e) }\n"
        "WITH m\n"
        + audit_entry("$auditId", "m.id", "'reinforce'", "m.version")
        + f"\nRETURN {record_return()}"
    )
    return query, {**params, "namespace": namespace, "id": id, "confidence": confidence,
                   "expiresAt": expires_at, "evidence": evidence, "actor": actor, "now": now,
                   "step": REINFORCEMENT, "auditId": new_id()}


def invalidate_facts(
    *, namespace: str, predicate: InvalidatePredicate, actor: str, now: datetime,
    clearance: Clearance,
) -> Query:
    """Tombstone (status retracted) every active fact matching the whole predicate that
    the caller may see."""
    cond, params = clearance_condition(clearance)
    conds = [visible(), "m.status = 'active'", cond]
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
        + snapshot("m")
        + "SET m.status = 'retracted', m.revisionStatus = 'retracted', m.retractedAt = $now,\n"
        "    m.version = m.version + 1, m.updatedAt = $now\n"
        "WITH m\n"
        + audit_entry("randomUUID()", "m.id", "'invalidate'", "m.version")
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


def records_by_ids(*, namespace: str, ids: Sequence[str], now: datetime,
                   clearance: Clearance, as_of: datetime | None = None) -> Query:
    """The records with these ids, as they are, or (with `as_of`) as they were then."""
    cond, params = clearance_condition(clearance)
    if as_of is None:
        query = (
            "CYPHER 25\n"
            "UNWIND $ids AS id\n"
            f"MATCH (m:Memory {{id: id}}) WHERE {visible()} AND {cond}\n"
            f"RETURN {record_return()}"
        )
    else:
        query = (
            "CYPHER 25\n"
            "UNWIND $ids AS id\n"
            f"MATCH (m:Memory {{id: id}}) WHERE {believed_at()} AND {cond}\n"
            + state_at("m", "m_then")
            + f"WITH * WHERE {clearance_condition(clearance, 'm_then')[0]}\n"
            f"RETURN {record_return_then()}"
        )
    return query, {**params, "namespace": namespace, "ids": list(ids), "now": now,
                   "asOf": as_of}


class FactGraph:
    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def store(
        self, prepared: PreparedMemory, *, kind: str, evidence: Sequence[EvidenceRef],
        actor: str, tx: AsyncManagedTransaction, clearance: Clearance,
    ) -> StoredFact:
        """Reinforce the claim's current generation, or create the first (`prepared.id`)
        or, over a tombstone, the next one; a generation the caller cannot see is refused."""
        memory = prepared.input
        rows = [{"key": f"{memory.namespace}|{e.kind}|{e.ref}", "kind": e.kind, "ref": e.ref}
                for e in dict.fromkeys(evidence)]
        heads = await run(tx, fact_head(namespace=memory.namespace, base=prepared.id,
                                        clearance=clearance))
        head = heads[0] if heads else None
        if head is not None and not head["visible"]:
            raise Conflict("this claim is held by a fact outside this key's clearance or"
                           " scope; it cannot be stored or reinforced with this key")
        if head is not None and head["status"] == "active":
            reinforced = await run(tx, reinforce_fact(
                namespace=memory.namespace, id=head["id"], confidence=memory.confidence,
                expires_at=memory.expires_at, evidence=rows, actor=actor, now=prepared.now,
                clearance=clearance,
            ))
            return StoredFact(record_from_record(reinforced[0]), created=False)
        generation = int(head["generation"]) + 1 if head is not None else 1
        id = generation_id(prepared.id, generation)
        props = memory_properties(memory, id=id, now=prepared.now,
                                  embedding=prepared.embedding,
                                  embedding_model=prepared.embedding_model,
                                  event=(prepared.event_start, prepared.event_end))
        props.update(kind=kind, claimKey=normalise(memory.content), revisionStatus="active",
                     validTo=memory.expires_at, reinforcements=0, factKey=prepared.id,
                     generation=generation,
                     payloadJson=canonical_json({
                         "kind": kind, "claim": memory.content,
                         "evidence": [{"kind": e.kind, "ref": e.ref} for e in evidence]}))
        props = {k: v for k, v in props.items() if v is not None}
        query, params = create_record(props=props, label="Fact",
                                      rows={"toolCalls": [], "toolDeps": [], "planNodes": [],
                                            "planEdges": [], "evidence": rows},
                                      actor=actor, audit_id=new_id())
        created = await run(tx, (query, params))
        edges: list[Edge] = []
        if head is not None:
            edges = await linked(tx, namespace=memory.namespace, source=id, target=head["id"],
                                 type=EdgeType.SUPERSEDES,
                                 metadata={"revision": "reassert", "generation": generation},
                                 now=prepared.now)
        return StoredFact(record_from_record(created[0]), created=True,
                          reasserted=head is not None, edges=tuple(edges))

    async def invalidate(
        self, *, namespace: str, predicate: InvalidatePredicate, actor: str, now: datetime,
        clearance: Clearance,
    ) -> list[str]:
        records = await self.client.write(invalidate_facts(
            namespace=namespace, predicate=predicate, actor=actor, now=now,
            clearance=clearance))
        return [r["id"] for r in records]

    async def by_evidence(
        self, *, namespace: str, ref: str, kind: str | None, now: datetime,
        clearance: Clearance, include_inactive: bool = False,
    ) -> list[Record]:
        records = await self.client.read(by_evidence(
            namespace=namespace, ref=ref, kind=kind, now=now, clearance=clearance,
            include_inactive=include_inactive))
        return [record_from_record(r) for r in records if exists(r["m"])]

    async def records(self, *, namespace: str, ids: Sequence[str], now: datetime,
                      clearance: Clearance, as_of: datetime | None = None) -> dict[str, Record]:
        if not ids:
            return {}
        records = await self.client.read(records_by_ids(namespace=namespace, ids=ids, now=now,
                                                         clearance=clearance, as_of=as_of))
        found = [record_from_record(r) for r in records if exists(r["m"])]
        return {r.memory.id: r for r in found}
