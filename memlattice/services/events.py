"""Live change events: an in-process bus from committed writes to subscribers.

Writers publish *after* their transaction has committed (see
`memlattice.services.change_events`), so a subscriber never hears of rolled-back work.
Publishing never waits: each subscriber owns a bounded queue, and when a
subscriber falls behind its **oldest** undelivered events are dropped; the
next event it does receive carries `missed`, the number dropped since its
previous delivery, so a client knows to re-read instead of trusting its view.
A slow subscriber therefore never slows a writer and never holds more than
`capacity` events.

Events are routed by namespace and matched against each subscription's
filter and visibility (`Audience`: clearance and scope levels) at publish
time, so a queue only ever holds what its subscriber may see.

This bus lives in one process; `memlattice.services.shared_events` puts the
shared log in Neo4j behind the same `publish` and `open`, for several
processes and for subscriptions that resume from a cursor.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum

from memlattice.core.model import NAMESPACE_SCOPE_KEY, Sensitivity
from memlattice.graph.codec import Edge, Memory

DEFAULT_CAPACITY = 1_000


class EventKind(StrEnum):
    # Sent once, first, when the subscription is registered: from then on no
    # change is missed, so a client loads its initial state after this one.
    SUBSCRIBED = "subscribed"
    WRITTEN = "written"
    UPDATED = "updated"
    SUPERSEDED = "superseded"
    FORGOTTEN = "forgotten"
    DELETED = "deleted"
    EDGE_ADDED = "edge_added"
    EDGE_DELETED = "edge_deleted"


@dataclass(frozen=True)
class MemoryEvent:
    """One committed change.

    `memory` is the memory as the change left it (for DELETED, as it was just
    before; the API shows it as null). Edge events carry the `edge` and the
    snapshots of its two endpoints in `endpoints`, used only for matching.
    `related` holds snapshots of other memories the event names without being
    about them (the successor of SUPERSEDED, the one `memory.superseded_by`
    names): an audience may be shown their ids only if it may see them.
    """

    kind: EventKind
    namespace: str
    memory_ids: tuple[str, ...]
    actor: str
    at: datetime
    version: int | None = None
    memory: Memory | None = None
    edge: Edge | None = None
    endpoints: tuple[Memory, ...] = ()
    related: tuple[Memory, ...] = ()
    seq: int = 0
    missed: int = 0

    def subjects(self) -> tuple[Memory, ...]:
        """The memories a filter and the visibility rules look at."""
        return self.endpoints if self.edge is not None else (
            (self.memory,) if self.memory is not None else ())


def successors(memories: Iterable[Memory], known: Mapping[str, Memory]) -> tuple[Memory, ...]:
    """The snapshots in `known` of the successors `memories` name (`Audience.redact`)."""
    return tuple(known[m.superseded_by] for m in memories
                 if m.superseded_by is not None and m.superseded_by in known)


def edge_events(kind: EventKind, namespace: str, edges: Iterable[Edge],
                endpoints: Mapping[str, Memory], actor: str,
                at: datetime | None = None) -> list[MemoryEvent]:
    """EDGE_ADDED / EDGE_DELETED for each relationship, with the snapshots of the
    endpoints found in `endpoints` (matching and visibility look at both)."""
    return [
        MemoryEvent(kind=kind, namespace=namespace, memory_ids=(e.source_id, e.target_id),
                    actor=actor, at=at or e.created_at, edge=e,
                    endpoints=tuple(endpoints[i] for i in (e.source_id, e.target_id)
                                    if i in endpoints))
        for e in edges
    ]


@dataclass(frozen=True)
class EventFilter:
    """What a subscription wants; empty fields match everything.

    Tags match when the memory has any of them; scope ids and memory types
    must be equal. An edge event matches when either endpoint does.
    """

    kinds: frozenset[EventKind] = frozenset()
    tags_any: frozenset[str] = frozenset()
    memory_types: frozenset[str] = frozenset()
    agent_id: str | None = None
    user_id: str | None = None
    session_id: str | None = None
    task_id: str | None = None

    def matches(self, event: MemoryEvent) -> bool:
        if self.kinds and event.kind not in self.kinds:
            return False
        if not self._narrows_memories():
            return True
        return any(self._matches_memory(m) for m in event.subjects())

    def _narrows_memories(self) -> bool:
        return bool(self.tags_any or self.memory_types or self.agent_id or self.user_id
                    or self.session_id or self.task_id)

    def _matches_memory(self, m: Memory) -> bool:
        if self.tags_any and not self.tags_any.intersection(m.tags):
            return False
        if self.memory_types and m.memory_type not in self.memory_types:
            return False
        return all(wanted is None or wanted == have for wanted, have in (
            (self.agent_id, m.agent_id), (self.user_id, m.user_id),
            (self.session_id, m.session_id), (self.task_id, m.task_id)))


@dataclass(frozen=True)
class Audience:
    """What one subscriber may see inside its namespace.

    `scopes` are the stored scope levels its key reaches (None: all, and the
    namespace-wide memories). An event is delivered only when every memory it
    is about is visible: an edge to a secret memory is itself a secret.
    """

    clearance: Sensitivity = Sensitivity.HYPER
    scopes: tuple[str, ...] | None = None

    def sees(self, event: MemoryEvent) -> bool:
        subjects = event.subjects()
        if event.edge is not None and len(subjects) < 2 and self.restricted:
            return False  # an endpoint could not be read: it cannot be shown to be visible
        return all(self._sees(m) for m in subjects)

    @property
    def restricted(self) -> bool:
        return self.clearance is not Sensitivity.HYPER or self.scopes is not None

    def redact(self, event: MemoryEvent) -> MemoryEvent:
        """The event as this audience may see it (after `sees`): ids of memories it may
        not see, or whose snapshot is not at hand, leave `memory_ids` and
        `memory.superseded_by`, as the queries redact them (graph.visibility.shown_successor)."""
        if not self.restricted:
            return event
        shown = {m.id for m in (*event.subjects(), *event.related) if self._sees(m)}
        ids = tuple(i for i in event.memory_ids if i in shown)
        memory = event.memory
        if memory is not None and memory.superseded_by not in (None, *shown):
            memory = replace(memory, superseded_by=None)
        if ids == event.memory_ids and memory is event.memory:
            return event
        return replace(event, memory_ids=ids, memory=memory)

    def _sees(self, m: Memory) -> bool:
        if m.sensitivity > self.clearance:
            return False
        level = m.scope.value if m.scope is not None else NAMESPACE_SCOPE_KEY
        return self.scopes is None or level in self.scopes


@dataclass(eq=False)
class Subscription:
    """One subscriber's bounded queue; `next` and `next_within` receive its events."""

    namespace: str
    filter: EventFilter
    audience: Audience
    capacity: int
    _queue: deque[MemoryEvent] = field(default_factory=deque)
    _wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    _missed: int = 0
    dropped: int = 0
    # The last event of the log this subscription has been offered (shared_events), and
    # how many it has missed since the last it received (gaps in the log).
    cursor: int = 0
    _gap: int = 0

    def offer(self, event: MemoryEvent) -> bool:
        """Enqueue without waiting; on overflow the oldest queued event is dropped.
        False when the subscriber may not, or does not want to, see the event."""
        if not (self.filter.matches(event) and self.audience.sees(event)):
            return False
        event = self.audience.redact(event)
        if len(self._queue) >= self.capacity:
            dropped = self._queue.popleft()
            self._missed += 1 + dropped.missed
            self.dropped += 1
        self._queue.append(event)
        self._wakeup.set()
        return True

    def take(self, events: Iterable[MemoryEvent]) -> None:
        """Offer a contiguous run read from a log, skipping what this subscription has
        had; a gap (events pruned from the log, or unreadable) is counted as missed
        on the next event it receives after the gap."""
        for event in events:
            if event.seq <= self.cursor:
                continue
            self._gap += max(event.seq - self.cursor - 1, 0)
            self.cursor = event.seq
            if self.offer(replace(event, missed=self._gap) if self._gap else event):
                self._gap = 0

    @property
    def pending(self) -> int:
        return len(self._queue)

    async def next(self) -> MemoryEvent:
        while not self._queue:
            self._wakeup.clear()
            await self._wakeup.wait()
        return self._pop()

    async def next_within(self, seconds: float) -> MemoryEvent | None:
        """The next event, or None when none comes within `seconds`. Only the wait
        is cancelled on time-out, never a taken event (cancelling `next` itself
        could drop one that was taken as the time ran out)."""
        if not self._queue:
            self._wakeup.clear()
            try:
                await asyncio.wait_for(self._wakeup.wait(), timeout=seconds)
            except TimeoutError:
                return None
        return self._pop() if self._queue else None

    def _pop(self) -> MemoryEvent:
        event = self._queue.popleft()
        if self._missed:
            event, self._missed = replace(event, missed=event.missed + self._missed), 0
        return event


@dataclass(frozen=True)
class Opened:
    """A subscription, where it starts (`cursor`), and how many events before that
    start it could not be given (`missed`: its `after` was too old)."""

    subscription: Subscription
    cursor: int
    missed: int = 0


class EventBus:
    """Fan-out of committed changes to the subscribers of each namespace."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._subscribers: dict[str, set[Subscription]] = {}
        self._seq = itertools.count(1)
        self._last = 0

    def has_subscribers(self, namespace: str) -> bool:
        """Writers skip building snapshots nobody would receive."""
        return bool(self._subscribers.get(namespace))

    def publish(self, events: Iterable[MemoryEvent]) -> None:
        """Hand events to every matching subscriber; never blocks, never raises for them."""
        for event in events:
            self._last = next(self._seq)
            event = replace(event, seq=self._last)
            for subscription in tuple(self._subscribers.get(event.namespace, ())):
                subscription.offer(event)

    async def announce(self, events: Iterable[MemoryEvent]) -> None:
        """What the services call after commit (change_events); here, `publish`."""
        self.publish(events)

    async def erase(self, namespace: str, memory_id: str) -> None:
        """Forget what a deleted memory said (this bus keeps no history: nothing to do)."""

    def subscribe(self, namespace: str, flt: EventFilter | None = None,
                  audience: Audience | None = None) -> Subscription:
        subscription = Subscription(namespace=namespace, filter=flt or EventFilter(),
                                    audience=audience or Audience(), capacity=self.capacity)
        self._subscribers.setdefault(namespace, set()).add(subscription)
        return subscription

    async def open(self, namespace: str, flt: EventFilter | None = None,
                   audience: Audience | None = None, after: int | None = None) -> Opened:
        """Subscribe from now. This bus keeps no history: a resumed subscription
        (`after` below the latest event) is told that it missed what came since."""
        missed = 0
        if after is not None and after != self._last:
            missed = max(self._last - after, 1)
        return Opened(self.subscribe(namespace, flt, audience), self._last, missed)

    def unsubscribe(self, subscription: Subscription) -> None:
        subscribers = self._subscribers.get(subscription.namespace)
        if subscribers is not None:
            subscribers.discard(subscription)
            if not subscribers:
                del self._subscribers[subscription.namespace]

    @property
    def last_seq(self) -> int:
        """The sequence number of the latest published event (0 before any)."""
        return self._last

    def subscriber_count(self, namespace: str) -> int:
        return len(self._subscribers.get(namespace, ()))
