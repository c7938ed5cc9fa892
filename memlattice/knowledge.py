"""Use cases of typed records and facts: what the knowledge resolvers call.

Between the resolvers and `graph/`: validate payloads, give a record its id,
time and vector (through `MemoryService.prepare`, so records are embedded and
cached like any memory), and turn candidate claims into contradiction hints
inside the same transaction as the write.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction

from graph.codec import Memory
from graph.facts import FactGraph, InvalidatePredicate, fact_id
from graph.hints import claim_of, find_candidates, link_hints
from graph.record_codec import Record
from graph.records import Clearance, RecordGraph
from graph.revisions import NewRecord, RevisionGraph
from memlattice.auth import Tenant
from memlattice.errors import Conflict, ValidationError
from memlattice.lucene import all_terms, any_terms
from memlattice.model import MemoryFilter, Status, utcnow
from memlattice.records.hints import Hint, hints_for
from memlattice.records.inputs import FactInput, RecordInput
from memlattice.records.payloads import (
    RecordType,
    SemanticPayload,
    ValidityKind,
    parse_payload,
)
from memlattice.records.summary import Bullet, extract
from memlattice.search_config import SearchConfig
from memlattice.service import MemoryService, SearchRequest

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

    # ------------------------------------------------------------ records

    async def _new(self, input: RecordInput) -> NewRecord:
        payload, memory = input.parsed()
        (prepared,) = await self.memories.prepare([memory])
        extra = ({"salienceHalfLifeDays": input.salience_half_life_days}
                 if input.salience_half_life_days is not None else None)
        return NewRecord(prepared=prepared, type=input.type, payload=payload,
                         valid_from=input.valid_from, valid_to=input.valid_to, extra=extra)

    async def write_record(self, input: RecordInput, *, actor: str,
                           clearance: Clearance = None) -> Written:
        """Create a record; semantic records also get contradiction/support hints."""
        new = await self._new(input)

        async def work(tx: AsyncManagedTransaction) -> Written:
            record = await self.records.create(
                new.prepared, type=new.type, payload=new.payload, valid_from=new.valid_from,
                valid_to=new.valid_to, actor=actor, tx=tx, extra=new.extra)
            hints: list[Hint] = []
            if new.type is RecordType.SEMANTIC:
                hints = await self._hints(tx, record, clearance)
            return Written(record=record, hints=tuple(hints))

        written: Written = await self.client.transaction(work)
        await self.memories.embed_side_spaces(input.namespace, [written.record.memory])
        return written

    async def _hints(self, tx: AsyncManagedTransaction, record: Record,
                     clearance: Clearance) -> list[Hint]:
        now = record.memory.created_at
        found = await find_candidates(tx, record, now=now, clearance=clearance)
        hints = hints_for(claim_of(record), found)
        await link_hints(tx, record, hints, now=now)
        return hints

    async def update_record(
        self, *, namespace: str, id: str, payload: dict[str, Any], type: RecordType,
        expected_version: int | None, actor: str, clearance: Clearance = None,
    ) -> Record:
        parsed = parse_payload(type, payload)
        return await self.records.revise_payload(
            namespace=namespace, id=id, type=type, payload=parsed,
            expected_version=expected_version, actor=actor, now=utcnow(), clearance=clearance)

    async def get(self, *, namespace: str, id: str, as_of: datetime | None = None,
                  clearance: Clearance = None) -> Record:
        return await self.records.get(namespace=namespace, id=id, now=utcnow(), as_of=as_of,
                                      clearance=clearance)

    async def list(
        self, *, namespace: str, types: Sequence[RecordType | str] = (),
        statuses: Sequence[Status] = (Status.ACTIVE,), as_of: datetime | None = None,
        clearance: Clearance = None, limit: int = 50, tags: Sequence[str] = (),
        thread_id: str | None = None, task_id: str | None = None, query: str | None = None,
    ) -> list[Record]:
        """Newest first; with `query`, the records matching any of its words, best first
        (a lexical search that, unlike `search`, also travels in time with `as_of`)."""
        if not 1 <= limit <= 500:
            raise ValidationError("limit must be between 1 and 500", field="limit")
        lucene = any_terms(query) if query is not None else None
        if query is not None and lucene is None:
            raise ValidationError("query has no word to match", field="query")
        return await self.records.list(
            namespace=namespace, types=types or RECORD_KINDS, statuses=statuses, now=utcnow(),
            as_of=as_of, clearance=clearance, limit=limit, tags=tags, thread_id=thread_id,
            task_id=task_id, lucene=lucene)

    async def discard_task(self, *, namespace: str, task_id: str, actor: str,
                           clearance: Clearance = None) -> list[str]:
        return await self.records.discard_task(namespace=namespace, task_id=task_id,
                                               actor=actor, now=utcnow(), clearance=clearance)

    # ------------------------------------------------------------ facts

    async def store_fact(self, input: FactInput, *, actor: str,
                         clearance: Clearance = None) -> Written:
        id = fact_id(input.namespace, input.kind, input.claim)
        (prepared,) = await self.memories.prepare([input.as_memory(id)])

        async def work(tx: AsyncManagedTransaction) -> Written:
            record, created = await self.facts.store(prepared, kind=input.kind,
                                                     evidence=input.evidence, actor=actor,
                                                     tx=tx)
            hints = await self._hints(tx, record, clearance) if created else []
            return Written(record=record, hints=tuple(hints), created=created)

        try:
            written: Written = await self.client.transaction(work)
        except Conflict:
            # A concurrent store of the same claim created it first: reinforce it instead.
            written = await self.client.transaction(work)
        if written.created:
            await self.memories.embed_side_spaces(input.namespace, [written.record.memory])
        return written

    async def recall_facts(
        self, *, flt: MemoryFilter, query: str | None, kind: str | None, limit: int = 10,
        clearance: Tenant,
    ) -> list[FactHit]:
        """Facts by relevance to `query` (hybrid search), else by confidence."""
        if not 1 <= limit <= MAX_RECALL:
            raise ValidationError(f"limit must be between 1 and {MAX_RECALL}", field="limit")
        metadata = {**flt.metadata, **({"factKind": kind} if kind else {})}
        flt = flt.model_copy(update={"memory_types": ("fact",), "metadata": metadata})
        if query is None or not query.strip():
            found = await self.records.list(
                namespace=flt.namespace, types=["fact"], now=utcnow(), as_of=flt.as_of,
                clearance=clearance, limit=MAX_RECALL)
            hits = [FactHit(r, r.memory.confidence) for r in found
                    if (kind is None or r.kind == kind)
                    and r.memory.confidence >= (flt.min_confidence or 0.0)]
            return sorted(hits, key=lambda h: (-h.score, h.fact.memory.id))[:limit]
        hits = await self.memories.search(SearchRequest(
            filter=flt, query=query, config=SearchConfig(limit=limit)), tenant=clearance)
        records = await self.facts.records(namespace=flt.namespace,
                                           ids=[h.memory.id for h in hits],
                                           now=flt.as_of or utcnow())
        return [FactHit(records[h.memory.id], h.scored.score) for h in hits
                if h.memory.id in records]

    async def invalidate_facts(
        self, *, namespace: str, predicate: InvalidatePredicate, query: str | None,
        actor: str,
    ) -> list[str]:
        lucene = all_terms(query) if query is not None else None
        if query is not None and lucene is None:
            raise ValidationError("query has no word to match", field="predicate.query")
        predicate = InvalidatePredicate(**{**predicate.__dict__, "lucene": lucene})
        if all(v is None for v in predicate.__dict__.values()):
            raise ValidationError(
                "the predicate is empty; give any of id, key, kind, claim, query, tag,"
                " evidenceRef", field="predicate")
        return await self.facts.invalidate(namespace=namespace, predicate=predicate,
                                           actor=actor, now=utcnow())

    async def by_evidence(self, *, namespace: str, ref: str, kind: str | None,
                          clearance: Clearance = None) -> list[Record]:
        return await self.facts.by_evidence(namespace=namespace, ref=ref, kind=kind,
                                            now=utcnow(), clearance=clearance)

    # ------------------------------------------------------------ summaries

    async def summarize(
        self, *, tenant: Tenant, limit: int = 10, query: str | None = None,
        tags: Sequence[str] = (),
    ) -> tuple[list[Bullet], list[Memory]]:
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

    async def supersede(self, *, namespace: str, id: str, successor: RecordInput,
                        expected_version: int | None, actor: str,
                        clearance: Clearance = None) -> tuple[Record, Record]:
        _same_namespace(namespace, successor)
        previous, current = await self.revisions.supersede(
            namespace=namespace, id=id, successor=await self._new(successor),
            expected_version=expected_version, actor=actor, clearance=clearance)
        await self.memories.embed_side_spaces(namespace, [current.memory])
        return previous, current

    async def fork(self, *, namespace: str, id: str, branch: RecordInput, actor: str,
                   clearance: Clearance = None) -> Record:
        """A conditional variant: a semantic branch must say under which conditions."""
        _same_namespace(namespace, branch)
        new = await self._new(branch)
        if isinstance(new.payload, SemanticPayload) and (
                new.payload.validity.kind is not ValidityKind.CONDITIONAL):
            raise ValidationError("a fork of a semantic record needs conditional validity",
                                  fields=["record.payload.validity.kind"])
        forked = await self.revisions.fork(namespace=namespace, id=id, branch=new, actor=actor,
                                           clearance=clearance)
        await self.memories.embed_side_spaces(namespace, [forked.memory])
        return forked

    async def contest(self, *, namespace: str, id: str, by: str, reason: str | None,
                      actor: str, clearance: Clearance = None) -> tuple[Record, Record]:
        return await self.revisions.contest(namespace=namespace, id=id, by=by, reason=reason,
                                            actor=actor, now=utcnow(), clearance=clearance)

    async def retract(self, *, namespace: str, id: str, reason: str | None,
                      expected_version: int | None, actor: str,
                      clearance: Clearance = None) -> Record:
        return await self.revisions.retract(namespace=namespace, id=id, reason=reason,
                                            expected_version=expected_version, actor=actor,
                                            now=utcnow(), clearance=clearance)

    async def merge(self, *, namespace: str, ids: Sequence[str], into: RecordInput,
                    actor: str, clearance: Clearance = None) -> tuple[Record, list[Record]]:
        _same_namespace(namespace, into)
        merged, sources = await self.revisions.merge(namespace=namespace, ids=ids,
                                                     into=await self._new(into), actor=actor,
                                                     clearance=clearance)
        await self.memories.embed_side_spaces(namespace, [merged.memory])
        return merged, sources


def _same_namespace(namespace: str, input: RecordInput) -> None:
    if input.namespace != namespace:
        raise ValidationError("the new record must be in the namespace it revises",
                              field="record.namespace")
