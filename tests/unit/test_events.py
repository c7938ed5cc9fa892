"""The event bus: routing, filters, visibility, bounded queues that drop the oldest."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from memlattice.core.model import EdgeType, Scope, Sensitivity, Status
from memlattice.graph.codec import Edge, Memory
from memlattice.services.events import Audience, EventBus, EventFilter, EventKind, MemoryEvent

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def memory(id: str, ns: str = "a", **fields: Any) -> Memory:
    return Memory(id=id, namespace=ns, content=id, status=Status.ACTIVE, version=1,
                  created_at=NOW, updated_at=NOW, **fields)


def written(m: Memory) -> MemoryEvent:
    return MemoryEvent(kind=EventKind.WRITTEN, namespace=m.namespace, memory_ids=(m.id,),
                       actor="t", at=NOW, version=1, memory=m)


def edge(a: Memory, b: Memory, *endpoints: Memory) -> MemoryEvent:
    e = Edge(id=f"{a.id}-{b.id}", type=EdgeType.RELATED, source_id=a.id, target_id=b.id,
             created_at=NOW)
    return MemoryEvent(kind=EventKind.EDGE_ADDED, namespace=a.namespace,
                       memory_ids=(a.id, b.id), actor="t", at=NOW, edge=e, endpoints=endpoints)


def drain(sub: Any) -> list[MemoryEvent]:
    out = []
    while sub.pending:
        out.append(asyncio.run(sub.next()))
    return out


def test_events_go_to_their_namespace_only_in_order_with_sequence_numbers() -> None:
    bus = EventBus()
    mine, theirs = bus.subscribe("a"), bus.subscribe("b")
    bus.publish([written(memory("1")), written(memory("x", "b")), written(memory("2"))])
    got = drain(mine)
    assert [e.memory_ids for e in got] == [("1",), ("2",)]
    assert [e.seq for e in got] == [1, 3] and bus.last_seq == 3
    assert [e.memory_ids for e in drain(theirs)] == [("x",)]


def test_a_full_queue_drops_the_oldest_and_says_how_many() -> None:
    bus = EventBus(capacity=3)
    sub = bus.subscribe("a")
    bus.publish(written(memory(str(i))) for i in range(10))
    assert sub.pending == 3 and sub.dropped == 7
    got = drain(sub)
    assert [e.memory_ids[0] for e in got] == ["7", "8", "9"]
    assert [e.missed for e in got] == [7, 0, 0]
    bus.publish([written(memory("10"))])
    assert drain(sub)[0].missed == 0


def test_publishing_never_waits_for_a_reader() -> None:
    bus = EventBus(capacity=10)
    subs = [bus.subscribe("a") for _ in range(50)]
    bus.publish(written(memory(str(i))) for i in range(10_000))
    assert all(s.pending == 10 for s in subs)


def test_filters_by_kind_tag_type_and_scope_ids() -> None:
    tagged = memory("t", tags=("keep", "x"), memory_type="fact", scope=Scope.USER, user_id="u1")
    plain = memory("p")
    f = EventFilter(kinds=frozenset({EventKind.WRITTEN}), tags_any=frozenset({"keep"}),
                    memory_types=frozenset({"fact"}), user_id="u1")
    assert f.matches(written(tagged))
    assert not f.matches(written(plain))
    assert not f.matches(written(memory("t2", tags=("keep",), memory_type="fact",
                                        scope=Scope.USER, user_id="u2")))
    assert not EventFilter(kinds=frozenset({EventKind.FORGOTTEN})).matches(written(tagged))
    # An edge matches through either endpoint.
    assert EventFilter(tags_any=frozenset({"keep"})).matches(edge(plain, tagged, plain, tagged))
    assert not EventFilter(tags_any=frozenset({"keep"})).matches(edge(plain, plain, plain))


def test_audience_hides_memories_above_clearance_or_scope() -> None:
    low = Audience(clearance=Sensitivity.LOW, scopes=("task", "session", "user"))
    assert low.sees(written(memory("ok", scope=Scope.USER, user_id="u")))
    assert not low.sees(written(memory("secret", sensitivity=Sensitivity.HIGH)))
    assert not low.sees(written(memory("agent", scope=Scope.AGENT, agent_id="a")))
    assert not low.sees(written(memory("namespace-wide")))
    # An edge is as secret as its most secret endpoint, and unknown endpoints hide it.
    ok, secret = memory("ok", scope=Scope.USER, user_id="u"), memory(
        "s", scope=Scope.USER, user_id="u", sensitivity=Sensitivity.HYPER)
    assert low.sees(edge(ok, ok, ok, ok))
    assert not low.sees(edge(ok, secret, ok, secret))
    assert not low.sees(edge(ok, secret, ok))
    assert Audience().sees(edge(ok, secret))


def test_a_subscriber_receives_only_what_it_may_see_and_wants() -> None:
    bus = EventBus()
    sub = bus.subscribe("a", EventFilter(tags_any=frozenset({"keep"})),
                        Audience(clearance=Sensitivity.LOW))
    bus.publish([written(memory("1", tags=("keep",), sensitivity=Sensitivity.HIGH)),
                 written(memory("2", tags=("drop",))),
                 written(memory("3", tags=("keep",)))])
    assert [e.memory_ids[0] for e in drain(sub)] == ["3"]


def test_unsubscribing_stops_delivery_and_forgets_the_namespace() -> None:
    bus = EventBus()
    sub = bus.subscribe("a")
    assert bus.has_subscribers("a")
    bus.unsubscribe(sub)
    assert not bus.has_subscribers("a") and bus.subscriber_count("a") == 0
    bus.publish([written(memory("1"))])
    assert sub.pending == 0


async def test_a_waiting_subscriber_wakes_on_publish() -> None:
    bus = EventBus()
    sub = bus.subscribe("a")
    waiter = asyncio.create_task(sub.next())
    await asyncio.sleep(0)
    assert not waiter.done()
    bus.publish([written(memory("1"))])
    event = await asyncio.wait_for(waiter, 5)
    assert event.memory_ids == ("1",)


async def test_next_within_gives_up_on_time_and_loses_nothing() -> None:
    bus = EventBus()
    sub = bus.subscribe("a")
    assert await sub.next_within(0.01) is None
    assert await sub.next_within(0.0) is None
    bus.publish([written(memory("m1"))])
    assert (await sub.next_within(0.0)).memory_ids == ("m1",)  # type: ignore[union-attr]

    async def later() -> None:
        await asyncio.sleep(0.01)
        bus.publish([written(memory("m2"))])

    task = asyncio.create_task(later())
    got = await sub.next_within(5)
    await task
    assert got is not None and got.memory_ids == ("m2",)
    # Timing out many times over never drops an event published meanwhile.
    for i in range(50):
        assert await sub.next_within(0) is None
        bus.publish([written(memory(f"n{i}"))])
        assert (await sub.next_within(0)).memory_ids == (f"n{i}",)  # type: ignore[union-attr]
    assert sub.pending == 0


def test_a_superseded_event_names_only_the_successors_its_audience_may_see() -> None:
    old = replace(memory("old", sensitivity=Sensitivity.LOW, superseded_by="new"),
                  status=Status.SUPERSEDED)
    secret = memory("new", sensitivity=Sensitivity.HIGH)
    plain = memory("new", sensitivity=Sensitivity.LOW)

    def superseded(successor: Memory | None) -> MemoryEvent:
        return MemoryEvent(kind=EventKind.SUPERSEDED, namespace="a", memory_ids=("old", "new"),
                           actor="t", at=NOW, memory=old,
                           related=(successor,) if successor else ())

    low = Audience(clearance=Sensitivity.LOW)
    for hidden in (superseded(secret), superseded(None)):  # unseen, or no snapshot at hand
        shown = low.redact(hidden)
        assert shown.memory_ids == ("old",)
        assert shown.memory is not None and shown.memory.superseded_by is None
    shown = low.redact(superseded(plain))
    assert shown.memory_ids == ("old", "new") and shown.memory.superseded_by == "new"  # type: ignore[union-attr]
    # An audience that sees everything gets the event untouched.
    assert Audience().redact(superseded(None)) == superseded(None)
    bus = EventBus()
    sub = bus.subscribe("a", audience=low)
    bus.publish([superseded(secret)])
    (delivered,) = drain(sub)
    assert delivered.memory_ids == ("old",) and delivered.memory.superseded_by is None  # type: ignore[union-attr]


def test_audit_details_lose_the_ids_their_reader_may_not_see() -> None:
    from memlattice.graph.codec import redact_ids

    details = {"edge": "e1", "type": "RELATED", "target": "h"}
    assert redact_ids(details, frozenset({"h"})) == {"edge": None, "type": "RELATED",
                                                    "target": None}
    assert redact_ids(details, frozenset()) == details
    assert redact_ids({"pair": ["a", "h"], "reason": "x"}, frozenset({"h"})) == {
        "pair": ["a"], "reason": "x"}
    assert redact_ids({"supersededBy": "h"}, frozenset({"h"})) == {"supersededBy": None}
