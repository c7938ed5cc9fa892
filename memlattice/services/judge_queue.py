"""The update judge's queue in the graph: every new memory is judged, once, eventually.

Judging from memory lost work: a model that was down or answered garbage, a
backlog that was full, a process that restarted, and the memories were never
judged. So a write's new memories are marked in the graph by the write's own
transaction (graph.judge_queue.mark_in: no memory commits without its mark,
whatever happens to the process next), with what judging needs of the write:
the writer's view and actor (core.judge_queue.WriterView), so the model is shown
exactly the offers the writer's key may see, however late it is asked. One loop
per process then judges what is marked:

- only the process holding the `update-judge` lease (graph.leases) reads the
  queue, so two processes never judge one memory at once; the others only mark,
  and the holder finds their marks at its next look (every `judge_poll_s`). Its
  term is several model timeouts long and renewed before every batch, so a
  holder that is slow is not overtaken midway; a holder that dies is replaced
  once the term lapses.
- it takes the oldest due memories in batches of `judge_batch`, groups them by
  writer view (a prompt never mixes what different keys may see) and judges
  each group (services.update_judge).
- a judged memory leaves the queue. One the model could not be asked about waits
  (`judge_retry_s`, doubling up to `judge_retry_max_s`) and the pass stops: the
  model is down for the rest too. One it answered garbage about is tried again
  the same way, and given up after `judge_max_malformed` such answers (counted
  as `abandoned`). A process restart loses nothing: the marks are in the graph.

Memories written while judging is off are never marked, so a process that turns
it on later does not judge them. `memlattice_update_judge_waiting` is the number
of marked memories (all namespaces), as the last look found it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from memlattice.core.auth import Tenant
from memlattice.core.background import BackgroundTask
from memlattice.core.errors import MemlatticeError
from memlattice.core.field_rules import utcnow
from memlattice.core.judge_queue import Retrying, Waiting, WriterView, by_writer
from memlattice.core.settings import FactsLLMSettings
from memlattice.core.update_judging import JudgeOutcome, Shown
from memlattice.graph.judge_queue import JudgeQueueGraph
from memlattice.graph.leases import LeaseGraph
from memlattice.services.leases import PROCESS_ID

log = logging.getLogger(__name__)

LEASE = "update-judge"


@dataclass
class Judgement:
    """What became of the memories one group of a pass showed the model (by id)."""

    judged: list[str] = field(default_factory=list)  # done: linked or not
    failed: list[str] = field(default_factory=list)  # the model could not be asked
    malformed: list[str] = field(default_factory=list)  # it answered no replaces JSON


Judge = Callable[[Sequence[Shown], Tenant, str], Awaitable[Judgement]]


class JudgeQueue:
    """Judges the memories writes marked as waiting, one process at a time."""

    def __init__(self, graph: JudgeQueueGraph, leases: LeaseGraph, judge: Judge,
                 settings: FactsLLMSettings, *, count: Callable[[JudgeOutcome, int], None],
                 waiting: Callable[[int], None] | None = None) -> None:
        self.graph = graph
        self.leases = leases
        self.judge = judge
        self.settings = settings
        self.count = count
        self.waiting = waiting or (lambda n: None)
        self.retrying = Retrying(first_s=settings.judge_retry_s,
                                 max_s=settings.judge_retry_max_s,
                                 max_malformed=settings.judge_max_malformed)
        # Several apps may share a process (tests do): each holds the lease as itself.
        self.holder = f"{PROCESS_ID}/{uuid.uuid4().hex[:8]}"
        self.term = timedelta(seconds=max(60.0, 5 * settings.timeout_s))
        self.holding = False
        self._pass = asyncio.Lock()
        self._wake = asyncio.Event()
        self._limit = asyncio.Semaphore(settings.concurrency)
        self._loop = BackgroundTask("memlattice-update-judge", self._run)

    def start(self) -> None:
        self._loop.start()

    def wake(self) -> None:
        """A write marked memories: look at the queue now, not at the next poll."""
        self._wake.set()

    async def drain(self) -> None:
        """When this process holds the lease, try every memory due now once (tests,
        and a caller that wants the links before it searches)."""
        await self.catch_up()

    async def stop(self) -> None:
        """Stop the loop and let another process judge."""
        await self._loop.stop()
        if self.holding:
            self.holding = False
            try:
                await self.leases.release(LEASE, self.holder)
            except MemlatticeError as exc:
                log.warning("could not release the %s lease: %s", LEASE, exc.code)

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            try:
                await self._loop.step(self.catch_up())
            except MemlatticeError as exc:
                log.warning("the update judge's queue was not read: %s", exc.code)
            except Exception:  # the loop outlives one failed pass
                log.exception("the update judge's pass failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.settings.judge_poll_s)

    async def catch_up(self) -> None:
        """One pass: while this process holds the lease, judge the due memories batch
        by batch, until none is due or the model is down; then count what waits."""
        async with self._pass:
            tried: list[str] = []
            while True:
                self.holding = await self.leases.take(LEASE, self.holder, utcnow(),
                                                      self.term)
                if not self.holding:
                    break
                items, unreadable = await self.graph.due(utcnow(), self.settings.judge_batch,
                                                         tried)
                if unreadable:  # marked by another version, in a form this one cannot read
                    await self.graph.settle(unreadable)
                    self.count("abandoned", len(unreadable))
                if not items:
                    break
                tried += [item.id for item in items]
                if await self._judge_batch(items):
                    break
            self.waiting(await self.graph.count())

    async def _judge_batch(self, items: list[Waiting]) -> bool:
        """Judge `items`, one group per writer view; True when the model was down."""
        groups = by_writer(items)
        outcomes = await asyncio.gather(*(self._judge_group(view, group)
                                          for view, group in groups))
        judged: list[str] = []
        retried: list[dict[str, object]] = []
        down = False
        now = utcnow()
        for (_, group), outcome in zip(groups, outcomes):
            judged += outcome.judged
            down = down or bool(outcome.failed)
            failed, malformed = set(outcome.failed), set(outcome.malformed)
            for item in group:
                if item.id not in failed and item.id not in malformed:
                    continue
                failures = item.failures + 1
                garbage = item.malformed + (item.id in malformed)
                if self.retrying.gives_up(garbage):
                    judged.append(item.id)
                    self.count("abandoned", 1)
                    continue
                retried.append({"id": item.id, "failures": failures, "malformed": garbage,
                                "after": now + timedelta(
                                    seconds=self.retrying.delay_s(failures))})
        await self.graph.settle(judged)
        await self.graph.defer(retried)
        if retried:
            self.count("retried", len(retried))
        return down

    async def _judge_group(self, view: WriterView, group: list[Waiting]) -> Judgement:
        """Judge one writer's memories as that writer; a failure other than the model's
        (the database, say) is a failure to retry like the model's."""
        shown = [Shown(id=item.id, content=item.content, at=item.at) for item in group]
        try:
            tenant = view.tenant()
        except MemlatticeError:  # a namespace name this version refuses
            return Judgement(malformed=[item.id for item in group])
        async with self._limit:
            try:
                return await self.judge(shown, tenant, view.actor)
            except Exception:
                log.exception("judging %d memories of %s failed", len(group), view.namespace)
                return Judgement(failed=[item.id for item in group])
