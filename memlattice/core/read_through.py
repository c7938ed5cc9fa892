"""A per-key cache of values read from the graph, for the lookups every request makes.

Searches ask which vector space a namespace searches and what its search
defaults are; both are cached for a few seconds. A plain "read when stale"
cache did that, but under load each expiry sent every request in flight for
that namespace to Neo4j with the same query at the same moment, and made each
of them wait for it. Here:

- concurrent callers that find a key missing or expired share one read;
- a value past half its life is read again by the one caller that finds it
  so, while the others keep being served the cached value, so under steady
  traffic no request waits for these lookups at all;
- a value is never served older than `ttl_s` (counted from when its read
  began), so "a change made through another process is seen within `ttl_s`"
  still holds;
- `put` (a change made through this process) and `forget` win over a read
  that was already in flight: its older answer is not stored over them.

One caller's cancellation (a request timing out) does not cancel the read the
others wait for.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from memlattice.core.pacing import detached

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class _Known(Generic[V]):
    read_at: float
    value: V


class ReadThrough(Generic[K, V]):
    """Values of `load(key)`, each kept for `ttl_s` (see the module docstring)."""

    def __init__(self, load: Callable[[K], Awaitable[V]], *, ttl_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._load = load
        self.ttl_s = ttl_s
        self._clock = clock
        self._known: dict[K, _Known[V]] = {}
        self._reads: dict[K, asyncio.Task[V]] = {}
        self._changes: dict[K, int] = {}

    async def get(self, key: K) -> V:
        known = self._known.get(key)
        if known is not None:
            age = self._clock() - known.read_at
            if age < self.ttl_s and (age < self.ttl_s / 2 or key in self._reads):
                return known.value
        return await asyncio.shield(self._read(key))

    def put(self, key: K, value: V) -> None:
        """A value this process just wrote: served at once, for a full `ttl_s`."""
        self._changes[key] = self._changes.get(key, 0) + 1
        self._reads.pop(key, None)  # later callers must not join a read from before
        self._known[key] = _Known(self._clock(), value)

    def forget(self, key: K) -> None:
        """Read `key` again on its next `get`."""
        self._changes[key] = self._changes.get(key, 0) + 1
        self._reads.pop(key, None)
        self._known.pop(key, None)

    def _read(self, key: K) -> asyncio.Task[V]:
        """The read of `key` in flight, started now if there is none."""
        running = self._reads.get(key)
        if running is not None:
            return running
        task = asyncio.get_running_loop().create_task(
            self._read_and_keep(key, self._changes.get(key, 0), self._clock()))
        self._reads[key] = task
        task.add_done_callback(lambda done: self._finished(key, done))
        return task

    async def _read_and_keep(self, key: K, changes: int, started: float) -> V:
        # Shared by every caller that joins it: it must not wait, at a stage boundary,
        # on behalf of the first one's key for the others (memlattice.core.pacing).
        detached()
        value = await self._load(key)
        if self._changes.get(key, 0) == changes:
            self._known[key] = _Known(started, value)
        return value

    def _finished(self, key: K, task: asyncio.Task[V]) -> None:
        if self._reads.get(key) is task:
            del self._reads[key]
        if not task.cancelled():
            task.exception()  # retrieved: every waiter has it raised already
