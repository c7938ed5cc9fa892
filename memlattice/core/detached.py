"""Short tasks a request starts that must outlive it (core.background is for the
service's long-running loops).

The index-share counts (search.index_shares), session facts
(services.session_facts) and the update judge (services.update_judge) start
work on a request's behalf that runs on after it returns, outside that
request's pacing (core.pacing: the work serves others too, or no one in
particular), and must let a test or a benchmark wait for it and a shutdown
cancel it. This is that bookkeeping, once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from memlattice.core.pacing import detached_context


class DetachedTasks:
    """Tasks started detached from the caller, kept until they end."""

    def __init__(self) -> None:
        self._pending: set[asyncio.Task[None]] = set()

    def start(self, work: Coroutine[Any, Any, None], name: str | None = None) -> None:
        """Run `work` on the running loop, detached from the caller's pacing."""
        task = asyncio.get_running_loop().create_task(work, name=name,
                                                      context=detached_context())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def drain(self) -> None:
        """Wait until every task started so far, and any they started, has ended."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    async def cancel(self) -> None:
        """Cancel every task in progress and wait for them to end."""
        pending = list(self._pending)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
