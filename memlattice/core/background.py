"""One background loop of the service, started and stopped the same way everywhere.

The access recorder, the re-embedding builder and the consolidation schedule
each run a coroutine for the life of the app; this holds the task, starts it
once, and on stop cancels it and waits for it to end, so that whatever the
owner does after (a last flush, closing a client) runs with the loop gone.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable


class BackgroundTask:
    def __init__(self, name: str, run: Callable[[], Awaitable[None]]) -> None:
        self.name = name
        self._run = run
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Start the loop, unless it is already running (a second start is a no-op)."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())
            self._task.set_name(self.name)

    async def stop(self) -> None:
        """Cancel the loop and wait until it has ended; stopping twice is harmless."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
