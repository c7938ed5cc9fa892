"""Re-embedding in the background: build a namespace's new vector space, then switch.

When a namespace is configured with another embedding model, every memory's
content is embedded again in batches and stored as a side vector (never as a
change to the memory). Search keeps using the namespace's current space until
nothing is missing from the new one; then one transaction switches it over
and the old side vectors are dropped.

What remains to do is always read from the graph (memories without a vector
in the target space), so a build survives restarts, runs safely on several
replicas at once (writes are MERGEs), and needs no progress counters.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from memlattice.core.background import BackgroundTask
from memlattice.core.errors import MemlatticeError
from memlattice.core.model import utcnow
from memlattice.core.vector_spaces import SpaceState, VectorSpace
from memlattice.services.spaces import VectorSpaces

log = logging.getLogger(__name__)

ProgressCallback = Callable[[int], None]
"""Called with the number of memories just embedded."""


class Reembedder:
    def __init__(self, spaces: VectorSpaces, *, batch: int = 128, poll_s: float = 30.0,
                 sweep_s: float = 300.0, max_failures: int = 5) -> None:
        self.spaces = spaces
        self.graph = spaces.graph
        self.batch = batch
        self.poll_s = poll_s
        self.max_failures = max_failures
        self.sweep_s = sweep_s
        self._last_sweep = -sweep_s
        self._reported: dict[tuple[str, VectorSpace], str] = {}
        self._wake = asyncio.Event()
        self._loop = BackgroundTask("memlattice-reembed", self._run)
        self._idle = asyncio.Event()
        spaces.on_change(self.kick)

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self._loop.start()

    async def stop(self) -> None:
        await self._loop.stop()

    def kick(self) -> None:
        self._idle.clear()
        self._wake.set()

    async def wait_idle(self, timeout: float = 60.0) -> None:
        """Wait until no build is left (tests, the CLI)."""
        await asyncio.wait_for(self._idle.wait(), timeout)

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            try:
                await self._loop.step(self.run_once())
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("re-embedding pass failed; retrying in %.0fs", self.poll_s)
            if not self._wake.is_set():
                self._idle.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_s)

    # ------------------------------------------------------------ work

    async def run_once(self) -> int:
        """One pass: finish every build, catch up lagging side spaces. Returns the
        number of memories embedded."""
        done = 0
        for state in await self.graph.building():
            done += await self.build(state)
        # Memories a write could not embed into the space its namespace searches
        # (here, or on a replica that had not yet seen the switch) are caught up.
        if not self.spaces.embedders.can_embed:
            return done
        lagging, self.spaces.lagging = self.spaces.lagging, set()
        if time.monotonic() - self._last_sweep >= self.sweep_s:
            self._last_sweep = time.monotonic()
            lagging |= {(s.namespace, s.active) for s in await self.graph.serving_side_spaces()
                        if s.active is not None}
        for namespace, space in sorted(lagging, key=lambda x: (x[0], x[1].key)):
            try:
                done += await self._fill(namespace, space)
                self._reported.pop((namespace, space), None)
            except MemlatticeError as exc:
                self.spaces.lagging.add((namespace, space))
                # Say it once per distinct failure, not on every pass.
                if self._reported.get((namespace, space)) != exc.message:
                    self._reported[(namespace, space)] = exc.message
                    log.warning("catching up %s in %s failed: %s", namespace, space.key, exc)
        return done

    async def build(self, state: SpaceState, on_progress: ProgressCallback | None = None) -> int:
        """Embed what the target space lacks, then switch the namespace over."""
        target = state.target
        if target is None:
            return 0
        namespace = state.namespace
        try:
            done = await self._fill(namespace, target, on_progress)
        except MemlatticeError as exc:
            await self.graph.fail(namespace, target, exc.message, utcnow())
            self.spaces.forget_cached(namespace)
            log.error("re-embedding %s into %s failed: %s", namespace, target.key, exc)
            return 0
        replaced = await self.graph.activate(namespace, target, utcnow())
        self.spaces.forget_cached(namespace)
        if replaced is False:
            # The target changed, or memories arrived meanwhile: the next pass sees to it.
            self.kick()
            return done
        log.info("namespace %s now searches %s (%d memories embedded)", namespace,
                 target.key, done)
        if isinstance(replaced, VectorSpace) and replaced != target:
            await self.graph.drop_vectors(namespace, replaced)
        return done

    async def _fill(self, namespace: str, space: VectorSpace,
                    on_progress: ProgressCallback | None = None) -> int:
        done = failures = 0
        while True:
            rows = await self.graph.missing(namespace, space, self.batch)
            if not rows:
                return done
            try:  # embedded as a write embeds them (memlattice.core.embedding_text)
                vectors = await self.spaces.vectors(space, rows)
            except MemlatticeError:
                failures += 1
                if failures >= self.max_failures:
                    raise
                await asyncio.sleep(min(30.0, 0.5 * 2 ** failures))
                continue
            stored = await self.graph.put(namespace, space, vectors)
            if stored == 0:
                # Every row changed under us; their writers embed them. Avoid spinning.
                await asyncio.sleep(0.05)
            done += stored
            if on_progress is not None:
                on_progress(stored)
