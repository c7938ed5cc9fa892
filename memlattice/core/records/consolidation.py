"""Consolidation rules (pure): from successful episodes to knowledge.

    observation of a successful episode      -> semantic record (one per s/p/o)
    a tool pattern in >= MIN_PATTERN_EPISODES
      successful episodes                    -> competence record (one per pattern)
    a tool graph of > PLAN_MIN_NODES calls   -> plan graph (one per pattern)

Every derived record has a deterministic id (from the namespace and what it
is derived from) and remembers the episodes it rests on (`sourceEpisodes`).
A derived record that exists is reinforced (+REINFORCEMENT salience, one
more success) only by episodes it has not seen; so running consolidation
twice changes nothing the second time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memlattice.core.model import Sensitivity
from memlattice.core.records.payloads import (
    CompetencePayload,
    EpisodicPayload,
    Observation,
    Outcome,
    Payload,
    PlanGraphPayload,
    RecipeStep,
    RecordType,
    SemanticPayload,
    ToolCallSpec,
    dump_payload,
)

MIN_PATTERN_EPISODES = 2
PLAN_MIN_NODES = 4  # "more than 3"
MIN_PATTERN_TOOLS = 2
REINFORCEMENT = 0.1


@dataclass(frozen=True)
class Episode:
    id: str
    payload: EpisodicPayload
    created_at: datetime
    sensitivity: Sensitivity = Sensitivity.LOW


@dataclass(frozen=True)
class Existing:
    """A derived record that is already in the graph."""

    id: str
    source_episodes: frozenset[str]
    payload: dict[str, Any]
    sensitivity: Sensitivity = Sensitivity.LOW
    active: bool = True


@dataclass(frozen=True)
class Derived:
    """A record to create, or to reinforce with `new_episodes`."""

    id: str
    type: RecordType
    payload: Payload
    episodes: tuple[str, ...]
    new_episodes: tuple[str, ...] = ()
    create: bool = True
    confidence: float = 0.8
    # The most sensitive source: knowledge is never less secret than what it came from.
    sensitivity: Sensitivity = Sensitivity.LOW


@dataclass
class Plan:
    actions: list[Derived] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for a in self.actions:
            key = f"{a.type.value}_{'created' if a.create else 'reinforced'}"
            out[key] = out.get(key, 0) + 1
        return out


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")


def tool_sequence(calls: Sequence[ToolCallSpec]) -> tuple[str, ...]:
    """The tools in a canonical topological order (ties broken by tool name, then id)."""
    deps = {c.id: set(c.depends_on) for c in calls}
    by_id = {c.id: c for c in calls}
    done: set[str] = set()
    order: list[str] = []
    while len(order) < len(calls):
        ready = sorted((by_id[i].tool, i) for i in deps if i not in done and deps[i] <= done)
        tool, i = ready[0]
        done.add(i)
        order.append(tool)
    return tuple(order)


def pattern_of(episode: Episode) -> tuple[str, ...] | None:
    sequence = tool_sequence(episode.payload.tool_graph)
    return sequence if len(sequence) >= MIN_PATTERN_TOOLS else None


def semantic_id(namespace: str, o: Observation) -> str:
    return "sem-" + _digest(namespace, _norm(o.subject), _norm(o.predicate), _norm(o.object))


def competence_id(namespace: str, pattern: tuple[str, ...]) -> str:
    return "skill-" + _digest(namespace, *pattern)


def plan_id(namespace: str, pattern: tuple[str, ...]) -> str:
    return "plan-" + _digest(namespace, "plan", *pattern)


def _competence(pattern: tuple[str, ...], episodes: list[Episode]) -> CompetencePayload:
    last = max(e.created_at for e in episodes)
    return CompetencePayload(
        skill=" -> ".join(pattern), triggers=tuple(sorted({
            ev.kind for e in episodes for ev in e.payload.timeline})),
        steps=tuple(RecipeStep(step=f"run {tool}", tool=tool) for tool in pattern),
        required_tools=tuple(sorted(set(pattern))), success_count=len(episodes),
        last_used=last,
    )


def _plan(pattern: tuple[str, ...], episode: Episode, pid: str) -> PlanGraphPayload:
    calls = episode.payload.tool_graph
    return PlanGraphPayload.model_validate({
        "planId": pid, "version": 1,
        "intent": f"repeat the successful tool graph {' -> '.join(pattern)}",
        "nodes": [{"id": c.id, "tool": c.tool, "args": c.args} for c in calls],
        "edges": [{"source": d, "target": c.id, "kind": "data"}
                  for c in calls for d in dict.fromkeys(c.depends_on)],
        "metrics": {"episodes": 1},
    })


def plan(namespace: str, episodes: Iterable[Episode],
         existing: Mapping[str, Existing]) -> Plan:
    """What consolidation should create or reinforce, given the graph's current state."""
    successes = sorted((e for e in episodes if e.payload.outcome is Outcome.SUCCESS),
                       key=lambda e: (e.created_at, e.id))
    result = Plan()
    secrecy = {e.id: e.sensitivity for e in successes}
    facts: dict[str, tuple[Observation, list[str]]] = {}
    patterns: dict[tuple[str, ...], list[Episode]] = {}
    for episode in successes:
        for o in episode.payload.observations:
            facts.setdefault(semantic_id(namespace, o), (o, []))[1].append(episode.id)
        pattern = pattern_of(episode)
        if pattern is not None:
            patterns.setdefault(pattern, []).append(episode)
    for id, (o, sources) in sorted(facts.items()):
        payload = SemanticPayload(subject=o.subject, predicate=o.predicate, object=o.object)
        result.actions += _create_or_reinforce(id, RecordType.SEMANTIC, payload, sources,
                                               existing, secrecy, confidence=o.confidence)
    for pattern, group in sorted(patterns.items()):
        sources = [e.id for e in group]
        if len(group) >= MIN_PATTERN_EPISODES:
            cid = competence_id(namespace, pattern)
            result.actions += _create_or_reinforce(cid, RecordType.COMPETENCE,
                                                   _competence(pattern, group), sources,
                                                   existing, secrecy)
        big = [e for e in group if len(e.payload.tool_graph) >= PLAN_MIN_NODES]
        if big:
            pid = plan_id(namespace, pattern)
            result.actions += _create_or_reinforce(pid, RecordType.PLAN_GRAPH,
                                                   _plan(pattern, big[0], pid),
                                                   [e.id for e in big], existing, secrecy)
    return result


def _create_or_reinforce(id: str, type: RecordType, payload: Payload, sources: list[str],
                         existing: Mapping[str, Existing], secrecy: Mapping[str, Sensitivity],
                         confidence: float = 0.8) -> list[Derived]:
    known = existing.get(id)
    if known is None:
        level = max((secrecy[s] for s in sources), default=Sensitivity.LOW)
        return [Derived(id, type, payload, tuple(sources), tuple(sources), True, confidence,
                        level)]
    if not known.active:
        return []  # retracted or forgotten by someone: consolidation does not bring it back
    new = tuple(s for s in sources if s not in known.source_episodes)
    if not new:
        return []
    level = max([known.sensitivity, *(secrecy[s] for s in new)])
    return [Derived(id, type, reinforced_payload(type, known.payload, len(new)),
                    tuple(sorted(known.source_episodes | set(new))), new, False, confidence,
                    level)]


def reinforced_payload(type: RecordType, payload: Mapping[str, Any], new: int) -> Payload:
    """An existing payload after `new` more supporting episodes."""
    from memlattice.core.records.payloads import MODELS

    data = dict(payload)
    if type is RecordType.COMPETENCE:
        data["successCount"] = int(data.get("successCount", 0)) + new
    elif type is RecordType.PLAN_GRAPH:
        metrics = dict(data.get("metrics") or {})
        metrics["episodes"] = int(metrics.get("episodes", 0)) + new
        data["metrics"] = metrics
    parsed: Payload = MODELS[type].model_validate(data)  # type: ignore[assignment]
    return parsed


def decay_factor(elapsed_days: int, half_life_days: float) -> float:
    """Salience decays in whole days, so two runs on one day decay once."""
    return float(0.5 ** (elapsed_days / half_life_days))  # float ** float is typed Any


__all__ = ["Derived", "Episode", "Existing", "Plan", "decay_factor", "dump_payload", "plan"]
