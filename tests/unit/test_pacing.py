"""Stage boundaries (memlattice.core.pacing) and running requests that give way at them
(memlattice.server.throttle), on a clock the test sets: no Neo4j, no sleeping for time.

Every wait here ends by a condition (a release, a budget of 0, an ended request); a
test that hangs is a bug, so each is run under a generous `asyncio.timeout` that only
turns a hang into a failure.
"""

from __future__ import annotations

import asyncio

from memlattice.core.auth import Principal, Scope, Sensitivity
from memlattice.core.fairness import KeyLimits, Limiter
from memlattice.core.gate import Gate
from memlattice.core.pacing import boundary, detached, detached_context, paced
from memlattice.core.read_through import ReadThrough
from memlattice.core.sharing import ProcessShare
from memlattice.server.throttle import Running, Turns

HANG_S = 60  # never reached unless something waits forever


def key(key_id: str) -> Principal:
    return Principal(key_id=key_id, name=key_id, namespaces=None, max_scope=Scope.AGENT,
                     clearance=Sensitivity.HYPER, can_write=True)


FLOOD, QUIET = key("flood"), key("quiet")


class Calls:
    """A pacer that counts its calls."""

    def __init__(self) -> None:
        self.count = 0

    async def __call__(self) -> None:
        self.count += 1


async def test_a_boundary_asks_the_operations_pacer_and_its_tasks_inherit_it() -> None:
    calls = Calls()
    await boundary()  # no operation: nothing to ask
    with paced(calls):
        await boundary()
        await asyncio.create_task(boundary())  # a task it starts works for it too
    await boundary()
    assert calls.count == 2


async def test_a_detached_task_waits_for_no_one_and_leaves_its_starter_paced() -> None:
    calls = Calls()

    async def shared() -> None:
        detached()
        await boundary()

    with paced(calls):
        await asyncio.create_task(shared())
        await boundary()
    assert calls.count == 1  # only the starter's own boundary


async def test_a_task_started_in_a_detached_context_waits_for_no_one() -> None:
    calls = Calls()
    with paced(calls):
        await asyncio.get_running_loop().create_task(boundary(), context=detached_context())
        await boundary()
    assert calls.count == 1


async def test_a_read_shared_by_callers_never_waits_on_behalf_of_the_first() -> None:
    """memlattice.core.read_through: the read runs for every caller that joins it; were it
    paced as its first caller's, a lighter caller waiting on it would wait for itself."""
    calls = Calls()

    async def load(name: str) -> str:
        await boundary()  # as graph.client's read does
        return name.upper()

    cache: ReadThrough[str, str] = ReadThrough(load, ttl_s=60)
    with paced(calls):
        assert await cache.get("space") == "SPACE"
    assert calls.count == 0


def crowded_turns(yield_s: float) -> tuple[Turns, ProcessShare]:
    """Turns of capacity 1 on a clock that stands still, with one operation each of a
    flooding key (charged 551) and a quiet one (charged 61) admitted."""
    share = ProcessShare(capacity=1, active_s=3600)
    gate = Gate(Limiter(KeyLimits(), share=share), clock=lambda: 0.0)
    turns = Turns(gate, wait_s=0, yield_s=yield_s)
    for principal, cost in ((FLOOD, 551), (QUIET, 61)):
        assert gate.admit(principal) is None
        assert gate.charge(principal, cost) is None
    return turns, share


async def test_a_heavier_keys_request_gives_way_until_the_lighter_ones_ends() -> None:
    turns, share = crowded_turns(yield_s=HANG_S * 10)
    async with asyncio.timeout(HANG_S):
        flood = Running(turns, FLOOD)
        waiting = asyncio.create_task(flood())
        while turns.yielding != 1:
            await asyncio.sleep(0)
        await Running(turns, QUIET)()  # the lighter key never waits
        assert not waiting.done()
        turns.release(QUIET)
        await waiting
    assert turns.yielding == 0 and share.total == 1
    assert 0 < flood.left < HANG_S * 10  # the wait came out of its budget


async def test_a_request_gives_way_for_at_most_its_budget() -> None:
    turns, _ = crowded_turns(yield_s=0.01)
    async with asyncio.timeout(HANG_S):
        spent = Running(turns, FLOOD)
        await spent()  # the quiet request never ends: the budget does
        assert spent.left <= 0
        await spent()  # and nothing is left of it for a later boundary
    assert turns.yielding == 0


async def test_no_budget_an_ended_request_or_a_key_alone_never_waits() -> None:
    async with asyncio.timeout(HANG_S):
        turns, _ = crowded_turns(yield_s=0)
        await Running(turns, FLOOD)()
        turns, _ = crowded_turns(yield_s=HANG_S * 10)
        ended = Running(turns, FLOOD)
        ended.ended = True  # a task it started that outlived it
        await ended()
        turns.release(QUIET)  # the flood alone now, however crowded
        await Running(turns, FLOOD)()
    assert turns.yielding == 0


async def test_a_request_cancelled_while_it_gives_way_leaves_nothing_behind() -> None:
    """A request's timeout cancels it wherever it waits: it answers TIMEOUT as any
    request past its budget, and the count of requests giving way comes back to 0."""
    turns, _ = crowded_turns(yield_s=HANG_S * 10)
    async with asyncio.timeout(HANG_S):
        waiting = asyncio.create_task(Running(turns, FLOOD)())
        while turns.yielding != 1:
            await asyncio.sleep(0)
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
    assert waiting.cancelled() and turns.yielding == 0
