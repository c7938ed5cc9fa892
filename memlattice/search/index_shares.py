"""How much of the shared vector index a search's filter admits, known without
slowing the search.

The first pool a similarity search asks for grows as the part of the index
its in-index filter admits shrinks (memlattice.search.pool): the namespace, and
within it the scope buckets of the caller's chain when it has one. Counting
costs time in proportion to what is counted (graph.shares), so a search never
waits for it: it reads the last counts, and those missing or older than
`ttl_s` are counted again by a background task. Until every count a search
needs has landed, its share is unknown and it asks for the full pool, which is
never worse for recall.

Scope buckets are counted one by one and summed, because chains overlap: the
sessions of one user share its user, agent and namespace-wide buckets, so a
new session costs one small count, not a recount of the whole chain.
Counts move slowly (a bucket has to gain a sizeable part of the index to move
a share), so a count a minute old is as good as a fresh one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from memlattice.core.auth import Tenant
from memlattice.core.detached import DetachedTasks
from memlattice.core.errors import MemlatticeError
from memlattice.core.remembered import Remembered
from memlattice.core.vector_spaces import VectorSpace
from memlattice.graph.shares import IndexCounts, IndexShareGraph

log = logging.getLogger(__name__)


class IndexShares:
    def __init__(self, graph: IndexShareGraph, *, ttl_s: float = 60.0,
                 max_entries: int = 100_000) -> None:
        self.graph = graph
        self._namespaces: Remembered[tuple[str, str | None], IndexCounts] = Remembered(
            ttl_s, max_entries)
        self._buckets: Remembered[tuple[str, str | None, str], int] = Remembered(
            ttl_s, max_entries)
        self._background = DetachedTasks()

    def share(self, tenant: Tenant, space: VectorSpace | None,
              scope_keys: Sequence[str] | None = None) -> float | None:
        """The last known fraction of the index `space` searches (the primary one
        when None) that the tenant's namespace, narrowed to `scope_keys` when
        given, holds; None while a count it needs has not landed. Never blocks:
        missing and stale counts are started in the background."""
        space_key = space.key if space is not None else None
        whole_key = (tenant.namespace, space_key)
        if self._namespaces.due(whole_key):
            self._namespaces.reading.add(whole_key)
            self._start(whole_key[0], self._count_namespace(whole_key, tenant, space))
        whole = self._namespaces.get(whole_key)
        if scope_keys is None:
            return whole.share if whole is not None else None
        keys = [(tenant.namespace, space_key, k) for k in dict.fromkeys(scope_keys)]
        due = [k for k in keys if self._buckets.due(k)]
        if due:
            self._buckets.reading.update(due)
            self._start(tenant.namespace, self._count_buckets(due, tenant, space))
        counts = [self._buckets.get(k) for k in keys]
        if whole is None or any(c is None for c in counts):
            return None
        admitted = sum(c for c in counts if c is not None)
        return admitted / whole.everyone if whole.everyone else 1.0

    async def refresh(self, tenant: Tenant, space: VectorSpace | None,
                      scope_keys: Sequence[str] = ()) -> float | None:
        """Count now, and answer as `share` then would (for callers, such as
        benchmarks and tests, that want the counts settled first)."""
        space_key = space.key if space is not None else None
        await self._count_namespace((tenant.namespace, space_key), tenant, space)
        if scope_keys:
            await self._count_buckets([(tenant.namespace, space_key, k) for k in scope_keys],
                                      tenant, space)
        return self.share(tenant, space, scope_keys or None)

    def _start(self, namespace: str, work: Coroutine[Any, Any, None]) -> None:
        # Every later search's counts, not the operation's that started them: they never
        # wait at its stage boundaries (memlattice.core.pacing).
        self._background.start(work, name=f"memlattice-index-share:{namespace}")

    async def _count_namespace(self, key: tuple[str, str | None], tenant: Tenant,
                               space: VectorSpace | None) -> None:
        await self._guarded(key[0], [key], self._namespaces, lambda: self._put_namespace(
            key, tenant, space))

    async def _put_namespace(self, key: tuple[str, str | None], tenant: Tenant,
                             space: VectorSpace | None) -> None:
        self._namespaces.put(key, await self.graph.counts(tenant=tenant, space=space))

    async def _count_buckets(self, keys: list[tuple[str, str | None, str]], tenant: Tenant,
                             space: VectorSpace | None) -> None:
        async def put() -> None:
            found = await self.graph.scope_counts(tenant=tenant, space=space,
                                                  scope_keys=[k[2] for k in keys])
            for key in keys:
                self._buckets.put(key, found.get(key[2], 0))

        await self._guarded(tenant.namespace, keys, self._buckets, put)

    @staticmethod
    async def _guarded(namespace: str, keys: Sequence[Any], memory: Remembered[Any, Any],
                       count: Callable[[], Awaitable[None]]) -> None:
        try:
            await count()
        except MemlatticeError as exc:
            # The last known counts (or the full pool) serve until the next try.
            log.warning("could not count namespace %s in its vector index: %s",
                        namespace, exc.code)
        finally:
            memory.reading.difference_update(keys)

    async def wait_idle(self) -> None:
        """Wait for the counts under way (tests and benchmarks settle shares first)."""
        await self._background.drain()

    async def stop(self) -> None:
        """Cancel counts under way (called on shutdown)."""
        await self._background.cancel()
