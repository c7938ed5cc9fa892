"""Each namespace's share of the vector index, known without slowing a search.

The first pool a similarity search asks for grows as its namespace's share of
the shared vector index shrinks (memlattice.pool). Counting a namespace costs
time in proportion to its size (graph.shares), so a search never waits for
it: it reads the last count, and when that is missing or older than `ttl_s`
a background task counts again. Until a namespace's first count lands its
searches ask for the full pool, which is never worse for recall. Shares move
slowly (a namespace has to write a sizeable part of the index to move its
own), so a count a minute old is as good as a fresh one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass

from graph.shares import IndexShareGraph
from memlattice.auth import Tenant
from memlattice.errors import MemlatticeError
from memlattice.vector_spaces import VectorSpace

log = logging.getLogger(__name__)

_Key = tuple[str, str | None]


@dataclass(frozen=True, slots=True)
class _Known:
    at: float
    share: float


class IndexShares:
    def __init__(self, graph: IndexShareGraph, *, ttl_s: float = 60.0,
                 max_namespaces: int = 10_000) -> None:
        self.graph = graph
        self.ttl_s = ttl_s
        self.max_namespaces = max_namespaces
        self._known: dict[_Key, _Known] = {}
        self._counting: dict[_Key, asyncio.Task[None]] = {}

    def share(self, tenant: Tenant, space: VectorSpace | None) -> float | None:
        """The last known share of the index `space` searches, or None; never blocks.

        A missing or stale share starts one background count (at most one per
        namespace and space at a time)."""
        key = (tenant.namespace, space.key if space is not None else None)
        known = self._known.get(key)
        if (known is None or time.monotonic() - known.at >= self.ttl_s) \
                and key not in self._counting:
            self._counting[key] = asyncio.create_task(
                self._count(key, tenant, space), name=f"memlattice-index-share:{key[0]}")
        return known.share if known is not None else None

    async def refresh(self, tenant: Tenant, space: VectorSpace | None) -> float:
        """Count now and remember it (for callers that want the share settled first)."""
        key = (tenant.namespace, space.key if space is not None else None)
        counts = await self.graph.counts(tenant=tenant, space=space)
        self._remember(key, counts.share)
        return counts.share

    async def _count(self, key: _Key, tenant: Tenant, space: VectorSpace | None) -> None:
        try:
            counts = await self.graph.counts(tenant=tenant, space=space)
            self._remember(key, counts.share)
        except MemlatticeError as exc:
            # The last known share (or the full pool) serves until the next try.
            log.warning("could not count namespace %s in its vector index: %s", key[0], exc.code)
        finally:
            self._counting.pop(key, None)

    def _remember(self, key: _Key, share: float) -> None:
        self._known.pop(key, None)
        while len(self._known) >= self.max_namespaces:
            # Least recently counted first: dicts keep insertion order.
            del self._known[next(iter(self._known))]
        self._known[key] = _Known(at=time.monotonic(), share=share)

    async def wait_idle(self) -> None:
        """Wait for the counts under way (tests and benchmarks settle shares first)."""
        while self._counting:
            await asyncio.gather(*self._counting.values(), return_exceptions=True)

    async def stop(self) -> None:
        """Cancel counts under way (called on shutdown)."""
        tasks = list(self._counting.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._counting.clear()
