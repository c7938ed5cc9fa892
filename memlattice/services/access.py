"""Access counting off the hot path.

Every recall records which memories it returned; a background task folds
those records into `accessCount` / `lastAccessedAt` with one UNWIND per
flush. The request never waits on that write, and a burst of recalls of the
same memory costs one row. Counts are best-effort popularity signals, so a
crash may lose the last unflushed second; acknowledged memory writes never
travel this path.
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
        """Stop, then flush what is pending (called on shutdown)."""
        await self._loop.stop()
        await self.flush()

    async def flush(self) -> int:
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
            await self.flush()
