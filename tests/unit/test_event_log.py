"""The shared log's pure parts: events as text and back, and a subscription taking
runs read from the log (skipping what it had, counting a pruned gap as missed)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from memlattice.core.model import EdgeType, Scope, Sensitivity, Status
from memlattice.graph.codec import Edge, Memory
from memlattice.services import event_codec
from memlattice.services.events import EventBus, EventKind, MemoryEvent

NOW = datetime(2026, 1, 1, 12, 30, 15, 123456, tzinfo=UTC)


def memory(id: str, **fields: Any) -> Memory:
    fields.setdefault("status", Status.ACTIVE)
    return Memory(id=id, namespace="ns", content=f"content of {id}", version=1,
                  created_at=NOW, updated_at=NOW, **fields)


def written(id: str, seq: int = 0) -> MemoryEvent:
    return MemoryEvent(kind=EventKind.WRITTEN, namespace="ns", memory_ids=(id,), actor="t",
                       at=NOW, version=1, memory=memory(id), seq=seq)


def test_an_event_with_everything_survives_the_round_trip() -> None:
    rich = memory("m1", key="k", value={"a": [1, 2.5, None]}, summary="s", tags=("x", "y"),
                  metadata={"deep": {"n": 1}}, memory_type="fact", salience=0.25,
                  scope=Scope.USER, user_id="u", agent_id="a", confidence=0.5,
                  sensitivity=Sensitivity.HIGH, provenance={"episodes": ["e"]},
                  expires_at=NOW + timedelta(days=1), access_count=3,
                  superseded_by="m2", superseded_at=NOW, forgotten_at=None)
    other = memory("m2", status=Status.SUPERSEDED)
    edge = Edge(id="e1", type=EdgeType.SUPPORTS, source_id="m1", target_id="m2",
                created_at=NOW, metadata={"w": 1})
    event = MemoryEvent(kind=EventKind.EDGE_ADDED, namespace="ns", memory_ids=("m1", "m2"),
                        actor="me", at=NOW, version=None, memory=rich, edge=edge,
                        endpoints=(rich, other), related=(other,), seq=41, missed=2)
    back = event_codec.decode(event_codec.encode(event), 7)
    assert back == replace(event, seq=7, missed=0)
    assert isinstance(back.memory.scope, Scope) and isinstance(back.edge.type, EdgeType)  # type: ignore[union-attr]
    assert back.at.tzinfo is not None


def test_the_payload_carries_neither_sequence_nor_missed() -> None:
    text = event_codec.encode(replace(written("m"), seq=99, missed=5))
    assert '"seq"' not in text and '"missed"' not in text


def drain(sub: Any) -> list[MemoryEvent]:
    out = []
    while sub.pending:
        out.append(asyncio.run(sub.next()))
    return out


def test_a_subscription_takes_only_what_follows_its_cursor_once() -> None:
    sub = EventBus().subscribe("ns")
    sub.cursor = 2
    sub.take([written(str(i), seq=i) for i in range(1, 5)])
    sub.take([written(str(i), seq=i) for i in range(3, 7)])  # a re-read overlaps
    assert [e.seq for e in drain(sub)] == [3, 4, 5, 6]
    assert sub.cursor == 6


def test_a_gap_in_the_log_is_counted_as_missed_on_the_next_event() -> None:
    sub = EventBus().subscribe("ns")
    sub.cursor = 2
    sub.take([written(str(i), seq=i) for i in (6, 7)])  # 3..5 were pruned
    assert [(e.seq, e.missed) for e in drain(sub)] == [(6, 3), (7, 0)]


def test_the_cursor_moves_past_events_the_filter_drops() -> None:
    from memlattice.services.events import EventFilter

    sub = EventBus().subscribe("ns", EventFilter(kinds=frozenset({EventKind.FORGOTTEN})))
    sub.take([written(str(i), seq=i) for i in (1, 2)])
    assert sub.pending == 0 and sub.cursor == 2


def test_a_bus_without_history_says_a_resumed_subscription_missed_events() -> None:
    bus = EventBus()
    bus.publish([written("a"), written("b")])
    fresh = asyncio.run(bus.open("ns"))
    assert (fresh.cursor, fresh.missed) == (2, 0)
    assert asyncio.run(bus.open("ns", after=2)).missed == 0
    assert asyncio.run(bus.open("ns", after=0)).missed == 2
    assert asyncio.run(bus.open("ns", after=9)).missed == 1


def test_an_erased_memory_keeps_what_it_is_matched_by_and_loses_what_it_said() -> None:
    gone = memory("gone", key="k", value={"v": 1}, summary="s", tags=("t",),
                  metadata={"m": 1}, provenance={"p": 1}, source="src", scope=Scope.USER,
                  user_id="u", sensitivity=Sensitivity.HIGH)
    other = memory("other")
    event = MemoryEvent(kind=EventKind.SUPERSEDED, namespace="ns", memory_ids=("gone", "other"),
                        actor="t", at=NOW, memory=gone, related=(other,))
    clean = event_codec.without(event, "gone")
    assert clean.memory is not None and clean.related == (other,)
    assert (clean.memory.content, clean.memory.key, clean.memory.value, clean.memory.summary,
            clean.memory.metadata, clean.memory.provenance, clean.memory.source) == (
        "", None, None, None, {}, None, None)
    assert (clean.memory.tags, clean.memory.scope, clean.memory.user_id,
            clean.memory.sensitivity) == (("t",), Scope.USER, "u", Sensitivity.HIGH)
    assert "content of gone" not in event_codec.encode(clean)


def test_an_unreadable_payload_is_skipped_and_reaches_subscribers_as_missed() -> None:
    from memlattice.services.shared_events import _decoded

    rows = [(1, event_codec.encode(written("a"))), (2, '{"kind": "from the future"}'),
            (3, event_codec.encode(written("c")))]
    events = _decoded("ns", rows)
    assert [e.seq for e in events] == [1, 3]
    sub = EventBus().subscribe("ns")
    sub.take(events)
    assert [(e.memory_ids, e.missed) for e in drain(sub)] == [(("a",), 0), (("c",), 1)]
