"""GraphQL types and inputs of typed records, facts, revisions and summaries."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.scalars import JSON

from memlattice.core import model
from memlattice.core.records import inputs, payloads
from memlattice.graph.record_codec import Record as DomainRecord
from memlattice.resolvers import glossary as g
from memlattice.resolvers.glossary import described_enum
from memlattice.resolvers.inputs import _SCOPE_FIELDS, _set
from memlattice.resolvers.planned_inputs import planned
from memlattice.resolvers.scalars import Vector
from memlattice.resolvers.types import Hint, Memory, Scope, Sensitivity
from memlattice.services.knowledge import FactHit as DomainFactHit

# Plain aliases for mypy; strawberry.enum registers each class in place (see types.py).
RecordType = payloads.RecordType
RevisionStatus = payloads.RevisionStatus
PlanEdgeKind = payloads.PlanEdgeKind
described_enum(RecordType, description="The five typed record kinds.", values={
    RecordType.EPISODIC: "What happened in one episode: timeline, tool graph, outcome;"
    " immutable (EPISODIC_IMMUTABLE on any change).",
    RecordType.WORKING: "A thread's working state: constraints, next actions, open questions.",
    RecordType.SEMANTIC: "A subject-predicate-object claim with validity and evidence.",
    RecordType.COMPETENCE: "A skill: triggers, steps, failure modes, success statistics.",
    RecordType.PLAN_GRAPH: "A plan: nodes and DATA/CONTROL edges.",
})
described_enum(RevisionStatus, description="Where a semantic record or fact stands after"
               " revisions.", values={
    RevisionStatus.ACTIVE: "Uncontested.",
    RevisionStatus.CONTESTED: "Another record CONTRADICTS it (contestRecord); still found,"
    " shown as a conflict.",
    RevisionStatus.RETRACTED: "Withdrawn as wrong; kept for audit and time travel.",
})
described_enum(PlanEdgeKind, description="How two plan steps depend on each other.", values={
    PlanEdgeKind.DATA: "The target uses the source's output.",
    PlanEdgeKind.CONTROL: "The target runs after the source.",
})


@strawberry.type(description="One call of an episode's tool graph (a :ToolCall node).")
class ToolCall:
    id: str = strawberry.field(description="The call's id within its episode (`toolGraph[].id`).")
    tool: str = strawberry.field(description="The tool's name.")
    args: JSON = strawberry.field(description="The arguments it was called with (JSON).")
    result: str | None = strawberry.field(
        description="What it returned, as text; null when not recorded.")
    at: datetime | None = strawberry.field(
        description="When it was called; null when not recorded.")
    depends_on: list[str] = strawberry.field(description="Calls whose output this one used.")


@strawberry.type(description="One step of a plan graph (a :PlanNode node).")
class PlanNode:
    id: str = strawberry.field(description="The node's id within its plan.")
    kind: str = strawberry.field(description="What kind of step (`step` by default).")
    label: str | None = strawberry.field(description="A human-readable name; null when not given.")
    tool: str | None = strawberry.field(
        description="The tool it calls; null for a step without one.")
    args: JSON = strawberry.field(description="Its arguments (JSON).")


@strawberry.type(description="A DATA or CONTROL relationship between two plan nodes.")
class PlanEdge:
    source: str = strawberry.field(description="The id of the node it starts from.")
    target: str = strawberry.field(description="The id of the node it leads to.")
    kind: PlanEdgeKind = strawberry.field(
        description="DATA (the target uses the source's output) or CONTROL (it runs after it).")


@strawberry.type(description="What a claim rests on; shared :Evidence nodes.")
class Evidence:
    kind: str = strawberry.field(
        description="What kind of evidence (a name such as `file` or `url`).")
    ref: str = strawberry.field(
        description=(
            "Where it is (a path, a URL, a message id); shared by every claim resting on it."))


@strawberry.type(description="A typed record (or fact): a memory with a label and a payload.")
class Record:
    memory: Memory = strawberry.field(
        description="The memory the record is (content, tags, status, version...).")
    record_type: str = strawberry.field(
        description="Its type in lower case: episodic, working, semantic, competence,"
        " plan_graph, or fact.")
    payload: JSON = strawberry.field(
        description=(
            "The type's payload as JSON, camelCase keys (see docs/knowledge.md for each "
            "type's fields)."))
    kind: str | None = strawberry.field(description="A fact's kind.")
    recorded_at: datetime = strawberry.field(description="System time: when it was written.")
    valid_from: datetime | None = strawberry.field(description="World time: holds from.")
    valid_to: datetime | None = strawberry.field(description="World time: holds until.")
    revision_status: RevisionStatus | None = strawberry.field(
        description=(
            "For a semantic record or fact: ACTIVE, CONTESTED or RETRACTED; null for other "
            "types."))
    retracted_at: datetime | None = strawberry.field(
        description="When it was retracted; null when it was not.")
    tool_calls: list[ToolCall] = strawberry.field(
        description="An episode's tool graph; empty for other types.")
    plan_nodes: list[PlanNode] = strawberry.field(
        description="A plan graph's steps; empty for other types.")
    plan_edges: list[PlanEdge] = strawberry.field(
        description="A plan graph's DATA and CONTROL edges; empty for other types.")
    evidence: list[Evidence] = strawberry.field(
        description="What its claim rests on (semantic records and facts).")

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


@strawberry.type(description="What writeRecord stored, with its contradiction hints.")
class RecordWriteResult:
    record: Record = strawberry.field(description="The record written.")
    hints: list[Hint] = strawberry.field(
        description=(
            "For a semantic record: active records it may CONTRADICT or SUPPORT, found on "
            "write; linked as candidate relationships."))
    created: bool = strawberry.field(default=True, description=(
        "False when the input's id already held this very record (same type, payload and"
        " content): a retry, answered with the record as it is; nothing was written."))


@strawberry.type(description="What storeFact did: a new fact, or an identical claim reinforced.")
class FactWriteResult:
    fact: Record = strawberry.field(description="The fact as stored (or as reinforced).")
    created: bool = strawberry.field(description="False when an identical claim was reinforced.")
    reasserted: bool = strawberry.field(
        default=False,
        description="True when the claim had been invalidated: the fact is a new generation"
        " (its own id) that SUPERSEDES the tombstone, which stays as it was.")
    hints: list[Hint] = strawberry.field(
        description="Active facts and records it may CONTRADICT or SUPPORT, found on write.")


@strawberry.type(description="A fact recallFacts found, with its score and evidence.")
class FactHit:
    fact: Record = strawberry.field(description="The fact.")
    score: float = strawberry.field(
        description="How well it matches: the search score with `query`, else its confidence.")
    evidence: list[Evidence] = strawberry.field(
        description="What it rests on (the same as fact.evidence).")

    @classmethod
    def from_domain(cls, h: DomainFactHit) -> FactHit:
        record = Record.from_domain(h.fact)
        return cls(fact=record, score=h.score, evidence=record.evidence)


@strawberry.type(description="What a revision (supersede, fork, contest, retract, merge) did.")
class RevisionResult:
    record: Record = strawberry.field(description="The new (or revised) record.")
    previous: list[Record] = strawberry.field(description="The records it revised, as now.")


@strawberry.type(description="What invalidateFacts retracted.")
class InvalidateResult:
    count: int = strawberry.field(description="How many facts became RETRACTED.")
    ids: list[strawberry.ID] = strawberry.field(description="Their ids.")


# ------------------------------------------------------------------ inputs

_RECORD_FIELDS = ("id", "key", "content", "summary", "tags", "metadata", "confidence",
                  "sensitivity", "salience", "source", "source_type", "extraction_method",
                  "provenance", "expires_at", "embedding", "embedding_model", "now",
                  "valid_from", "valid_to", "salience_half_life_days", *_SCOPE_FIELDS)


@planned
@strawberry.input(description="A typed record; `payload` is validated against `type`"
                  " (camelCase keys, see docs/knowledge.md); `content` defaults to a text of it.")
class RecordInput:
    namespace: str = strawberry.field(description=g.NAMESPACE)
    type: RecordType = strawberry.field(description="The record type; `payload` must fit it.")
    payload: JSON = strawberry.field(
        description=(
            "The type's fields as a JSON object with camelCase keys (see docs/knowledge.md); "
            "anything else is VALIDATION."))
    id: strawberry.ID | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "An id of the caller's choosing (1-128 characters); omitted: the server makes "
            "one."))
    key: str | None = strawberry.field(default=strawberry.UNSET, description=g.KEY)
    content: str | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "The text search matches and embeds (up to 100,000 characters); omitted: a text "
            "made from the payload."))
    summary: str | None = strawberry.field(default=strawberry.UNSET, description=g.SUMMARY)
    tags: list[str] | None = strawberry.field(default=strawberry.UNSET, description=g.TAGS)
    metadata: JSON | None = strawberry.field(default=strawberry.UNSET, description=g.METADATA)
    scope: Scope | None = strawberry.field(default=strawberry.UNSET, description=g.SCOPE)
    agent_id: str | None = strawberry.field(default=strawberry.UNSET, description=g.AGENT_ID)
    user_id: str | None = strawberry.field(default=strawberry.UNSET, description=g.USER_ID)
    session_id: str | None = strawberry.field(default=strawberry.UNSET, description=g.SESSION_ID)
    task_id: str | None = strawberry.field(default=strawberry.UNSET, description=g.TASK_ID)
    confidence: float | None = strawberry.field(default=strawberry.UNSET, description=g.CONFIDENCE)
    sensitivity: Sensitivity | None = strawberry.field(
        default=strawberry.UNSET, description=g.SENSITIVITY)
    salience: float | None = strawberry.field(default=strawberry.UNSET, description=g.SALIENCE)
    source: str | None = strawberry.field(default=strawberry.UNSET, description=g.SOURCE)
    source_type: str | None = strawberry.field(default=strawberry.UNSET, description=g.SOURCE_TYPE)
    extraction_method: str | None = strawberry.field(
        default=strawberry.UNSET, description=g.EXTRACTION_METHOD)
    provenance: JSON | None = strawberry.field(default=strawberry.UNSET, description=g.PROVENANCE)
    valid_from: datetime | None = strawberry.field(default=strawberry.UNSET,
                                                   description="World time: holds from.")
    valid_to: datetime | None = strawberry.field(default=strawberry.UNSET,
                                                 description="World time: holds until.")
    salience_half_life_days: float | None = strawberry.field(
        default=strawberry.UNSET,
        description="How fast salience decays (MEMLATTICE_CONSOLIDATION_SALIENCE_HALF_LIFE_DAYS"
        " when unset).")
    expires_at: datetime | None = strawberry.field(
        default=strawberry.UNSET, description=g.EXPIRES_AT)
    embedding: Vector | None = strawberry.field(default=strawberry.UNSET, description=g.EMBEDDING)
    embedding_model: str | None = strawberry.field(
        default=strawberry.UNSET, description=g.EMBEDDING_MODEL)
    now: datetime | None = strawberry.field(default=strawberry.UNSET, description=g.NOW)

    def to_domain(self) -> inputs.RecordInput:
        data = {k: v for k, v in _set(self, *_RECORD_FIELDS).items() if v is not None}
        return model.validated(inputs.RecordInput, namespace=self.namespace, type=self.type,
                               payload=self.payload, **data)


@planned
@strawberry.input(description="One thing a fact rests on.")
class EvidenceInput:
    kind: str = strawberry.field(
        description="What kind of evidence (a lower-case name such as `file` or `url`).")
    ref: str = strawberry.field(
        description=(
            "Where it is (a path, a URL, a message id); facts with the same ref share one "
            "Evidence node."))


_FACT_FIELDS = ("tags", "metadata", "confidence", "sensitivity", "salience", "source",
                "source_type", "provenance", "embedding", "embedding_model", "now",
                "valid_until", *_SCOPE_FIELDS)


@planned
@strawberry.input(description="storeFact: the same (namespace, kind, claim) is one fact.")
class FactInput:
    namespace: str = strawberry.field(description=g.NAMESPACE)
    kind: str = strawberry.field(
        description=(
            "What kind of fact: a lower-case name (`[a-z][a-z0-9_.:-]`, up to 64), e.g. "
            "`preference`."))
    claim: str = strawberry.field(
        description=(
            "The claim in words (1-10,000 characters); the same claim, normalised (case, "
            "spacing, final period), is the same fact."))
    confidence: float | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "How sure, in [0, 1]; reinforcing keeps the higher one."))
    evidence: list[EvidenceInput] | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "What the claim rests on (added to the fact's evidence when it is reinforced)."))
    provenance: JSON | None = strawberry.field(default=strawberry.UNSET, description=g.PROVENANCE)
    valid_until: datetime | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "After this instant the fact has expired and is never returned; renewed on "
            "reinforcement."))
    tags: list[str] | None = strawberry.field(default=strawberry.UNSET, description=g.TAGS)
    metadata: JSON | None = strawberry.field(default=strawberry.UNSET, description=g.METADATA)
    scope: Scope | None = strawberry.field(default=strawberry.UNSET, description=g.SCOPE)
    agent_id: str | None = strawberry.field(default=strawberry.UNSET, description=g.AGENT_ID)
    user_id: str | None = strawberry.field(default=strawberry.UNSET, description=g.USER_ID)
    session_id: str | None = strawberry.field(default=strawberry.UNSET, description=g.SESSION_ID)
    task_id: str | None = strawberry.field(default=strawberry.UNSET, description=g.TASK_ID)
    sensitivity: Sensitivity | None = strawberry.field(
        default=strawberry.UNSET, description=g.SENSITIVITY)
    salience: float | None = strawberry.field(default=strawberry.UNSET, description=g.SALIENCE)
    source: str | None = strawberry.field(default=strawberry.UNSET, description=g.SOURCE)
    source_type: str | None = strawberry.field(default=strawberry.UNSET, description=g.SOURCE_TYPE)
    embedding: Vector | None = strawberry.field(default=strawberry.UNSET, description=g.EMBEDDING)
    embedding_model: str | None = strawberry.field(
        default=strawberry.UNSET, description=g.EMBEDDING_MODEL)
    now: datetime | None = strawberry.field(default=strawberry.UNSET, description=g.NOW)

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
    id: strawberry.ID | None = strawberry.field(default=None, description="The fact with this id.")
    key: str | None = strawberry.field(default=None, description="Facts with this key.")
    kind: str | None = strawberry.field(default=None, description="Facts of this kind.")
    claim: str | None = strawberry.field(default=None, description="Exact, normalised claim.")
    query: str | None = strawberry.field(default=None, description="Every word must match.")
    tag: str | None = strawberry.field(default=None, description="Facts carrying this tag.")
    evidence_ref: str | None = strawberry.field(
        default=None, description="Facts resting on evidence with this ref.")


@strawberry.type(description="One extractive bullet and the memory it was taken from.")
class SummaryBullet:
    text: str = strawberry.field(
        description="The bullet: the first sentence of the memory's summary or content.")
    memory_id: strawberry.ID = strawberry.field(description="The memory it was taken from.")


@strawberry.type(description="A bounded extractive bullet list plus the memories it used.")
class Summary:
    bullets: list[SummaryBullet] = strawberry.field(
        description="At most `limit` bullets, 4,000 characters in all; near-copies dropped.")
    text: str = strawberry.field(description="The bullets as Markdown, one per line.")
    memories: list[Memory] = strawberry.field(
        description="The memories the bullets came from, in bullet order.")


@planned
@strawberry.input(description="Which memories a summary draws on.")
class SummaryWindowInput:
    limit: int = strawberry.field(default=10, description="At most this many bullets (1-50).")
    query: str | None = strawberry.field(default=None,
                                         description="Most relevant first; else newest first.")
    tags: list[str] | None = strawberry.field(default=None, description="Every one must match.")


@strawberry.type(description="The record ids one consolidation created or reinforced, by type.")
class DerivedIds:
    semantic: list[strawberry.ID] = strawberry.field(
        description="Semantic records (one per observation of a successful episode).")
    competence: list[strawberry.ID] = strawberry.field(
        description="Competence records (tool patterns seen in 2 or more successful episodes).")
    plan_graph: list[strawberry.ID] = strawberry.field(
        description="Plan graphs (successful tool graphs of more than 3 calls).")

    @classmethod
    def from_domain(cls, ids: dict[str, list[str]]) -> DerivedIds:
        def pick(key: str) -> list[strawberry.ID]:
            return [strawberry.ID(i) for i in ids.get(key, [])]

        return cls(semantic=pick("semantic"), competence=pick("competence"),
                   plan_graph=pick("plan_graph"))


@strawberry.type(description="What one consolidation of a namespace did; a second run at"
                 " the same time reports nothing.")
class ConsolidationReport:
    namespace: str = strawberry.field(description="The namespace consolidated.")
    created: DerivedIds = strawberry.field(description="Records this run created.")
    reinforced: DerivedIds = strawberry.field(
        description="Records this run reinforced (salience +0.1, successCount +1).")
    decayed: int = strawberry.field(description="Records whose salience decayed.")
    pruned: list[strawberry.ID] = strawberry.field(description="Episodes tombstoned by policy.")
    changed: bool = strawberry.field(
        description="Whether the run changed anything; false on a second run with nothing new.")
