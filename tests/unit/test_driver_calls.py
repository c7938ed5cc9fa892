"""memlattice.graph.driver_calls: a driver call runs in a task of its own, cancelled with
its caller except during a connect (that case, with the real driver, is
tests/unit/test_cancelled_connect.py)."""

from __future__ import annotations

import asyncio

import pytest

from memlattice.core.errors import Unavailable
from memlattice.graph.driver_calls import DriverCalls

CAP_S = 120.0


class Waiting:
    """A call that waits as a query waits for Neo4j's reply, and says when it started
    and when it ended."""

    def __init__(self) -> None:
        self.started, self.ended = asyncio.Event(), asyncio.Event()

    async def call(self) -> None:
        self.started.set()
        try:
            await asyncio.Event().wait()
        finally:
            self.ended.set()


async def test_a_call_cancelled_elsewhere_is_cancelled_with_its_caller() -> None:
    calls = DriverCalls()
    query = Waiting()
    caller = asyncio.ensure_future(calls.run(query.call()))
    await query.started.wait()
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    await asyncio.wait_for(query.ended.wait(), CAP_S)
    await asyncio.wait_for(calls.settle(), CAP_S)
    assert calls.abandoned == 0


async def test_a_call_finished_is_its_result_or_its_error() -> None:
    calls = DriverCalls()

    async def answer() -> int:
        return 42

    async def failure() -> None:
        raise LookupError("no such thing")

    assert await calls.run(answer()) == 42
    with pytest.raises(LookupError):
        await calls.run(failure())
    assert calls.abandoned == 0


async def test_closing_gives_up_on_calls_nobody_awaits_any_more() -> None:
    calls = DriverCalls()
    read = Waiting()  # a read-through's read, its callers gone
    reader = asyncio.ensure_future(calls.run(read.call()))
    await read.started.wait()
    await asyncio.wait_for(calls.close(), CAP_S)
    assert read.ended.is_set() and calls.abandoned == 0
    with pytest.raises(asyncio.CancelledError):
        await reader


async def test_a_call_started_while_closing_is_refused_and_never_runs() -> None:
    calls = DriverCalls()
    query = Waiting()
    caller = asyncio.ensure_future(calls.run(query.call()))
    await query.started.wait()
    closing = asyncio.ensure_future(calls.close())
    await asyncio.sleep(0)  # close begins: it gives up on the running call and waits
    late = Waiting()
    with pytest.raises(Unavailable):
        await calls.run(late.call())
    assert not late.started.is_set()
    await asyncio.wait_for(closing, CAP_S)
    assert query.ended.is_set()
    with pytest.raises(asyncio.CancelledError):
        await caller
