"""Access counting off the hot path.

Every recall records which memories it returned; a background task folds
those records into `accessCount` / `lastAccessedAt` with one UNWIND per
flush. The request never waits on that write, and a burst of recalls of the
same memory costs one row. Counts are best-effort popularity signals, so a
crash may lose the last unflushed second; acknowledged memory writes never
travel this path.

A flush is never interrupted half-way: the loop runs each flush shielded
from its own cancellation and flushes take turns, so `stop()` waits for the
flush in progress and then flushes the rest. (Cancelling the loop while its
write was in flight used to drop that batch: it had left `_pending` and was
never put back, so a shutdown that coincided with a flush lost its counts.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Iterable

from memlattice.core.background import BackgroundTask
from memlattice.core.errors import MemlatticeError
from memlattice.core.model import utcnow
from memlattice.graph.memories import MemoryGraph

log = logging.getLogger(__name__)


class AccessRecorder:
    def __init__(self, graph: MemoryGraph, *, interval_s: float = 1.0,
                 max_pending: int = 100_000) -> None:
        self.graph = graph
        self.interval_s = interval_s
        self.max_pending = max_pending
        self._pending: Counter[tuple[str, str]] = Counter()
        self._loop = BackgroundTask("memlattice-access-recorder", self._run)
        self._wake = asyncio.Event()
        # One flush at a time: the final flush of `stop()` queues behind the loop's.
        self._flushing = asyncio.Lock()

    def record(self, namespace: str, ids: Iterable[str]) -> None:
        """Count one access per id; never blocks, never raises."""
        for id in ids:
            if len(self._pending) >= self.max_pending:
                log.warning("access counter full; dropping counts until the next flush")
                self._wake.set()
                return
            self._pending[(namespace, id)] += 1

    def start(self) -> None:
        self._loop.start()

    async def stop(self) -> None:
        """Stop the loop, let its flush in progress finish, then flush what is left
        (called on shutdown, while the driver is still open)."""
        await self._loop.stop()
        await self.flush()

    async def flush(self) -> int:
        """Write the pending counts; returns how many rows were written.

        On a refused write the batch goes back into the pending counts, to be
        retried by the next flush.
        """
        async with self._flushing:
            return await self._flush_pending()

    async def _flush_pending(self) -> int:
        if not self._pending:
            return 0
        batch, self._pending = self._pending, Counter()
        rows = [{"namespace": ns, "id": id, "count": n} for (ns, id), n in batch.items()]
        try:
            await self.graph.bump_access(rows, now=utcnow())
        except MemlatticeError as exc:
            log.warning("could not record %d access counts: %s", len(rows), exc.code)
            self._pending.update(batch)
            return 0
        return len(rows)

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self.interval_s)
            self._wake.clear()
            try:
                # Shielded: cancelling the loop (stop) must not abandon a batch
                # that has left `_pending` but not yet reached Neo4j.
                await asyncio.shield(self.flush())
            except asyncio.CancelledError:
                raise
            except Exception:
                # The loop outlives one bad flush; counts keep arriving.
                log.exception("access count flush failed")
