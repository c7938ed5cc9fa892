"""A job that runs in one process of many: elected by a lease in Neo4j (graph.leases).

`Elected` wraps a periodic job: every `every_s` each process tries to take (or
renew) the lease and runs the job only when it holds it. The term (by default
one and a half periods) outlasts a period, so the holder keeps it while it lives, and when it dies another
process takes over once the term has lapsed. A job run under a lease must
still be safe to repeat (a holder that stalls past its term can overlap its
successor once); the lease only keeps N processes from doing the work N times.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta

from memlattice.core.background import BackgroundTask
from memlattice.core.errors import MemlatticeError
from memlattice.core.model import utcnow
from memlattice.graph.leases import LeaseGraph

log = logging.getLogger(__name__)

PROCESS_ID = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
"""This process among all that share the database (host, pid, and a random part)."""


class Elected:
    def __init__(self, leases: LeaseGraph, name: str, job: Callable[[], Awaitable[None]], *,
                 every_s: float, term_s: float | None = None,
                 holder: str = PROCESS_ID) -> None:
        self.leases = leases
        self.name = name
        self.job = job
        self.every_s = every_s
        self.term = timedelta(seconds=term_s if term_s is not None else 1.5 * every_s)
        self.holder = holder
        self.holding = False
        self._loop = BackgroundTask(f"memlattice-elected-{name}", self._run)

    def start(self) -> None:
        self._loop.start()

    async def stop(self) -> None:
        await self._loop.stop()
        if self.holding:
            self.holding = False
            try:
                await self.leases.release(self.name, self.holder)
            except MemlatticeError as exc:
                log.warning("could not release the %s lease: %s", self.name, exc.code)

    async def run_once(self) -> bool:
        """Take or renew the lease and, when held, run the job; True when it ran."""
        self.holding = await self.leases.take(self.name, self.holder, utcnow(), self.term)
        if self.holding:
            await self.job()
        return self.holding

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.every_s)
            try:
                await self._loop.step(self.run_once())
            except MemlatticeError as exc:
                log.warning("%s did not run: %s", self.name, exc.code)
            except Exception:  # the schedule outlives one failed run
                log.exception("%s failed", self.name)
