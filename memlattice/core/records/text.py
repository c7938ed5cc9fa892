"""A readable text for a payload, used as a record's content when none is given,
so that every record is found by fulltext and vector search."""

from __future__ import annotations

from memlattice.core.records.payloads import (
    CompetencePayload,
    EpisodicPayload,
    Payload,
    PlanGraphPayload,
    SemanticPayload,
    WorkingPayload,
)

MAX_TEXT = 4_000


def describe(payload: Payload) -> str:
    if isinstance(payload, SemanticPayload):
        text = f"{payload.subject} {payload.predicate} {payload.object}"
        if payload.validity.conditions:
            text += " when " + " and ".join(payload.validity.conditions)
    elif isinstance(payload, EpisodicPayload):
        parts = [e.summary for e in payload.timeline]
        tools = [c.tool for c in payload.tool_graph]
        text = f"Episode ({payload.outcome.value})"
        if parts:
            text += ": " + "; ".join(parts)
        if tools:
            text += ". Tools: " + ", ".join(dict.fromkeys(tools))
    elif isinstance(payload, WorkingPayload):
        text = f"Thread {payload.thread_id} is {payload.state.value}"
        if payload.context_summary:
            text += f": {payload.context_summary}"
        if payload.next_actions:
            text += ". Next: " + "; ".join(payload.next_actions)
    elif isinstance(payload, CompetencePayload):
        text = f"Skill {payload.skill}"
        if payload.steps:
            text += ": " + "; ".join(s.step for s in payload.steps)
    else:
        assert isinstance(payload, PlanGraphPayload)
        text = f"Plan {payload.plan_id} v{payload.version}: {payload.intent}"
    return text[:MAX_TEXT]
