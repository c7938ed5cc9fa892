"""Tasks a request starts that outlive it (memlattice.core.detached)."""

from __future__ import annotations

import asyncio

from memlattice.core.detached import DetachedTasks
from memlattice.core.pacing import boundary, paced

HANG_S = 60  # never reached unless something waits forever


class Calls:
    def __init__(self) -> None:
        self.count = 0

    async def __call__(self) -> None:
        self.count += 1


async def test_a_task_started_inside_a_paced_request_is_not_paced_for_it() -> None:
    calls, tasks = Calls(), DetachedTasks()
    with paced(calls):
        tasks.start(boundary(), name="detached-test")
    async with asyncio.timeout(HANG_S):
        await tasks.drain()
    assert calls.count == 0


async def test_drain_waits_for_tasks_started_by_tasks_and_survives_their_failures() -> None:
    tasks, done = DetachedTasks(), []

    async def second() -> None:
        await asyncio.sleep(0)
        done.append("second")

    async def first() -> None:
        tasks.start(second())
        raise RuntimeError("a failed task is kept from the drain")

    tasks.start(first())
    async with asyncio.timeout(HANG_S):
        await tasks.drain()
    assert done == ["second"]


async def test_cancel_ends_every_task_in_progress() -> None:
    tasks, started = DetachedTasks(), asyncio.Event()
    forever = asyncio.Event()

    async def waits() -> None:
        started.set()
        await forever.wait()

    tasks.start(waits())
    await started.wait()
    async with asyncio.timeout(HANG_S):
        await tasks.cancel()
        await tasks.drain()  # nothing left
