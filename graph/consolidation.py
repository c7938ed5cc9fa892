"""Consolidation's reads and writes: episodes in, derived records, decay, pruning.

One consolidation of a namespace is one managed transaction that first takes
the namespace's `(:ConsolidationLock)` write lock, so a scheduled run and an
on-demand run of the same namespace serialise and the second sees the
first's results (and has nothing left to do).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction

from memlattice.core.model import EdgeType, Sensitivity
from memlattice.core.records.consolidation import Derived, Episode, Existing
from memlattice.core.records.payloads import (
    EpisodicPayload,
    Observation,
    RecordType,
    dump_payload,
)
from memlattice.graph.audit_queries import audit_entry
from memlattice.graph.client import GraphClient, Query, run
from memlattice.graph.codec import Edge, canonical_json, to_datetime
from memlattice.graph.prepared_memory import PreparedMemory
from memlattice.graph.record_codec import Record
from memlattice.graph.records import RecordGraph
from memlattice.graph.revision_clauses import snapshot
from memlattice.graph.revisions import linked

Extractor = Callable[[Episode], Awaitable[list[Observation]]]


def lock_namespace(*, namespace: str) -> Query:
    query = (
        "CYPHER 25\n"
        "MERGE (l:ConsolidationLock {namespace: $namespace})\n"
        "SET l.`_lock` = true REMOVE l.`_lock`\n"
        "RETURN l.namespace AS namespace"
    )
    return query, {"namespace": namespace}


def successful_episodes(*, namespace: str) -> Query:
    query = (
        "CYPHER 25\n"
        "MATCH (m:Episodic) WHERE m.namespace = $namespace AND m.status = 'active'"
        " AND m.outcome = 'success'\n"
        "RETURN m.id AS id, m.payloadJson AS payload, m.createdAt AS createdAt,"
        " coalesce(m.sensitivity, 'low') AS sensitivity\n"
        "ORDER BY m.createdAt, m.id"
    )
    return query, {"namespace": namespace}


def derived_records(*, namespace: str, ids: Sequence[str]) -> Query:
    query = (
        "CYPHER 25\n"
        "MATCH (m:Memory) WHERE m.namespace = $namespace AND m.id IN $ids\n"
        "RETURN m.id AS id, coalesce(m.sourceEpisodes, []) AS sources, m.payloadJson AS payload,"
        " coalesce(m.sensitivity, 'low') AS sensitivity, m.status = 'active' AS active"
    )
    return query, {"namespace": namespace, "ids": list(ids)}


def reinforce(*, namespace: str, action: Derived, actor: str, now: datetime,
              props: dict[str, Any]) -> Query:
    query = (
        "CYPHER 25\n"
        "MATCH (m:Memory {id: $id}) WHERE m.namespace = $namespace\n"
        + snapshot("m")
        + "SET m += $props,\n"
        "    m.salience = CASE WHEN coalesce(m.salience, 0.5) + $step > 1.0 THEN 1.0"
        " ELSE coalesce(m.salience, 0.5) + $step END,\n"
        "    m.version = m.version + 1, m.updatedAt = $now\n"
        "WITH m\n"
        + audit_entry("randomUUID()", "m.id", "'reinforce'", "m.version", "$details")
        + "\nRETURN m.id AS id"
    )
    return query, {"namespace": namespace, "id": action.id, "props": props,
                   "step": 0.1 * len(action.new_episodes), "actor": actor, "now": now,
                   "details": canonical_json({"episodes": list(action.new_episodes)})}


def decay(*, namespace: str, now: datetime, half_life_days: float) -> Query:
    """Salience halves every `half_life_days` (or the record's own
    `salienceHalfLifeDays`), applied in whole elapsed days."""
    query = (
        "CYPHER 25\n"
        "MATCH (m:Memory) WHERE m.namespace = $namespace AND m.status = 'active'\n"
        "  AND (m:Episodic OR m:Semantic OR m:Competence OR m:PlanGraph OR m:Fact)\n"
        "WITH m, coalesce(m.decayedAt, m.createdAt) AS since\n"
        "WITH m, since, duration.inDays(since, $now).days AS days WHERE days >= 1\n"
        "SET m.salience = coalesce(m.salience, 1.0)"
        " * 0.5 ^ (toFloat(days) / coalesce(m.salienceHalfLifeDays, $halfLife)),\n"
        "    m.decayedAt = since + duration({days: days})\n"
        "RETURN count(m) AS decayed"
    )
    return query, {"namespace": namespace, "now": now, "halfLife": half_life_days}


def prune(*, namespace: str, now: datetime, below: float, min_age_days: float,
          actor: str) -> Query:
    """Tombstone episodes whose salience decayed below the policy's floor."""
    query = (
        "CYPHER 25\n"
        "MATCH (m:Episodic) WHERE m.namespace = $namespace AND m.status = 'active'\n"
        "  AND m.salience IS NOT NULL AND m.salience < $below\n"
        "  AND m.createdAt < $now - duration({seconds: toInteger($minAge * 86400)})\n"
        + snapshot("m")
        + "SET m.status = 'forgotten', m.forgottenAt = $now, m.version = m.version + 1,"
        " m.updatedAt = $now\n"
        "WITH m\n"
        + audit_entry("randomUUID()", "m.id", "'prune'", "m.version", "$details")
        + "\nRETURN m.id AS id ORDER BY id"
    )
    return query, {"namespace": namespace, "now": now, "below": below, "minAge": min_age_days,
                   "actor": actor,
                   "details": canonical_json({"policy": {"salienceBelow": below,
                                                         "minAgeDays": min_age_days}})}


def consolidated_namespaces() -> Query:
    query = ("CYPHER 25\nMATCH (m:Episodic) RETURN DISTINCT m.namespace AS namespace"
             " ORDER BY namespace")
    return query, {}


class ConsolidationGraph:
    def __init__(self, client: GraphClient, records: RecordGraph) -> None:
        self.client = client
        self.records = records

    async def namespaces(self) -> list[str]:
        return [r["namespace"] for r in await self.client.read(consolidated_namespaces())]

    @staticmethod
    async def lock(tx: AsyncManagedTransaction, namespace: str) -> None:
        await run(tx, lock_namespace(namespace=namespace))

    @staticmethod
    async def episodes(tx: AsyncManagedTransaction, namespace: str) -> list[Episode]:
        rows = await run(tx, successful_episodes(namespace=namespace))
        return [Episode(id=r["id"],
                        payload=EpisodicPayload.model_validate(json.loads(r["payload"])),
                        created_at=to_datetime(r["createdAt"]),  # type: ignore[arg-type]
                        sensitivity=Sensitivity(r["sensitivity"])) for r in rows]

    @staticmethod
    async def existing(tx: AsyncManagedTransaction, namespace: str,
                       ids: Sequence[str]) -> dict[str, Existing]:
        rows = await run(tx, derived_records(namespace=namespace, ids=ids))
        return {r["id"]: Existing(id=r["id"], source_episodes=frozenset(r["sources"]),
                                  payload=json.loads(r["payload"]) if r["payload"] else {},
                                  sensitivity=Sensitivity(r["sensitivity"]),
                                  active=bool(r["active"])) for r in rows}

    async def create(self, tx: AsyncManagedTransaction, action: Derived,
                     prepared: PreparedMemory, actor: str) -> tuple[Record, list[Edge]]:
        """The derived record, and its DERIVED relationships to its episodes."""
        record = await self.records.create(
            prepared, type=action.type, payload=action.payload, valid_from=None,
            valid_to=None, actor=actor, tx=tx, extra={"sourceEpisodes": list(action.episodes)})
        return record, await self._derive(tx, action, prepared.input.namespace, prepared.now)

    async def reinforce(self, tx: AsyncManagedTransaction, namespace: str, action: Derived,
                        actor: str, now: datetime) -> list[Edge]:
        """Fold new episodes into an existing derived record; returns the new DERIVED
        relationships."""
        props: dict[str, Any] = {
            "sourceEpisodes": list(action.episodes), "sensitivity": action.sensitivity.value,
            "payloadJson": canonical_json(dump_payload(action.payload)),
        }
        if action.type is RecordType.COMPETENCE:
            props["successCount"] = dump_payload(action.payload)["successCount"]
        await run(tx, reinforce(namespace=namespace, action=action, actor=actor, now=now,
                                props=props))
        return await self._derive(tx, action, namespace, now)

    @staticmethod
    async def _derive(tx: AsyncManagedTransaction, action: Derived, namespace: str,
                      now: datetime) -> list[Edge]:
        edges: list[Edge] = []
        for episode in action.new_episodes:
            edges += await linked(tx, namespace=namespace, source=action.id, target=episode,
                                  type=EdgeType.DERIVED,
                                  metadata={"revision": "consolidation"}, now=now)
        return edges

    @staticmethod
    async def decay(tx: AsyncManagedTransaction, namespace: str, now: datetime,
                    half_life_days: float) -> int:
        rows = await run(tx, decay(namespace=namespace, now=now, half_life_days=half_life_days))
        return int(rows[0]["decayed"])

    @staticmethod
    async def prune(tx: AsyncManagedTransaction, namespace: str, now: datetime, below: float,
                    min_age_days: float, actor: str) -> list[str]:
        rows = await run(tx, prune(namespace=namespace, now=now, below=below,
                                   min_age_days=min_age_days, actor=actor))
        return [r["id"] for r in rows]

    @staticmethod
    async def with_extracted(tx: AsyncManagedTransaction, namespace: str,
                             episodes: list[Episode], extractor: Extractor) -> list[Episode]:
        """Episodes without observations get the extractor's, asked once per episode."""
        ids = [e.id for e in episodes if not e.payload.observations]
        rows = await run(tx, extracted(namespace=namespace, ids=ids))
        cached = {r["id"]: r["json"] for r in rows}
        out = []
        for episode in episodes:
            if episode.payload.observations:
                out.append(episode)
                continue
            if cached.get(episode.id) is None:
                found = await extractor(episode)
                text = canonical_json([o.model_dump(mode="json") for o in found])
                await run(tx, store_extracted(namespace=namespace, id=episode.id, text=text))
            else:
                text = cached[episode.id]
            observations = tuple(Observation.model_validate(o) for o in json.loads(text))
            out.append(Episode(id=episode.id, created_at=episode.created_at,
                               sensitivity=episode.sensitivity,
                               payload=episode.payload.model_copy(
                                   update={"observations": observations})))
        return out


def extracted(*, namespace: str, ids: Sequence[str]) -> Query:
    query = ("CYPHER 25\nMATCH (m:Episodic) WHERE m.namespace = $namespace AND m.id IN $ids\n"
             "RETURN m.id AS id, m.extractedJson AS json")
    return query, {"namespace": namespace, "ids": list(ids)}


def store_extracted(*, namespace: str, id: str, text: str) -> Query:
    """An annotation, written once: the episode's own fields never change."""
    query = ("CYPHER 25\nMATCH (m:Episodic {id: $id}) WHERE m.namespace = $namespace"
             " AND m.extractedJson IS NULL\nSET m.extractedJson = $text")
    return query, {"namespace": namespace, "id": id, "text": text}
