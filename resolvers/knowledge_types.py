"""GraphQL types and inputs of typed records, facts, revisions and summaries."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.scalars import JSON

from memlattice.core import model
from memlattice.core.records import inputs, payloads
from memlattice.graph.record_codec import Record as DomainRecord
from memlattice.resolvers.inputs import _SCOPE_FIELDS, _set
from memlattice.resolvers.planned_inputs import planned
from memlattice.resolvers.scalars import Vector
from memlattice.resolvers.types import Hint, Memory, Scope, Sensitivity
from memlattice.services.knowledge import FactHit as DomainFactHit

# Plain aliases for mypy; strawberry.enum registers each class in place (see types.py).
RecordType = payloads.RecordType
RevisionStatus = payloads.RevisionStatus
PlanEdgeKind = payloads.PlanEdgeKind
strawberry.enum(RecordType, description="The five typed record kinds.")
strawberry.enum(RevisionStatus)
strawberry.enum(PlanEdgeKind)


@strawberry.type(description="One call of an episode's tool graph (a :ToolCall node).")
class ToolCall:
    id: str
    tool: str
    args: JSON
    result: str | None
    at: datetime | None
    depends_on: list[str] = strawberry.field(description="Calls whose output this one used.")


@strawberry.type(description="One step of a plan graph (a :PlanNode node).")
class PlanNode:
    id: str
    kind: str
    label: str | None
    tool: str | None
    args: JSON


@strawberry.type(description="A DATA or CONTROL relationship between two plan nodes.")
class PlanEdge:
    source: str
    target: str
    kind: PlanEdgeKind


@strawberry.type(description="What a claim rests on; shared :Evidence nodes.")
class Evidence:
    kind: str
    ref: str


@strawberry.type(description="A typed record (or fact): a memory with a label and a payload.")
class Record:
    memory: Memory
    record_type: str = strawberry.field(
        description="episodic, working, semantic, competence, plan_graph, or fact.")
    payload: JSON
    kind: str | None = strawberry.field(description="A fact's kind.")
    recorded_at: datetime = strawberry.field(description="System time: when it was written.")
    valid_from: datetime | None = strawberry.field(description="World time: holds from.")
    valid_to: datetime | None = strawberry.field(description="World time: holds until.")
    revision_status: RevisionStatus | None
    retracted_at: datetime | None
    tool_calls: list[ToolCall]
    plan_nodes: list[PlanNode]
    plan_edges: list[PlanEdge]
    evidence: list[Evidence]

    @classmethod
    def from_domain(cls, r: DomainRecord) -> Record:
        return cls(
            memory=Memory.from_domain(r.memory), record_type=r.type, payload=JSON(r.payload),
            kind=r.kind, recorded_at=r.memory.created_at, valid_from=r.valid_from,
            valid_to=r.valid_to,
            revision_status=payloads.RevisionStatus(r.revision_status)
            if r.revision_status else None,
            retracted_at=r.retracted_at,
            tool_calls=[ToolCall(id=c.call_id, tool=c.tool, args=c.args, result=c.result,
                                 at=c.at, depends_on=list(c.depends_on)) for c in r.tool_calls],
            plan_nodes=[PlanNode(id=n.node_id, kind=n.kind, label=n.label, tool=n.tool,
                                 args=n.args) for n in r.plan_nodes],
            plan_edges=[PlanEdge(source=e.source, target=e.target,
                                 kind=payloads.PlanEdgeKind(e.kind)) for e in r.plan_edges],
            evidence=[Evidence(kind=e.kind, ref=e.ref) for e in r.evidence],
        )


@strawberry.type
class RecordWriteResult:
    record: Record
    hints: list[Hint]
    created: bool = strawberry.field(default=True, description=(
        "False when the input's id already held this very record (same type, payload and"
        " content): a retry, answered with the record as it is; nothing was written."))


@strawberry.type
class FactWriteResult:
    fact: Record
    created: bool = strawberry.field(description="False when an identical claim was reinforced.")
    reasserted: bool = strawberry.field(
        default=False,
        description="True when the claim had been invalidated: the fact is a new generation"
        " (its own id) that SUPERSEDES the tombstone, which stays as it was.")
    hints: list[Hint]


@strawberry.type
class FactHit:
    fact: Record
    score: float
    evidence: list[Evidence]

    @classmethod
    def from_domain(cls, h: DomainFactHit) -> FactHit:
        record = Record.from_domain(h.fact)
        return cls(fact=record, score=h.score, evidence=record.evidence)


@strawberry.type
class RevisionResult:
    record: Record = strawberry.field(description="The new (or revised) record.")
    previous: list[Record] = strawberry.field(description="The records it revised, as now.")


@strawberry.type
class InvalidateResult:
    count: int
    ids: list[strawberry.ID]


# ------------------------------------------------------------------ inputs

_RECORD_FIELDS = ("id", "key", "content", "summary", "tags", "metadata", "confidence",
                  "sensitivity", "salience", "source", "source_type", "extraction_method",
                  "provenance", "expires_at", "embedding", "embedding_model", "now",
                  "valid_from", "valid_to", "salience_half_life_days", *_SCOPE_FIELDS)


@planned
@strawberry.input(description="A typed record; `payload` is validated against `type`"
                  " (camelCase keys, see docs/knowledge.md); `content` defaults to a text of it.")
class RecordInput:
    namespace: str
    type: RecordType
    payload: JSON
    id: strawberry.ID | None = strawberry.UNSET
    key: str | None = strawberry.UNSET
    content: str | None = strawberry.UNSET
    summary: str | None = strawberry.UNSET
    tags: list[str] | None = strawberry.UNSET
    metadata: JSON | None = strawberry.UNSET
    scope: Scope | None = strawberry.UNSET
    agent_id: str | None = strawberry.UNSET
    user_id: str | None = strawberry.UNSET
    session_id: str | None = strawberry.UNSET
    task_id: str | None = strawberry.UNSET
    confidence: float | None = strawberry.UNSET
    sensitivity: Sensitivity | None = strawberry.UNSET
    salience: float | None = strawberry.UNSET
    source: str | None = strawberry.UNSET
    source_type: str | None = strawberry.UNSET
    extraction_method: str | None = strawberry.UNSET
    provenance: JSON | None = strawberry.UNSET
    valid_from: datetime | None = strawberry.field(default=strawberry.UNSET,
                                                   description="World time: holds from.")
    valid_to: datetime | None = strawberry.field(default=strawberry.UNSET,
                                                 description="World time: holds until.")
    salience_half_life_days: float | None = strawberry.field(
        default=strawberry.UNSET,
        description="How fast salience decays (MEMLATTICE_CONSOLIDATION_SALIENCE_HALF_LIFE_DAYS"
        " when unset).")
    expires_at: datetime | None = strawberry.UNSET
    embedding: Vector | None = strawberry.UNSET
    embedding_model: str | None = strawberry.UNSET
    now: datetime | None = strawberry.UNSET

    def to_domain(self) -> inputs.RecordInput:
        data = {k: v for k, v in _set(self, *_RECORD_FIELDS).items() if v is not None}
        return model.validated(inputs.RecordInput, namespace=self.namespace, type=self.type,
                               payload=self.payload, **data)


@planned
@strawberry.input
class EvidenceInput:
    kind: str
    ref: str


_FACT_FIELDS = ("tags", "metadata", "confidence", "sensitivity", "salience", "source",
                "source_type", "provenance", "embedding", "embedding_model", "now",
                "valid_until", *_SCOPE_FIELDS)


@planned
@strawberry.input(description="storeFact: the same (namespace, kind, claim) is one fact.")
class FactInput:
    namespace: str
    kind: str
    claim: str
    confidence: float | None = strawberry.UNSET
    evidence: list[EvidenceInput] | None = strawberry.UNSET
    provenance: JSON | None = strawberry.UNSET
    valid_until: datetime | None = strawberry.UNSET
    tags: list[str] | None = strawberry.UNSET
    metadata: JSON | None = strawberry.UNSET
    scope: Scope | None = strawberry.UNSET
    agent_id: str | None = strawberry.UNSET
    user_id: str | None = strawberry.UNSET
    session_id: str | None = strawberry.UNSET
    task_id: str | None = strawberry.UNSET
    sensitivity: Sensitivity | None = strawberry.UNSET
    salience: float | None = strawberry.UNSET
    source: str | None = strawberry.UNSET
    source_type: str | None = strawberry.UNSET
    embedding: Vector | None = strawberry.UNSET
    embedding_model: str | None = strawberry.UNSET
    now: datetime | None = strawberry.UNSET

    def to_domain(self) -> inputs.FactInput:
        data: dict[str, Any] = {
            k: v for k, v in _set(self, *_FACT_FIELDS).items() if v is not None}
        if self.evidence:
            data["evidence"] = [{"kind": e.kind, "ref": e.ref} for e in self.evidence]
        return model.validated(inputs.FactInput, namespace=self.namespace, kind=self.kind,
                               claim=self.claim, **data)


@planned
@strawberry.input(description="A conjunction: facts matching every given field.")
class InvalidateFactsInput:
    id: strawberry.ID | None = None
    key: str | None = None
    kind: str | None = None
    claim: str | None = strawberry.field(default=None, description="Exact, normalised claim.")
    query: str | None = strawberry.field(default=None, description="Every word must match.")
    tag: str | None = None
    evidence_ref: str | None = None


@strawberry.type(description="One extractive bullet and the memory it was taken from.")
class SummaryBullet:
    text: str
    memory_id: strawberry.ID


@strawberry.type(description="A bounded extractive bullet list plus the memories it used.")
class Summary:
    bullets: list[SummaryBullet]
    text: str = strawberry.field(description="The bullets as Markdown, one per line.")
    memories: list[Memory]


@planned
@strawberry.input(description="Which memories a summary draws on.")
class SummaryWindowInput:
    limit: int = strawberry.field(default=10, description="At most this many bullets (1-50).")
    query: str | None = strawberry.field(default=None,
                                         description="Most relevant first; else newest first.")
    tags: list[str] | None = strawberry.field(default=None, description="Every one must match.")


@strawberry.type(description="The record ids one consolidation created or reinforced, by type.")
class DerivedIds:
    semantic: list[strawberry.ID]
    competence: list[strawberry.ID]
    plan_graph: list[strawberry.ID]

    @classmethod
    def from_domain(cls, ids: dict[str, list[str]]) -> DerivedIds:
        def pick(key: str) -> list[strawberry.ID]:
            return [strawberry.ID(i) for i in ids.get(key, [])]

        return cls(semantic=pick("semantic"), competence=pick("competence"),
                   plan_graph=pick("plan_graph"))


@strawberry.type(description="What one consolidation of a namespace did; a second run at"
                 " the same time reports nothing.")
class ConsolidationReport:
    namespace: str
    created: DerivedIds
    reinforced: DerivedIds
    decayed: int = strawberry.field(description="Records whose salience decayed.")
    pruned: list[strawberry.ID] = strawberry.field(description="Episodes tombstoned by policy.")
    changed: bool
