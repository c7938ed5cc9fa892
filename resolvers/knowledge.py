"""Typed records, facts, revisions: queries and mutations (thin: convert, call, wrap).

`KnowledgeQuery` and `KnowledgeMutation` are merged into the schema's root
types in `resolvers/schema.py`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from memlattice.core.auth import Tenant
from memlattice.core.errors import Unavailable
from memlattice.core.model import as_utc
from memlattice.core.records.payloads import RecordType as DomainRecordType
from memlattice.graph.facts import InvalidatePredicate
from memlattice.resolvers import glossary as g
from memlattice.resolvers.context import Info
from memlattice.resolvers.glossary import arg
from memlattice.resolvers.inputs import MemoryFilterInput
from memlattice.resolvers.knowledge_types import (
    ConsolidationReport,
    DerivedIds,
    FactHit,
    FactInput,
    FactWriteResult,
    InvalidateFactsInput,
    InvalidateResult,
    Record,
    RecordInput,
    RecordType,
    RecordWriteResult,
    RevisionResult,
    Summary,
    SummaryBullet,
    SummaryWindowInput,
)
from memlattice.resolvers.types import Hint, Memory, Status
from memlattice.services.knowledge import KnowledgeService


def _knowledge(info: Info) -> KnowledgeService:
    return info.context.knowledge


def _tenant(info: Info, namespace: str, *, write: bool) -> Tenant:
    """The caller's authorised view of `namespace` (clearance and scope limits); the
    service checks new records against it."""
    return info.context.tenant(namespace, write=write)


@strawberry.type
class KnowledgeQuery:
    @strawberry.field(description="One record (or fact) with its payload graph; `asOf` gives"
                      " the record only if it was believed then (recorded, not yet"
                      " superseded, retracted or forgotten).")
    async def record(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        id: Annotated[strawberry.ID, arg("The record's id.")],
        as_of: Annotated[datetime | None, arg(
            "Time travel: the record as it was at this instant; NOT_FOUND when it was not"
            " believed then.")] = None,
    ) -> Record:
        tenant = _tenant(info, namespace, write=False)
        found = await _knowledge(info).get(tenant=tenant, id=str(id), as_of=as_utc(as_of))
        return Record.from_domain(found)

    @strawberry.field(description="Typed records and facts, newest first (or best first for"
                      " `query`, a lexical search); `asOf` answers what was believed then.")
    async def records(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        types: Annotated[list[RecordType] | None, arg(
            "Only these record types; null: every type and facts.")] = None,
        statuses: Annotated[list[Status] | None, arg(
            "Only records in these states; [ACTIVE] by default. Not with asOf.")] = None,
        as_of: Annotated[datetime | None, arg(
            "Time travel: what was believed at this instant.")] = None,
        tags: Annotated[list[str] | None, arg(
            "Only records carrying every one of these tags.")] = None,
        thread_id: Annotated[str | None, arg(
            "Only working records of this thread (payload threadId).")] = None,
        task_id: Annotated[str | None, arg("Only records of this task.")] = None,
        query: Annotated[str | None, arg(
            "Words to match (lexical search): best match first instead of newest first.")] = None,
        limit: Annotated[int, arg("At most this many (1-500).")] = 50,
    ) -> list[Record]:
        tenant = _tenant(info, namespace, write=False)
        found = await _knowledge(info).list(
            tenant=tenant, types=types or [], statuses=statuses or [Status.ACTIVE],
            as_of=as_utc(as_of), limit=limit, tags=tags or [],
            thread_id=thread_id, task_id=task_id, query=query)
        return [Record.from_domain(r) for r in found]

    @strawberry.field(description="Facts by relevance to `query` (else by confidence), each"
                      " with its score and evidence.")
    async def recall_facts(
        self, info: Info,
        filter: Annotated[MemoryFilterInput, arg(
            "Which facts may be found: the namespace and any narrowing, as `memories` takes.")],
        query: Annotated[str | None, arg(
            "Words to search for; omitted: facts by confidence.")] = None,
        kind: Annotated[str | None, arg("Only facts of this kind.")] = None,
        min_confidence: Annotated[float | None, arg(
            "Only facts at least this confident, in [0, 1].")] = None,
        limit: Annotated[int, arg("At most this many (1-100).")] = 10,
    ) -> list[FactHit]:
        tenant = _tenant(info, filter.namespace, write=False)
        flt = filter.to_domain()
        if min_confidence is not None:
            flt = flt.model_copy(update={"min_confidence": min_confidence})
        hits = await _knowledge(info).recall_facts(tenant=tenant, flt=flt, query=query,
                                                   kind=kind, limit=limit)
        return [FactHit.from_domain(h) for h in hits]

    @strawberry.field(description="Every active fact and record resting on an evidence ref.")
    async def facts_by_evidence(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        ref: Annotated[str, arg("The evidence ref (EvidenceInput.ref).")],
        kind: Annotated[str | None, arg("Only evidence of this kind.")] = None,
    ) -> list[Record]:
        tenant = _tenant(info, namespace, write=False)
        found = await _knowledge(info).by_evidence(tenant=tenant, ref=ref, kind=kind)
        return [Record.from_domain(r) for r in found]


    @strawberry.field(description="A bounded extractive bullet list of a namespace's memories.")
    async def summarize(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        window: Annotated[SummaryWindowInput | None, arg(
            "Which memories to draw on; the 10 newest by default.")] = None,
    ) -> Summary:
        tenant = _tenant(info, namespace, write=False)
        window = window or SummaryWindowInput()
        bullets, used = await _knowledge(info).summarize(
            tenant=tenant, limit=window.limit, query=window.query, tags=window.tags or ())
        return Summary(
            bullets=[SummaryBullet(text=b.text, memory_id=strawberry.ID(b.memory_id))
                     for b in bullets],
            text="\n".join(f"- {b.text}" for b in bullets),
            memories=[Memory.from_domain(m) for m in used])


@strawberry.type
class KnowledgeMutation:
    @strawberry.mutation(description="Write a typed record; semantic records report (and link)"
                         " CONTRADICTS / SUPPORTS candidates.")
    async def write_record(
        self, info: Info,
        input: Annotated[RecordInput, arg("The record to write.")],
    ) -> RecordWriteResult:
        domain = input.to_domain()
        tenant = _tenant(info, input.namespace, write=True)
        written = await _knowledge(info).write_record(domain,
                                                      actor=info.context.actor, tenant=tenant)
        return RecordWriteResult(record=Record.from_domain(written.record),
                                 hints=[Hint.from_domain(h) for h in written.hints],
                                 created=written.created)

    @strawberry.mutation(description="Replace a record's payload (working state moves on);"
                         " episodic records fail with EPISODIC_IMMUTABLE.")
    async def update_record(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        id: Annotated[strawberry.ID, arg("The record's id.")],
        type: Annotated[RecordType, arg("The record's type (it cannot change).")],
        payload: Annotated[strawberry.scalars.JSON, arg(
            "The new payload (replaces the old one), camelCase keys.")],
        expected_version: Annotated[int | None, arg(g.EXPECTED_VERSION)] = None,
    ) -> Record:
        tenant = _tenant(info, namespace, write=True)
        updated = await _knowledge(info).update_record(
            tenant=tenant, id=str(id), type=DomainRecordType(type), payload=payload,
            expected_version=expected_version, actor=info.context.actor)
        return Record.from_domain(updated)

    @strawberry.mutation(description="Discard a task: its working records are tombstoned.")
    async def discard_task(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        task_id: Annotated[str, arg("The task whose working records are tombstoned.")],
    ) -> InvalidateResult:
        tenant = _tenant(info, namespace, write=True)
        ids = await _knowledge(info).discard_task(tenant=tenant, task_id=task_id,
                                                  actor=info.context.actor)
        return InvalidateResult(count=len(ids), ids=[strawberry.ID(i) for i in ids])

    @strawberry.mutation(description="Store a fact; the same claim again reinforces it.")
    async def store_fact(
        self, info: Info,
        input: Annotated[FactInput, arg("The fact to store.")],
    ) -> FactWriteResult:
        domain = input.to_domain()
        tenant = _tenant(info, input.namespace, write=True)
        written = await _knowledge(info).store_fact(domain, actor=info.context.actor,
                                                    tenant=tenant)
        return FactWriteResult(fact=Record.from_domain(written.record), created=written.created,
                               reasserted=written.reasserted,
                               hints=[Hint.from_domain(h) for h in written.hints])

    @strawberry.mutation(description="Tombstone (retract) every active fact matching all fields.")
    async def invalidate_facts(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        predicate: Annotated[InvalidateFactsInput, arg(
            "Which facts to retract (every given field must match).")],
    ) -> InvalidateResult:
        tenant = _tenant(info, namespace, write=True)
        ids = await _knowledge(info).invalidate_facts(
            tenant=tenant, query=predicate.query, actor=info.context.actor,
            predicate=InvalidatePredicate(
                id=str(predicate.id) if predicate.id is not None else None, key=predicate.key,
                kind=predicate.kind, claim=predicate.claim, tag=predicate.tag,
                evidence_ref=predicate.evidence_ref))
        return InvalidateResult(count=len(ids), ids=[strawberry.ID(i) for i in ids])

    @strawberry.mutation(description="Replace a record: the old one is superseded, kept, linked.")
    async def supersede_record(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        id: Annotated[strawberry.ID, arg("The id of the record to replace.")],
        record: Annotated[RecordInput, arg("Its successor (the same type).")],
        expected_version: Annotated[int | None, arg(g.EXPECTED_VERSION)] = None,
    ) -> RevisionResult:
        domain = record.to_domain()
        tenant = _tenant(info, namespace, write=True)
        previous, current = await _knowledge(info).supersede(
            tenant=tenant, id=str(id), successor=domain,
            expected_version=expected_version, actor=info.context.actor)
        return RevisionResult(record=Record.from_domain(current),
                              previous=[Record.from_domain(previous)])

    @strawberry.mutation(description="A variant that holds under conditions; both stay active,"
                         " joined by DERIVED.")
    async def fork_record(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        id: Annotated[strawberry.ID, arg("The id of the record to fork.")],
        record: Annotated[RecordInput, arg(
            "The variant (the same type; a semantic fork needs conditional validity).")],
    ) -> RevisionResult:
        domain = record.to_domain()
        tenant = _tenant(info, namespace, write=True)
        original, branch = await _knowledge(info).fork(
            tenant=tenant, id=str(id), branch=domain, actor=info.context.actor)
        return RevisionResult(record=Record.from_domain(branch),
                              previous=[Record.from_domain(original)])

    @strawberry.mutation(description="`by` CONTRADICTS `id`; both become contested.")
    async def contest_record(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        id: Annotated[strawberry.ID, arg("The record contested.")],
        by: Annotated[strawberry.ID, arg("The record that contradicts it.")],
        reason: Annotated[str | None, arg("Why, in words (kept on the relationship).")] = None,
    ) -> RevisionResult:
        tenant = _tenant(info, namespace, write=True)
        target, contender = await _knowledge(info).contest(
            tenant=tenant, id=str(id), by=str(by), reason=reason, actor=info.context.actor)
        return RevisionResult(record=Record.from_domain(target),
                              previous=[Record.from_domain(contender)])

    @strawberry.mutation(description="Withdraw a record as wrong: status RETRACTED, kept for"
                         " audit and time travel; of concurrent retracts exactly one wins.")
    async def retract_record(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        id: Annotated[strawberry.ID, arg("The record's id.")],
        reason: Annotated[str | None, arg("Why, in words (kept in the audit trail).")] = None,
        expected_version: Annotated[int | None, arg(g.EXPECTED_VERSION)] = None,
    ) -> Record:
        tenant = _tenant(info, namespace, write=True)
        retracted = await _knowledge(info).retract(
            tenant=tenant, id=str(id), reason=reason, expected_version=expected_version,
            actor=info.context.actor)
        return Record.from_domain(retracted)

    @strawberry.mutation(description="Several records become one: sources are superseded and"
                         " DERIVED from the new record.")
    async def merge_records(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        ids: Annotated[list[strawberry.ID], arg("The records to merge (the same type).")],
        into: Annotated[RecordInput, arg("The record they become.")],
    ) -> RevisionResult:
        domain = into.to_domain()
        tenant = _tenant(info, namespace, write=True)
        merged, sources = await _knowledge(info).merge(
            tenant=tenant, ids=[str(i) for i in ids], into=domain,
            actor=info.context.actor)
        return RevisionResult(record=Record.from_domain(merged),
                              previous=[Record.from_domain(s) for s in sources])

    @strawberry.mutation(description="Consolidate a namespace now: successful episodes become"
                         " facts, competences and plans; salience decays; episodes are pruned"
                         " by policy. Idempotent. `now` replays a run at another time.")
    async def consolidate(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        now: Annotated[datetime | None, arg(
            "Run as of this instant instead of the server clock (replays).")] = None,
    ) -> ConsolidationReport:
        tenant = _tenant(info, namespace, write=True)
        scheduler = info.context.consolidation
        if scheduler is None:
            raise Unavailable("consolidation is not running in this process")
        report = await scheduler.consolidator.consolidate(tenant, actor=info.context.actor,
                                                          now=now)
        return ConsolidationReport(
            namespace=report.namespace, created=DerivedIds.from_domain(report.created),
            reinforced=DerivedIds.from_domain(report.reinforced), decayed=report.decayed,
            pruned=[strawberry.ID(i) for i in report.pruned], changed=report.changed)
