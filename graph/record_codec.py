"""How a typed record is laid out in the graph, and read back.

The record's node is its Memory node plus a label from `LABELS` and these
properties: `payloadJson` (the validated payload, lossless), world time
(`validFrom`, `validTo`), `revisionStatus`, `retractedAt`, and a few payload
fields copied out so Cypher can match on them without parsing JSON
(`subjectKey`/`predicateKey`/`objectKey` of semantic records, `threadId`,
`workState`, `outcome`, `skillKey`, `planId`). Graph-shaped payload parts
become nodes: `(:ToolCall)` under `USED_TOOL` joined by `DEPENDS_ON`,
`(:PlanNode)` under `HAS_NODE` joined by `DATA` / `CONTROL`, and shared
`(:Evidence)` nodes under `RESTS_ON`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memlattice.core.records.payloads import (
    CompetencePayload,
    EpisodicPayload,
    EvidenceRef,
    Payload,
    PlanGraphPayload,
    RecordType,
    RevisionStatus,
    SemanticPayload,
    WorkingPayload,
    dump_payload,
)
from memlattice.graph.codec import Memory, canonical_json, memory_from_properties, to_datetime

# Relationship types of the plan graph: the only ones Cypher will see there.
PLAN_EDGE_TYPES = {"data": "DATA", "control": "CONTROL"}


def normalise(text: str) -> str:
    """The comparable form of a subject, predicate, object or claim."""
    return re.sub(r"\s+", " ", text.strip().lower()).rstrip(".")


def evidence_key(namespace: str, ref: EvidenceRef) -> str:
    """Evidence nodes are shared per namespace: one node per (kind, ref)."""
    return f"{namespace}|{ref.kind}|{ref.ref}"


def evidence_rows(namespace: str, refs: tuple[EvidenceRef, ...]) -> list[dict[str, Any]]:
    unique = {evidence_key(namespace, r): r for r in refs}
    return [{"key": k, "kind": r.kind, "ref": r.ref} for k, r in unique.items()]


def payload_json(payload: Payload) -> str:
    """The stored `payloadJson` of a payload: canonical, so equal payloads compare equal."""
    return canonical_json(dump_payload(payload))


def record_properties(
    type: RecordType, payload: Payload, *, valid_from: datetime | None,
    valid_to: datetime | None,
) -> dict[str, Any]:
    """Properties a record adds to its Memory node (None values are not stored)."""
    props: dict[str, Any] = {
        "memoryType": type.value,
        "payloadJson": payload_json(payload),
        "validFrom": valid_from,
        "validTo": valid_to,
    }
    if isinstance(payload, SemanticPayload):
        props.update(
            subject=payload.subject, predicate=payload.predicate, object=payload.object,
            subjectKey=normalise(payload.subject), predicateKey=normalise(payload.predicate),
            objectKey=normalise(payload.object), validity=payload.validity.kind.value,
            revisionStatus=RevisionStatus.ACTIVE.value,
        )
        if payload.validity.start is not None and valid_from is None:
            props["validFrom"] = payload.validity.start
        if payload.validity.end is not None and valid_to is None:
            props["validTo"] = payload.validity.end
    elif isinstance(payload, WorkingPayload):
        props.update(threadId=payload.thread_id, workState=payload.state.value)
    elif isinstance(payload, EpisodicPayload):
        props.update(outcome=payload.outcome.value)
    elif isinstance(payload, CompetencePayload):
        props.update(skill=payload.skill, skillKey=normalise(payload.skill),
                     successCount=payload.success_count, failureCount=payload.failure_count)
    elif isinstance(payload, PlanGraphPayload):
        props.update(planId=payload.plan_id, planVersion=payload.version)
    return {k: v for k, v in props.items() if v is not None}


def subgraph_rows(namespace: str, payload: Payload) -> dict[str, list[dict[str, Any]]]:
    """The nodes and relationships a payload becomes, as UNWIND rows."""
    rows: dict[str, list[dict[str, Any]]] = {
        "toolCalls": [], "toolDeps": [], "planNodes": [], "planEdges": [], "evidence": [],
    }
    if isinstance(payload, EpisodicPayload):
        for call in payload.tool_graph:
            rows["toolCalls"].append({
                "callId": call.id, "tool": call.tool, "argsJson": canonical_json(call.args),
                "result": call.result, "at": call.time,
            })
            rows["toolDeps"] += [{"source": call.id, "target": d}
                                 for d in dict.fromkeys(call.depends_on)]
        rows["evidence"] = evidence_rows(namespace, payload.artifacts)
    elif isinstance(payload, PlanGraphPayload):
        rows["planNodes"] = [
            {"nodeId": n.id, "kind": n.kind, "label": n.label, "tool": n.tool,
             "argsJson": canonical_json(n.args)}
            for n in payload.nodes
        ]
        rows["planEdges"] = [
            {"source": e.source, "target": e.target, "type": PLAN_EDGE_TYPES[e.kind.value]}
            for e in payload.edges
        ]
    elif isinstance(payload, SemanticPayload):
        rows["evidence"] = evidence_rows(namespace, payload.evidence)
    return rows


@dataclass(frozen=True)
class ToolCall:
    call_id: str
    tool: str
    args: Any
    result: str | None
    at: datetime | None
    depends_on: tuple[str, ...]


@dataclass(frozen=True)
class PlanNode:
    node_id: str
    kind: str
    label: str | None
    tool: str | None
    args: Any


@dataclass(frozen=True)
class PlanEdge:
    source: str
    target: str
    kind: str


@dataclass(frozen=True)
class Evidence:
    kind: str
    ref: str


@dataclass(frozen=True)
class Record:
    """A typed record (or fact) as read from the graph."""

    memory: Memory
    type: str
    payload: dict[str, Any]
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    revision_status: str | None = None
    retracted_at: datetime | None = None
    kind: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    plan_nodes: tuple[PlanNode, ...] = ()
    plan_edges: tuple[PlanEdge, ...] = ()
    evidence: tuple[Evidence, ...] = field(default=())


def record_from_record(row: Mapping[str, Any]) -> Record:
    """Read one `{m, calls, nodes, edges, evidence}` row of the record queries."""
    props = row["m"]
    return Record(
        memory=memory_from_properties(props),
        type=props.get("memoryType", "note"),
        payload=json.loads(props["payloadJson"]) if props.get("payloadJson") else {},
        valid_from=to_datetime(props.get("validFrom")),
        valid_to=to_datetime(props.get("validTo")),
        revision_status=props.get("revisionStatus"),
        retracted_at=to_datetime(props.get("retractedAt")),
        kind=props.get("kind"),
        tool_calls=tuple(sorted((
            ToolCall(call_id=c["callId"], tool=c["tool"], args=json.loads(c["argsJson"]),
                     result=c.get("result"), at=to_datetime(c.get("at")),
                     depends_on=tuple(sorted(c.get("dependsOn") or ())))
            for c in row.get("calls") or ()), key=lambda c: c.call_id)),
        plan_nodes=tuple(sorted((
            PlanNode(node_id=n["nodeId"], kind=n["kind"], label=n.get("label"),
                     tool=n.get("tool"), args=json.loads(n["argsJson"]))
            for n in row.get("nodes") or ()), key=lambda n: n.node_id)),
        plan_edges=tuple(sorted((
            PlanEdge(source=e["source"], target=e["target"], kind=e["kind"].lower())
            for e in row.get("edges") or ()), key=lambda e: (e.source, e.target, e.kind))),
        evidence=tuple(sorted(
            (Evidence(kind=e["kind"], ref=e["ref"]) for e in row.get("evidence") or ()),
            key=lambda e: (e.kind, e.ref))),
    )
