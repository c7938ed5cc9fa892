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


async def test_stop_lets_a_step_in_progress_finish_and_starts_no_new_one() -> None:
    # A step is one unit of work (a database call): cancelled midway, the Neo4j
    # driver can leave a socket it was opening unclosed, so stop lets it end.
    entered, finished, steps = asyncio.Event(), [], []

    async def work(n: int) -> int:
        entered.set()
        await asyncio.sleep(0.05)
        finished.append(n)
        return n

    async def loop() -> None:
        n = 0
        while True:
            n += 1
            steps.append(await task.step(work(n)))

    task = BackgroundTask("test-steps", loop)
    task.start()
    await entered.wait()
    await task.stop()
    # The step in progress finished; the one the loop asked for next never ran.
    assert finished == [1] and steps == [1]
    assert not task.running


async def test_a_step_that_outlasts_the_grace_is_cancelled() -> None:
    cancelled = []

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(1)
            raise

    async def loop() -> None:
        await task.step(forever())

    task = BackgroundTask("test-grace", loop, grace_s=0.05)
    task.start()
    await asyncio.sleep(0.01)
    await task.stop()
    assert cancelled == [1] and not task.running
