"""Use cases of typed records and facts: what the knowledge resolvers call.

Between the resolvers and `graph/`: validate payloads, give a record its id,
time and vector (through `MemoryService.prepare`, so records are embedded and
cached like any memory), and turn candidate claims into contradiction hints and
update links (graph.updates) inside the same transaction as the write.

Every method takes the caller's `Tenant` (namespace, clearance, scopes,
writable): reads and writes see only what it may see, writes check it may
write, new records must lie inside its bounds. Committed changes are then
announced on the event bus through the memory service's `ChangeEvents`
(`memlattice.services.change_events`).

Built once with the app's other services; reached through the resolver context.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from neo4j import AsyncManagedTransaction

from memlattice.core.auth import Tenant
from memlattice.core.errors import Conflict, ValidationError
from memlattice.core.lucene import all_terms, query_any_terms, words
from memlattice.core.model import MemoryFilter, MemoryInput, Status, camel, utcnow
from memlattice.core.names import require_name, require_names
from memlattice.core.records.hints import Hint, hints_for
from memlattice.core.records.inputs import FactInput, RecordInput
from memlattice.core.records.payloads import (
    RecordType,
    SemanticPayload,
    ValidityKind,
    parse_payload,
)
from memlattice.core.records.summary import Bullet, extract
from memlattice.core.search_config import SearchConfig
from memlattice.graph.codec import Edge, Memory
from memlattice.graph.explicit_ids import claim_record_id
from memlattice.graph.facts import FactGraph, InvalidatePredicate, fact_id
from memlattice.graph.hints import HintProbe, claim_of, find_candidates, link_hints
from memlattice.graph.record_codec import Record, payload_json
from memlattice.graph.records import RecordGraph
from memlattice.graph.revisions import NewRecord, RevisionGraph
from memlattice.graph.updates.store import detect_in, written_of
from memlattice.services.auto_supersede import announce_auto_superseded
from memlattice.services.memories import MemoryService
from memlattice.services.recall import SearchRequest

MAX_RECALL = 100
MAX_SUMMARY = 50
# What `records` lists when no type is named: typed records and facts, not plain notes.
RECORD_KINDS: tuple[str, ...] = (*(t.value for t in RecordType), "fact")


@dataclass(frozen=True)
class Written:
    """A record or fact as written, with the hints its write produced."""

    record: Record
    hints: tuple[Hint, ...] = ()
    created: bool = True
    # A fact whose claim had been invalidated, stored again as a new generation.
    reasserted: bool = False
    # The relationships the write created (hints; a reasserted fact's SUPERSEDES).
    edges: tuple[Edge, ...] = ()


@dataclass(frozen=True)
class FactHit:
    fact: Record
    score: float


class KnowledgeService:
    def __init__(self, memories: MemoryService) -> None:
        self.memories = memories
        client = memories.graph.client
        self.client = client
        self.records = RecordGraph(client)
        self.facts = FactGraph(client)
        self.revisions = RevisionGraph(client, self.records)
        # The memory service's: one bus, one way of announcing.
        self.events = memories.events

    # ------------------------------------------------------------ records

    async def _new(self, input: RecordInput, tenant: Tenant) -> NewRecord:
        """Check the new record lies inside the tenant's bounds, then prepare it."""
        tenant.check_record(namespace=input.namespace, scope=input.scope,
                            sensitivity=input.sensitivity)
        payload, memory = input.parsed()
        (prepared,) = await self.memories.prepare([memory])
        extra = ({"salienceHalfLifeDays": input.salience_half_life_days}
                 if input.salience_half_life_days is not None else None)
        return NewRecord(prepared=prepared, type=input.type, payload=payload,
                         valid_from=input.valid_from, valid_to=input.valid_to, extra=extra)

    async def write_record(self, input: RecordInput, *, actor: str, tenant: Tenant) -> Written:
        """Create a record; semantic records also get contradiction/support hints."""
        new = await self._new(input, tenant)
        probe = (await self._probe(new.prepared.input.namespace, new.prepared.input,
                                   new.prepared.embedding)
                 if new.type is RecordType.SEMANTIC else None)
        auto = await self.memories.auto_supersede(input.namespace)

        async def work(tx: AsyncManagedTransaction) -> Written:
            # A record that names its id: a retry of it is answered as it is (graph.explicit_ids).
            again = await claim_record_id(tx, new.prepared, payload_json(new.payload),
                                          tenant=tenant)
            if again is not None:
                return Written(record=again, created=False)
            record = await self.records.create(
                new.prepared, type=new.type, payload=new.payload, valid_from=new.valid_from,
                valid_to=new.valid_to, actor=actor, tx=tx, extra=new.extra)
            hints: list[Hint] = []
            edges: list[Edge] = []
            if new.type is RecordType.SEMANTIC:
                hints, edges = await self._hints(tx, record, tenant, probe)
            await detect_in(tx, written_of([new.prepared], new.payload.model_dump()),
                            tenant=tenant, now=new.prepared.now, auto_supersede=auto,
                            actor=actor)
            return Written(record=record, hints=tuple(hints), edges=tuple(edges))

        written: Written = await self.client.transaction(work)
        if not written.created:
            return written
        await self.events.written([written.record.memory], actor)
        await announce_auto_superseded(self.client, self.events, [written.record.memory],
                                       auto=auto, tenant=tenant, actor=actor)
        await self.events.edges_added(input.namespace, written.edges, actor,
                                      known=[written.record.memory])
        await self.memories.embed_side_spaces(input.namespace, [written.record.memory])
        return written

    async def _probe(self, namespace: str, memory: MemoryInput,
                     primary: Sequence[float] | None) -> HintProbe | None:
        """The new claim's vector in the space its namespace searches, so hints find
        near-identical claims by meaning too (taken before the write's transaction)."""
        found = await self.memories.searched_vector(namespace, memory, primary)
        return HintProbe(vector=found[1], space=found[0]) if found else None

    async def _hints(self, tx: AsyncManagedTransaction, record: Record, clearance: Tenant,
                     probe: HintProbe | None = None) -> tuple[list[Hint], list[Edge]]:
        """The claim's hints, and the candidate relationships they created."""
        now = record.memory.created_at
        found = await find_candidates(tx, record, now=now, clearance=clearance, probe=probe)
        hints = hints_for(claim_of(record), found)
        return hints, await link_hints(tx, record, hints, now=now)

    async def update_record(
        self, *, tenant: Tenant, id: str, payload: object, type: RecordType,
        expected_version: int | None, actor: str,
    ) -> Record:
        """`payload` is the caller's JSON value as sent; parse_payload refuses one that
        is not an object of the type's fields."""
        tenant.require_write()
        parsed = parse_payload(type, payload)
        updated = await self.records.revise_payload(
            namespace=tenant.namespace, id=id, type=type, payload=parsed,
            expected_version=expected_version, actor=actor, now=utcnow(), clearance=tenant)
        await self.events.updated([updated.memory], actor)
        return updated

    async def get(self, *, tenant: Tenant, id: str, as_of: datetime | None = None) -> Record:
        return await self.records.get(namespace=tenant.namespace, id=id, now=utcnow(),
                                      as_of=as_of, clearance=tenant)

    async def list(
        self, *, tenant: Tenant, types: Sequence[RecordType | str] = (),
        statuses: Sequence[Status] = (Status.ACTIVE,), as_of: datetime | None = None,
        limit: int = 50, tags: Sequence[str] = (),
        thread_id: str | None = None, task_id: str | None = None, query: str | None = None,
    ) -> list[Record]:
        """Newest first; with `query`, the records matching any of its words, best first
        (a lexical search that, unlike `search`, also travels in time with `as_of`)."""
        if not 1 <= limit <= 500:
            raise ValidationError("limit must be between 1 and 500", field="limit")
        require_names(threadId=thread_id, taskId=task_id)
        for tag in tags:
            require_name(tag, "tags")
        lucene = query_any_terms(query) if query is not None else None
        if query is not None and lucene is None:
            raise ValidationError("query has no word to match", field="query")
        return await self.records.list(
            namespace=tenant.namespace, types=types or RECORD_KINDS, statuses=statuses,
            now=utcnow(), as_of=as_of, clearance=tenant, limit=limit, tags=tags,
            thread_id=thread_id, task_id=task_id, lucene=lucene)

    async def discard_task(self, *, tenant: Tenant, task_id: str, actor: str) -> builtins.list[str]:
        """Tombstone the task's working records that the tenant may see."""
        tenant.require_write()
        require_name(task_id, "taskId")
        ids = await self.records.discard_task(namespace=tenant.namespace, task_id=task_id,
                                              actor=actor, now=utcnow(), clearance=tenant)
        await self.events.forgotten_ids(tenant.namespace, ids, actor)
        return ids

    # ------------------------------------------------------------ facts

    async def store_fact(self, input: FactInput, *, actor: str, tenant: Tenant) -> Written:
        """Create the claim's fact, reinforce it, or (over an invalidated one) reassert it as
        a new generation. A claim held by a fact the tenant cannot see is a CONFLICT."""
        tenant.check_record(namespace=input.namespace, scope=input.scope,
                            sensitivity=input.sensitivity)
        id = fact_id(input.namespace, input.kind, input.claim)
        (prepared,) = await self.memories.prepare([input.as_memory(id)])
        probe = await self._probe(input.namespace, prepared.input, prepared.embedding)
        auto = await self.memories.auto_supersede(input.namespace)

        async def work(tx: AsyncManagedTransaction) -> Written:
            stored = await self.facts.store(prepared, kind=input.kind, evidence=input.evidence,
                                            actor=actor, tx=tx, clearance=tenant)
            hints, edges = (await self._hints(tx, stored.record, tenant, probe)
                            if stored.created else ([], []))
            if stored.created:
                await detect_in(tx, written_of([prepared], id=stored.record.memory.id),
                                tenant=tenant, now=prepared.now, auto_supersede=auto,
                                actor=actor)
            return Written(record=stored.record, hints=tuple(hints), created=stored.created,
                           reasserted=stored.reasserted, edges=stored.edges + tuple(edges))

        try:
            written: Written = await self.client.transaction(work)
        except Conflict:
            # A concurrent store of the same claim created it first: reinforce it instead.
            written = await self.client.transaction(work)
        if written.created:
            await self.events.written([written.record.memory], actor)
            await announce_auto_superseded(self.client, self.events, [written.record.memory],
                                           auto=auto, tenant=tenant, actor=actor)
            await self.memories.embed_side_spaces(input.namespace, [written.record.memory])
        else:
            await self.events.updated([written.record.memory], actor)
        await self.events.edges_added(input.namespace, written.edges, actor,
                                      known=[written.record.memory])
        return written

    async def recall_facts(
        self, *, tenant: Tenant, flt: MemoryFilter, query: str | None, kind: str | None,
        limit: int = 10,
    ) -> builtins.list[FactHit]:
        """Facts by relevance to `query` (hybrid search), else by confidence."""
        _same_namespace(tenant.namespace, flt.namespace, "filter.namespace")
        if not 1 <= limit <= MAX_RECALL:
            raise ValidationError(f"limit must be between 1 and {MAX_RECALL}", field="limit")
        metadata = {**flt.metadata, **({"factKind": kind} if kind else {})}
        flt = flt.model_copy(update={"memory_types": ("fact",), "metadata": metadata})
        if query is None or not query.strip():
            found = await self.records.list(
                namespace=tenant.namespace, types=["fact"], now=utcnow(), as_of=flt.as_of,
                clearance=tenant, limit=MAX_RECALL)
            hits = [FactHit(r, r.memory.confidence) for r in found
                    if (kind is None or r.kind == kind)
                    and r.memory.confidence >= (flt.min_confidence or 0.0)]
            return sorted(hits, key=lambda h: (-h.score, h.fact.memory.id))[:limit]
        found_memories = await self.memories.search(SearchRequest(
            filter=flt, query=query, config=SearchConfig(limit=limit)), tenant=tenant)
        records = await self.facts.records(namespace=tenant.namespace,
                                           ids=[h.memory.id for h in found_memories],
                                           now=flt.as_of or utcnow(), clearance=tenant,
                                           as_of=flt.as_of)
        return [FactHit(records[h.memory.id], h.scored.score) for h in found_memories
                if h.memory.id in records]

    async def invalidate_facts(
        self, *, tenant: Tenant, predicate: InvalidatePredicate, query: str | None,
        actor: str,
    ) -> builtins.list[str]:
        """Tombstone the matching active facts that the tenant may see (only those)."""
        tenant.require_write()
        # A blank field matches nothing today, and would match everything if the
        # query ever treated it as a substring: refused, like forget's predicate.
        require_names(**{f"predicate.{camel(k)}": v for k, v in predicate.__dict__.items()
                         if isinstance(v, str) and k != "claim"})
        if predicate.claim is not None and not words(predicate.claim):
            raise ValidationError("claim has no word to match", field="predicate.claim")
        lucene = all_terms(query) if query is not None else None
        if query is not None and lucene is None:
            raise ValidationError("query has no word to match", field="predicate.query")
        predicate = InvalidatePredicate(**{**predicate.__dict__, "lucene": lucene})
        if all(v is None for v in predicate.__dict__.values()):
            raise ValidationError(
                "the predicate is empty; give any of id, key, kind, claim, query, tag,"
                " evidenceRef", field="predicate")
        ids = await self.facts.invalidate(namespace=tenant.namespace, predicate=predicate,
                                          actor=actor, now=utcnow(), clearance=tenant)
        await self.events.forgotten_ids(tenant.namespace, ids, actor)
        return ids

    async def by_evidence(
        self, *, tenant: Tenant, ref: str, kind: str | None,
    ) -> builtins.list[Record]:
        require_names(ref=ref, kind=kind)
        return await self.facts.by_evidence(namespace=tenant.namespace, ref=ref, kind=kind,
                                            now=utcnow(), clearance=tenant)

    # ------------------------------------------------------------ summaries

    async def summarize(
        self, *, tenant: Tenant, limit: int = 10, query: str | None = None,
        tags: Sequence[str] = (),
    ) -> tuple[builtins.list[Bullet], builtins.list[Memory]]:
        """Bullets from the most relevant (with `query`) or newest active memories."""
        if not 1 <= limit <= MAX_SUMMARY:
            raise ValidationError(f"window.limit must be between 1 and {MAX_SUMMARY}",
                                  field="window.limit")
        pool = min(limit * 3, 150)
        if query is not None and query.strip():
            flt = MemoryFilter(namespace=tenant.namespace, tags_all=tuple(tags))
            hits = await self.memories.search(SearchRequest(
                filter=flt, query=query, config=SearchConfig(limit=pool)), tenant=tenant)
            memories = [h.memory for h in hits]
        else:
            found = await self.records.list(namespace=tenant.namespace, now=utcnow(),
                                            clearance=tenant, limit=pool, tags=tags)
            memories = [r.memory for r in found]
        bullets = extract([(m.id, m.summary or m.content) for m in memories], limit=limit)
        used = {b.memory_id for b in bullets}
        return bullets, [m for m in memories if m.id in used]

    # ------------------------------------------------------------ revisions

    async def supersede(self, *, tenant: Tenant, id: str, successor: RecordInput,
                        expected_version: int | None, actor: str) -> tuple[Record, Record]:
        revised = await self.revisions.supersede(
            namespace=tenant.namespace, id=id, successor=await self._new(successor, tenant),
            expected_version=expected_version, actor=actor, clearance=tenant)
        previous, current = revised.records
        await self.events.replaced(current.memory, [previous.memory], actor)
        await self.events.edges_added(tenant.namespace, revised.edges, actor,
                                      known=[current.memory, previous.memory])
        await self.memories.embed_side_spaces(tenant.namespace, [current.memory])
        return previous, current

    async def fork(self, *, tenant: Tenant, id: str, branch: RecordInput,
                   actor: str) -> tuple[Record, Record]:
        """A conditional variant: a semantic branch must say under which conditions.
        Returns (the original as the fork left it, the fork)."""
        new = await self._new(branch, tenant)
        if isinstance(new.payload, SemanticPayload) and (
                new.payload.validity.kind is not ValidityKind.CONDITIONAL):
            raise ValidationError("a fork of a semantic record needs conditional validity",
                                  fields=["record.payload.validity.kind"])
        revised = await self.revisions.fork(namespace=tenant.namespace, id=id, branch=new,
                                            actor=actor, clearance=tenant)
        original, forked = revised.records
        await self.events.written([forked.memory], actor)
        await self.events.updated([original.memory], actor)
        await self.events.edges_added(tenant.namespace, revised.edges, actor,
                                      known=[forked.memory, original.memory])
        await self.memories.embed_side_spaces(tenant.namespace, [forked.memory])
        return original, forked

    async def contest(self, *, tenant: Tenant, id: str, by: str, reason: str | None,
                      actor: str) -> tuple[Record, Record]:
        """`by` CONTRADICTS `id`: both must be visible to the tenant."""
        tenant.require_write()
        revised = await self.revisions.contest(
            namespace=tenant.namespace, id=id, by=by, reason=reason, actor=actor, now=utcnow(),
            clearance=tenant)
        target, contender = revised.records
        await self.events.updated([target.memory, contender.memory], actor)
        await self.events.edges_added(tenant.namespace, revised.edges, actor,
                                      known=[target.memory, contender.memory])
        return target, contender

    async def retract(self, *, tenant: Tenant, id: str, reason: str | None,
                      expected_version: int | None, actor: str) -> Record:
        tenant.require_write()
        retracted = await self.revisions.retract(
            namespace=tenant.namespace, id=id, reason=reason, expected_version=expected_version,
            actor=actor, now=utcnow(), clearance=tenant)
        await self.events.forgotten([retracted.memory], actor)
        return retracted

    async def merge(self, *, tenant: Tenant, ids: Sequence[str], into: RecordInput,
                    actor: str) -> tuple[Record, builtins.list[Record]]:
        """Several visible records become one new record inside the tenant's bounds."""
        revised = await self.revisions.merge(
            namespace=tenant.namespace, ids=ids, into=await self._new(into, tenant), actor=actor,
            clearance=tenant)
        merged, *sources = revised.records
        await self.events.replaced(merged.memory, [s.memory for s in sources], actor)
        await self.events.edges_added(tenant.namespace, revised.edges, actor,
                                      known=[r.memory for r in revised.records])
        await self.memories.embed_side_spaces(tenant.namespace, [merged.memory])
        return merged, sources


def _same_namespace(namespace: str, other: str, field: str) -> None:
    """New records are checked by `Tenant.check_record`; this guards a filter's namespace."""
    if other != namespace:
        raise ValidationError(f"{field} must be the namespace of the operation ({namespace})",
                              field=field)
