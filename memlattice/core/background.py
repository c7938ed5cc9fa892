"""One background loop of the service, started and stopped the same way everywhere.

The access recorder, the re-embedding builder, the consolidation schedule and
the jobs run under a lease each run a coroutine for the life of the app; this
holds the task, starts it once, and on stop ends it and waits for it to end, so
that whatever the owner does after (a last flush, closing a client) runs with
the loop gone.

A loop runs each unit of its work as a `step`. Stopping lets a step in progress
finish (for up to `grace_s`) instead of cancelling it midway, and a step asked
for after stop began never starts; the loop is cancelled where it waits between
steps. Cancelling a database call midway is wasteful, and it used to leak:
the Neo4j driver (6.4) leaves the socket of a connection it was opening
unclosed when cancelled. `GraphClient` now keeps every cancellation away from
that connect (graph/driver_calls.py), for requests as for these loops.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")

# How long stopping waits for a step in progress before cancelling it.
GRACE_S = 10.0


class BackgroundTask:
    def __init__(self, name: str, run: Callable[[], Awaitable[None]], *,
                 grace_s: float = GRACE_S) -> None:
        self.name = name
        self._run = run
        self.grace_s = grace_s
        self._task: asyncio.Task[None] | None = None
        self._step: asyncio.Future[Any] | None = None
        self._stopping = False

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Start the loop, unless it is already running (a second start is a no-op)."""
        if self._task is None:
            self._stopping = False
            self._task = asyncio.ensure_future(self._run())
            self._task.set_name(self.name)

    async def step(self, work: Awaitable[T]) -> T:
        """Run one unit of the loop's work, which `stop` lets finish; once stopping has
        begun, no new step starts (the loop ends as if cancelled)."""
        if self._stopping:
            if asyncio.iscoroutine(work):
                work.close()  # never awaited: say so to no one
            raise asyncio.CancelledError
        step = asyncio.ensure_future(work)
        self._step = step
        try:
            return await asyncio.shield(step)
        finally:
            if step.done():
                self._step = None

    async def stop(self) -> None:
        """Let a step in progress finish (up to `grace_s`; then it is cancelled),
        cancel the loop, and wait until it has ended; stopping twice is harmless."""
        task, self._task = self._task, None
        if task is None:
            return
        self._stopping = True
        step, self._step = self._step, None
        if step is not None and not step.done():
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(step), self.grace_s)
            if not step.done():
                step.cancel()
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await step
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
