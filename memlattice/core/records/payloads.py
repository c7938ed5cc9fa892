"""Payload models of the five record types, validated on every write.

A record is a Memory with one extra label and a payload. The payloads are
Pydantic models so that an invalid one fails with `VALIDATION` and the field
path (`payload.toolGraph.1.dependsOn`); graph-shaped parts (tool graphs, plan
graphs) are checked for dangling references and cycles here, before they are
stored as nodes and relationships.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

import pydantic
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    computed_field,
    field_validator,
    model_validator,
)

from memlattice.core.errors import ValidationError
from memlattice.core.field_rules import as_utc, camel, json_size_ok
from memlattice.core.names import check_name, check_visible

_Text = Field(min_length=1, max_length=4_000)
# Free text of a payload must show something (memlattice.core.names.blank); names follow the
# name rule. Blank subjects or steps would become blank facts at consolidation.
_Visible = AfterValidator(check_visible)
_Named = AfterValidator(check_name)
# Ids of payload nodes (tool calls, plan nodes, threads) are names (memlattice.core.names).
_IdName = Annotated[str, Field(min_length=1, max_length=128), AfterValidator(check_name)]


class RecordType(StrEnum):
    """Record types; each is also the node label in LABELS."""

    EPISODIC = "episodic"
    WORKING = "working"
    SEMANTIC = "semantic"
    COMPETENCE = "competence"
    PLAN_GRAPH = "plan_graph"


# `memoryType` values that only writeRecord and storeFact may give a memory: those
# validate the payload and write the label and subgraph that go with the type, so the
# plain memory mutations refuse them (see memlattice.services.memories.refuse_typed).
TYPED_MEMORY_TYPES = frozenset({*(t.value for t in RecordType), "fact"})


def reserved_type_message(memory_type: str) -> str:
    """What a person reads at once: which mutation writes this type, with an example."""
    if memory_type == "fact":
        return ('memoryType "fact" is reserved: write facts with storeFact, e.g. mutation {'
                ' storeFact(input: {namespace: "demo", kind: "preference", claim: "Alice'
                ' prefers tea"}) { created fact { memory { id } } } } (writeMemory also'
                ' accepts one memoryType "fact" memory at a time and stores it that way)')
    return (f'memoryType "{memory_type}" is reserved for typed records: write it with'
            f' writeRecord, e.g. mutation {{ writeRecord(input: {{namespace: "demo", type:'
            f' {memory_type.upper()}, payload: {{...}}}}) {{ record {{ memory {{ id }} }} }} }}'
            ' (the payload is validated per type, see docs/knowledge.md)')

# The only labels Cypher ever sees for records (an allow-list, like EdgeType).
LABELS: dict[RecordType, str] = {
    RecordType.EPISODIC: "Episodic",
    RecordType.WORKING: "Working",
    RecordType.SEMANTIC: "Semantic",
    RecordType.COMPETENCE: "Competence",
    RecordType.PLAN_GRAPH: "PlanGraph",
}


class _Payload(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True,
                              alias_generator=lambda n: n.split("_")[0] + "".join(
                                  p.title() for p in n.split("_")[1:]))


def _json(value: Any) -> Any:
    return json_size_ok(value, "value", limit=200_000)


class EvidenceRef(_Payload):
    """What a claim rests on: `{kind: "file", ref: "README.md:1-3"}`."""

    kind: Annotated[str, Field(min_length=1, max_length=64), AfterValidator(check_name)]
    ref: Annotated[str, Field(min_length=1, max_length=1_024), AfterValidator(check_name)]


# ------------------------------------------------------------------ episodic


class Outcome(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"
    PARTIAL = "partial"


class TimelineEvent(_Payload):
    time: datetime
    kind: Annotated[str, _Named] = Field(min_length=1, max_length=64)
    ref: str | None = Field(default=None, max_length=1_024)
    summary: Annotated[str, _Visible] = _Text

    _t = field_validator("time")(classmethod(lambda cls, v: as_utc(v)))


class ToolCallSpec(_Payload):
    """One node of an episode's tool graph."""

    id: _IdName
    tool: Annotated[str, _Named] = Field(min_length=1, max_length=256)
    args: dict[str, Any] = Field(default_factory=dict)
    result: str | None = Field(default=None, max_length=20_000)
    time: datetime | None = None
    depends_on: tuple[str, ...] = ()

    _t = field_validator("time")(classmethod(lambda cls, v: as_utc(v)))
    _a = field_validator("args")(classmethod(lambda cls, v: _json(v)))


class Observation(_Payload):
    """A subject-predicate-object an episode observed; consolidation makes it a fact."""

    subject: Annotated[str, _Visible] = Field(min_length=1, max_length=512)
    predicate: Annotated[str, _Visible] = Field(min_length=1, max_length=256)
    object: Annotated[str, _Visible] = Field(min_length=1, max_length=2_000)
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)


class EpisodicPayload(_Payload):
    timeline: tuple[TimelineEvent, ...] = ()
    tool_graph: tuple[ToolCallSpec, ...] = Field(default=(), max_length=500)
    environment: dict[str, Any] = Field(default_factory=dict)
    outcome: Outcome
    artifacts: tuple[EvidenceRef, ...] = ()
    observations: tuple[Observation, ...] = ()

    _e = field_validator("environment")(classmethod(lambda cls, v: _json(v)))

    @model_validator(mode="after")
    def _tool_graph_is_a_dag(self) -> EpisodicPayload:
        check_dag([(c.id, c.depends_on) for c in self.tool_graph], "toolGraph")
        return self


def check_dag(nodes: list[tuple[str, tuple[str, ...]]], what: str) -> None:
    """Unique ids, no dangling references, no cycles (Kahn's algorithm)."""
    ids = [n for n, _ in nodes]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{what} repeats a node id")
    known = set(ids)
    for node, deps in nodes:
        missing = [d for d in deps if d not in known]
        if missing:
            raise ValueError(f"{what} node {node!r} depends on unknown {missing[0]!r}")
    indegree = {n: len(set(deps)) for n, deps in nodes}
    dependants: dict[str, list[str]] = {n: [] for n in ids}
    for node, deps in nodes:
        for d in set(deps):
            dependants[d].append(node)
    ready = [n for n, k in indegree.items() if k == 0]
    seen = 0
    while ready:
        n = ready.pop()
        seen += 1
        for m in dependants[n]:
            indegree[m] -= 1
            if indegree[m] == 0:
                ready.append(m)
    if seen != len(ids):
        raise ValueError(f"{what} has a cycle")


# ------------------------------------------------------------------ working


class WorkState(StrEnum):
    PLANNING = "planning"
    EXECUTING = "executing"
    BLOCKED = "blocked"
    WAITING = "waiting"
    DONE = "done"


class WorkingPayload(_Payload):
    thread_id: _IdName
    state: WorkState
    constraints: tuple[str, ...] = ()
    next_actions: tuple[str, ...] = ()
    open_questions: tuple[str, ...] = ()
    context_summary: str | None = Field(default=None, max_length=20_000)


# ------------------------------------------------------------------ semantic


class ValidityKind(StrEnum):
    GLOBAL = "global"
    CONDITIONAL = "conditional"
    TIMEBOXED = "timeboxed"


class RevisionStatus(StrEnum):
    ACTIVE = "active"
    CONTESTED = "contested"
    RETRACTED = "retracted"


class Validity(_Payload):
    kind: ValidityKind = ValidityKind.GLOBAL
    conditions: tuple[str, ...] = ()
    start: datetime | None = None
    end: datetime | None = None

    _t = field_validator("start", "end")(classmethod(lambda cls, v: as_utc(v)))

    @model_validator(mode="after")
    def _consistent(self) -> Validity:
        if self.kind is ValidityKind.CONDITIONAL and not self.conditions:
            raise ValueError("conditional validity needs at least one condition")
        if self.kind is ValidityKind.TIMEBOXED and self.start is None and self.end is None:
            raise ValueError("timeboxed validity needs start or end")
        if self.kind is not ValidityKind.TIMEBOXED and (self.start or self.end):
            raise ValueError("start and end belong to timeboxed validity")
        if self.start and self.end and self.end <= self.start:
            raise ValueError("end must be after start")
        return self


class SemanticPayload(_Payload):
    subject: Annotated[str, _Visible] = Field(min_length=1, max_length=512)
    predicate: Annotated[str, _Visible] = Field(min_length=1, max_length=256)
    object: Annotated[str, _Visible] = Field(min_length=1, max_length=2_000)
    validity: Validity = Field(default_factory=Validity)
    evidence: tuple[EvidenceRef, ...] = Field(default=(), max_length=100)


# ------------------------------------------------------------------ competence


class RecipeStep(_Payload):
    step: Annotated[str, _Visible] = _Text
    tool: str | None = Field(default=None, max_length=256)
    args_schema: dict[str, Any] | None = None
    validation: str | None = Field(default=None, max_length=4_000)


class CompetencePayload(_Payload):
    skill: Annotated[str, _Visible] = Field(min_length=1, max_length=256)
    triggers: tuple[str, ...] = ()
    steps: tuple[RecipeStep, ...] = Field(default=(), max_length=200)
    required_tools: tuple[str, ...] = ()
    failure_modes: tuple[str, ...] = ()
    fallbacks: tuple[str, ...] = ()
    success_count: int = Field(default=0, ge=0)
    failure_count: int = Field(default=0, ge=0)
    avg_latency_ms: float | None = Field(default=None, ge=0)
    last_used: datetime | None = None

    _t = field_validator("last_used")(classmethod(lambda cls, v: as_utc(v)))

    @model_validator(mode="before")
    @classmethod
    def _derived_fields_are_not_input(cls, data: Any) -> Any:
        """A payload read back (with `successRate`) can be written again unchanged."""
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in ("successRate", "success_rate")}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def success_rate(self) -> float | None:
        """Successes over all recorded outcomes; None before the first one."""
        total = self.success_count + self.failure_count
        return self.success_count / total if total else None


# ------------------------------------------------------------------ plan graph


class PlanEdgeKind(StrEnum):
    DATA = "data"
    CONTROL = "control"


class PlanNodeSpec(_Payload):
    id: _IdName
    kind: Annotated[str, _Named] = Field(default="step", min_length=1, max_length=64)
    label: str | None = Field(default=None, max_length=1_024)
    tool: str | None = Field(default=None, max_length=256)
    args: dict[str, Any] = Field(default_factory=dict)

    _a = field_validator("args")(classmethod(lambda cls, v: _json(v)))


class PlanEdgeSpec(_Payload):
    source: _IdName
    target: _IdName
    kind: PlanEdgeKind = PlanEdgeKind.CONTROL


class PlanGraphPayload(_Payload):
    plan_id: _IdName
    version: int = Field(default=1, ge=1)
    intent: Annotated[str, _Visible] = _Text
    constraints: tuple[str, ...] = ()
    input_schema: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    nodes: tuple[PlanNodeSpec, ...] = Field(min_length=1, max_length=500)
    edges: tuple[PlanEdgeSpec, ...] = Field(default=(), max_length=2_000)
    metrics: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _edges_join_nodes(self) -> PlanGraphPayload:
        ids = [n.id for n in self.nodes]
        if len(set(ids)) != len(ids):
            raise ValueError("nodes repeat an id")
        for i, edge in enumerate(self.edges):
            for end in (edge.source, edge.target):
                if end not in ids:
                    raise ValueError(f"edges.{i} names unknown node {end!r}")
        return self


Payload = (EpisodicPayload | WorkingPayload | SemanticPayload | CompetencePayload
           | PlanGraphPayload)

MODELS: dict[RecordType, type[_Payload]] = {
    RecordType.EPISODIC: EpisodicPayload,
    RecordType.WORKING: WorkingPayload,
    RecordType.SEMANTIC: SemanticPayload,
    RecordType.COMPETENCE: CompetencePayload,
    RecordType.PLAN_GRAPH: PlanGraphPayload,
}


def parse_payload(type: RecordType, data: Any) -> Payload:
    """Validate a caller's payload (camelCase keys) or raise VALIDATION naming the paths."""
    if not isinstance(data, dict):
        raise ValidationError(f"payload of a {type.value} record must be an object",
                              fields=["payload"])
    try:
        payload: Payload = MODELS[type].model_validate(data)  # type: ignore[assignment]
    except pydantic.ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            where = ".".join(["payload", *(camel(str(p)) for p in error["loc"])])
            problems.append((where, error["msg"].removeprefix("Value error, ")))
        raise ValidationError(
            f"invalid {type.value} payload: " + "; ".join(f"{w}: {m}" for w, m in problems),
            fields=[w for w, _ in problems],
        ) from None
    return payload


def dump_payload(payload: Payload) -> dict[str, Any]:
    """The payload as the API spells it (camelCase), JSON-ready."""
    return payload.model_dump(mode="json", by_alias=True)


Kind = Literal["episodic", "working", "semantic", "competence", "plan_graph"]
