"""Typed records and facts as the API returns them (see `_models` for the conventions).

A record is a memory with a typed payload; its tool calls, plan nodes and edges and
evidence are the payload's graph, as the server stores it. A field the call did not
select reads as its default (docs/client.md#what-a-call-costs).
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any

from memlattice_client._models import Hint, Memory, _Result


class RecordType(str, Enum):
    EPISODIC = "EPISODIC"
    WORKING = "WORKING"
    SEMANTIC = "SEMANTIC"
    COMPETENCE = "COMPETENCE"
    PLAN_GRAPH = "PLAN_GRAPH"


class Evidence(_Result):
    kind: str
    ref: str


class ToolCall(_Result):
    id: str
    tool: str
    args: Any = None
    result: str | None = None
    at: datetime | None = None
    depends_on: tuple[str, ...] = ()


class PlanNode(_Result):
    id: str
    kind: str
    label: str | None = None
    tool: str | None = None
    args: Any = None


class PlanEdge(_Result):
    source: str
    target: str
    kind: str


class Record(_Result):
    """A typed record (episodic, working, semantic, competence, plan graph) or a fact."""

    memory: Memory
    record_type: str
    payload: Any
    kind: str | None = None
    recorded_at: datetime
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    revision_status: str | None = None
    retracted_at: datetime | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    plan_nodes: tuple[PlanNode, ...] = ()
    plan_edges: tuple[PlanEdge, ...] = ()
    evidence: tuple[Evidence, ...] = ()


class RecordWriteResult(_Result):
    record: Record
    hints: tuple[Hint, ...] = ()
    # False when the record's id already held this very record: a retry, nothing written.
    created: bool = True


class FactWriteResult(_Result):
    fact: Record
    created: bool
    # True when an invalidated claim came back as a new fact generation.
    reasserted: bool = False
    hints: tuple[Hint, ...] = ()


class FactHit(_Result):
    fact: Record
    score: float
    evidence: tuple[Evidence, ...] = ()


class RevisionResult(_Result):
    record: Record
    previous: tuple[Record, ...] = ()


class InvalidateResult(_Result):
    count: int
    ids: tuple[str, ...] = ()


class DerivedIds(_Result):
    semantic: tuple[str, ...] = ()
    competence: tuple[str, ...] = ()
    plan_graph: tuple[str, ...] = ()


class ConsolidationReport(_Result):
    """What one consolidation run derived, reinforced, decayed and pruned."""

    namespace: str
    created: DerivedIds
    reinforced: DerivedIds
    decayed: int
    pruned: tuple[str, ...] = ()
    changed: bool
