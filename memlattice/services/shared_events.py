"""Live events across processes: the event bus backed by the shared log in Neo4j.

`SharedEventBus` is an `EventBus` that does not fan out in place: the
committed changes are appended to the log (graph.event_log), which numbers
them per namespace in the order of the appends, before the write that made
them answers (`announce`). The appending is one task's: what the writes of
the moment announced goes in one transaction per namespace (a group commit,
so concurrent writes do not each pay for one); when Neo4j refuses it, the
events stay in the outbox, in order, and the writers go on. Every process then tails the log
of each namespace its subscribers watch (one reader per namespace, however
many subscribers) and hands the events to its own subscriptions, matched and
redacted as before (memlattice.services.events). So a subscriber on any
process sees the changes committed through every process, each exactly once
and in the log's order, and only committed ones (services publish after
commit, memlattice.services.change_events).

Every event's `seq` is its position in its namespace's log; a client that
reconnects with `after=<seq>` is given what followed, as long as the log
still holds it. Events older than the retention window are pruned by one
elected process (memlattice.services.leases); a subscription whose cursor
fell behind the window is told how many it missed (`missed`) and goes on
from the oldest event kept.

Order: a change that completes before another begins (through any process)
is logged before it; two concurrent changes are logged in the order their
appends commit, which for two changes of one memory may differ from the
order of the changes (events carry the memory's `version` to tell).
Between a change's commit and its append the events live in the process
(milliseconds; a clean shutdown drains the outbox): a process killed in that
moment loses them; nothing is ever duplicated. docs/operating.md explains the
choice of log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Iterable
from datetime import timedelta

from memlattice.core.background import BackgroundTask
from memlattice.core.errors import MemlatticeError
from memlattice.core.model import utcnow
from memlattice.core.pacing import detached
from memlattice.graph.event_log import EventLogGraph
from memlattice.services import event_codec
from memlattice.services.events import (
    DEFAULT_CAPACITY,
    Audience,
    EventBus,
    EventFilter,
    MemoryEvent,
    Opened,
    Subscription,
)

log = logging.getLogger(__name__)

MAX_OUTBOX = 100_000
"""Events waiting for the log beyond this (Neo4j unreachable for long) are dropped, oldest first."""


class SharedEventBus(EventBus):
    def __init__(self, graph: EventLogGraph, *, capacity: int = DEFAULT_CAPACITY,
                 poll_s: float = 0.25, page: int = 500, retry_s: float = 1.0) -> None:
        super().__init__(capacity)
        self.graph = graph
        self.poll_s = poll_s
        self.page = page
        self.retry_s = retry_s
        # Committed events not yet in the log, each call's last one with its waiting writer.
        self._outbox: deque[tuple[MemoryEvent, asyncio.Future[None] | None]] = deque()
        self._pending = asyncio.Event()
        self._flushing = asyncio.Lock()
        self._writer = BackgroundTask("memlattice-event-outbox", self._write_loop)
        self._tails: dict[str, asyncio.Task[None]] = {}
        self._wakes: dict[str, asyncio.Event] = {}
        self.appended = 0

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self._writer.start()

    async def stop(self) -> None:
        """Stop tailing, then append what the outbox still holds (the driver is open)."""
        await self._writer.stop()
        tails, self._tails = list(self._tails.values()), {}
        for task in tails:
            task.cancel()
        for task in tails:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        with contextlib.suppress(MemlatticeError):
            await self.flush()

    # ------------------------------------------------------------ writing

    def has_subscribers(self, namespace: str) -> bool:
        """Always: a subscriber may be on another process, or reconnect later."""
        return True

    def publish(self, events: Iterable[MemoryEvent]) -> None:
        """Queue committed events for the log without waiting for them."""
        self._enqueue(list(events), None)

    async def announce(self, events: Iterable[MemoryEvent]) -> None:
        """Queue committed events and wait until they are in the log, so that a write
        that follows this one (through any process) is logged after it. Writes that
        announce at the same time share one append (a group commit). When the log
        cannot be written now, the wait ends anyway and the events stay queued: the
        change itself is committed either way."""
        events = list(events)
        if not events:
            return
        if not self._writer.running:  # a one-shot command: appended when it stops
            self.publish(events)
            return
        appended = asyncio.get_running_loop().create_future()
        self._enqueue(events, appended)
        await appended

    def _enqueue(self, events: list[MemoryEvent],
                 appended: asyncio.Future[None] | None) -> None:
        for i, event in enumerate(events):
            self._outbox.append((event, appended if i == len(events) - 1 else None))
        while len(self._outbox) > MAX_OUTBOX:
            _, dropped_waiter = self._outbox.popleft()
            _settle(dropped_waiter)
            log.warning("the event outbox is full; the oldest event was dropped")
        self._pending.set()

    async def flush(self) -> None:
        """Append everything queued, per namespace in the order published."""
        async with self._flushing:
            await self._append_queued()

    async def _append_queued(self) -> None:
        while self._outbox:
            batch = [self._outbox.popleft() for _ in range(min(len(self._outbox), self.page))]
            by_namespace: dict[str, list[MemoryEvent]] = {}
            for event, _ in batch:
                by_namespace.setdefault(event.namespace, []).append(event)
            try:
                for namespace, events in list(by_namespace.items()):
                    await self.graph.append(
                        namespace, [(event_codec.encode(e), e.memory_ids) for e in events],
                        utcnow())
                    del by_namespace[namespace]
                    self.appended += len(events)
                    self._wake(namespace)
            except BaseException:
                # Put back, in order, what was not appended; its writers wait no longer.
                self._outbox.extendleft(reversed([(e, None) for e, _ in batch
                                                  if e.namespace in by_namespace]))
                raise
            finally:
                for _, waiter in batch:
                    _settle(waiter)

    async def _write_loop(self) -> None:
        while True:
            await self._pending.wait()
            self._pending.clear()
            try:
                await asyncio.shield(self.flush())
            except MemlatticeError as exc:
                log.warning("could not append %d events to the log (%s); retrying",
                            len(self._outbox), exc.code)
                self._pending.set()
                await asyncio.sleep(self.retry_s)

    async def erase(self, namespace: str, memory_id: str) -> None:
        """Rewrite the logged events that name an erased memory without its content."""
        await self.flush()  # its earlier events may still be queued
        stored = await self.graph.naming(namespace, memory_id)
        await self.graph.rewrite(namespace, [
            (seq, event_codec.encode(event_codec.without(event_codec.decode(payload, seq),
                                                         memory_id)))
            for seq, payload in stored])

    # ------------------------------------------------------------ reading

    async def open(self, namespace: str, flt: EventFilter | None = None,
                   audience: Audience | None = None, after: int | None = None) -> Opened:
        """Subscribe from `after` (None: from now). Events the log no longer holds are
        reported as `missed`, and the subscription starts from the oldest it holds."""
        bounds = await self.graph.bounds(namespace)
        if after is not None and after > bounds.head:
            # On a cluster the reader that answered may be behind the process that
            # handed the cursor out (a client resuming on another replica): ask the
            # writer before calling the cursor one this log never issued.
            bounds = await self.graph.bounds(namespace, from_writer=True)
        start, missed = bounds.head, 0
        if after is not None:
            if after > bounds.head:  # a cursor this log never handed out (a reset store)
                missed = 1
            elif bounds.oldest is None:
                missed = bounds.head - after
            elif after < bounds.oldest - 1:
                start, missed = bounds.oldest - 1, bounds.oldest - 1 - after
            else:
                start = after
        subscription = self.subscribe(namespace, flt, audience)
        subscription.cursor = start
        if namespace not in self._tails:
            self._tails[namespace] = asyncio.ensure_future(self._tail(namespace))
        self._wake(namespace)
        return Opened(subscription, start, missed)

    def unsubscribe(self, subscription: Subscription) -> None:
        super().unsubscribe(subscription)
        self._wake(subscription.namespace)

    def _wake(self, namespace: str) -> None:
        wake = self._wakes.get(namespace)
        if wake is not None:
            wake.set()

    async def _tail(self, namespace: str) -> None:
        """Read the namespace's log from the earliest cursor of its subscribers on, and
        hand each subscription what lies beyond its own cursor; ends with the last one."""
        # Every subscriber's, not the operation's that started it (memlattice.core.pacing).
        detached()
        wake = self._wakes.setdefault(namespace, asyncio.Event())
        try:
            while True:
                subscriptions = tuple(self._subscribers.get(namespace, ()))
                if not subscriptions:
                    return
                wake.clear()
                try:
                    rows = await self.graph.after(namespace,
                                                  min(s.cursor for s in subscriptions),
                                                  self.page)
                except MemlatticeError as exc:
                    log.warning("could not read the event log of %s: %s", namespace, exc.code)
                    rows = []
                events = _decoded(namespace, rows)
                for subscription in subscriptions:
                    subscription.take(events)
                if len(rows) < self.page:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(wake.wait(), self.poll_s)
        finally:
            if self._tails.get(namespace) is asyncio.current_task():
                del self._tails[namespace]
            self._wakes.pop(namespace, None)

    # ------------------------------------------------------------ retention

    async def prune(self, retention: timedelta, batch: int = 10_000) -> int:
        """Delete the events older than `retention` (run by one elected process), in
        transactions of at most `batch`."""
        total = 0
        while True:
            pruned = await self.graph.prune(utcnow() - retention, limit=batch)
            total += pruned
            if pruned < batch:
                return total


def _settle(waiter: asyncio.Future[None] | None) -> None:
    """Let a writer waiting in `announce` go on (unless it stopped waiting)."""
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


def _decoded(namespace: str, rows: list[tuple[int, str]]) -> list[MemoryEvent]:
    """The events of `rows`; one that cannot be read (written by another version) is
    left out, and the gap it leaves reaches its subscribers as `missed`."""
    events = []
    for seq, payload in rows:
        try:
            events.append(event_codec.decode(payload, seq))
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("event %s of %s cannot be read (%s); skipped", seq, namespace, exc)
    return events
