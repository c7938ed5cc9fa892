"""memlattice.core.background: one start/stop for the service's loops."""

from __future__ import annotations

import asyncio

from memlattice.core.background import BackgroundTask


async def test_start_runs_once_and_stop_waits_for_the_end() -> None:
    started, ended = [], []

    async def loop() -> None:
        started.append(1)
        try:
            await asyncio.Event().wait()
        finally:
            ended.append(1)

    task = BackgroundTask("test-loop", loop)
    task.start()
    task.start()  # a second start is a no-op
    await asyncio.sleep(0)
    assert task.running and started == [1]
    await task.stop()
    assert not task.running and ended == [1]
    await task.stop()  # stopping twice is harmless


async def test_a_loop_that_ended_by_itself_stops_cleanly() -> None:
    async def once() -> None:
        return None

    task = BackgroundTask("test-once", once)
    task.start()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert not task.running
    await task.stop()
