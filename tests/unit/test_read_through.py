"""memlattice.core.read_through: one read per key at a time, never older than ttl_s.

The clock is the test's own (no sleeping), and each read waits on the test's
signal, so the order of events is the test's, however slow the machine is.
"""

from __future__ import annotations

import asyncio

import pytest

from memlattice.core.read_through import ReadThrough


class Source:
    """What the cache reads: counts reads and holds each until released."""

    def __init__(self) -> None:
        self.value = "v1"
        self.reads = 0
        self.gate = asyncio.Event()
        self.gate.set()
        self.fail: Exception | None = None

    async def load(self, key: str) -> str:
        """The value as of the read's start; answered once the gate opens."""
        self.reads += 1
        value = self.value
        await self.gate.wait()
        if self.fail is not None:
            raise self.fail
        return f"{key}:{value}"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def settled() -> None:
    """Let the tasks just created run up to where they wait (on the source's gate)."""
    for _ in range(5):
        await asyncio.sleep(0)


def cache_of(source: Source, clock: Clock) -> ReadThrough[str, str]:
    return ReadThrough(source.load, ttl_s=10, clock=clock)


async def test_concurrent_misses_share_one_read() -> None:
    source, clock = Source(), Clock()
    cache = cache_of(source, clock)
    source.gate.clear()
    waiting = [asyncio.create_task(cache.get("a")) for _ in range(5)]
    await settled()
    source.gate.set()
    assert await asyncio.gather(*waiting) == ["a:v1"] * 5
    assert source.reads == 1
    assert await cache.get("b") == "b:v1" and source.reads == 2


async def test_a_fresh_value_is_served_without_reading() -> None:
    source, clock = Source(), Clock()
    cache = cache_of(source, clock)
    await cache.get("a")
    source.value = "v2"
    clock.now += 4.9
    assert await cache.get("a") == "a:v1"
    assert source.reads == 1


async def test_past_half_life_one_caller_reads_while_others_are_served() -> None:
    source, clock = Source(), Clock()
    cache = cache_of(source, clock)
    await cache.get("a")
    source.value = "v2"
    clock.now += 6
    source.gate.clear()
    refreshing = asyncio.create_task(cache.get("a"))
    await settled()
    assert await cache.get("a") == "a:v1"  # still within ttl: not kept waiting
    source.gate.set()
    assert await refreshing == "a:v2"
    assert await cache.get("a") == "a:v2"
    assert source.reads == 2


async def test_never_served_older_than_ttl() -> None:
    source, clock = Source(), Clock()
    cache = cache_of(source, clock)
    await cache.get("a")
    source.value = "v2"
    clock.now += 10
    assert await cache.get("a") == "a:v2"


async def test_age_counts_from_when_the_read_began() -> None:
    source, clock = Source(), Clock()
    cache = cache_of(source, clock)
    source.gate.clear()
    first = asyncio.create_task(cache.get("a"))
    await settled()
    clock.now += 8  # a slow read
    source.gate.set()
    await first
    source.value = "v2"
    clock.now += 2.5  # 10.5 s after the read began, 2.5 s after it ended
    assert await cache.get("a") == "a:v2"


async def test_a_local_change_wins_over_a_read_in_flight() -> None:
    source, clock = Source(), Clock()
    cache = cache_of(source, clock)
    source.gate.clear()
    stale = asyncio.create_task(cache.get("a"))
    await settled()
    cache.put("a", "a:mine")
    source.gate.set()
    assert await stale == "a:v1"
    assert await cache.get("a") == "a:mine"


async def test_forget_makes_the_next_get_read_again() -> None:
    source, clock = Source(), Clock()
    cache = cache_of(source, clock)
    await cache.get("a")
    source.gate.clear()
    clock.now += 20
    before = asyncio.create_task(cache.get("a"))
    await settled()
    source.value = "v2"
    cache.forget("a")
    after = asyncio.create_task(cache.get("a"))
    await settled()
    source.gate.set()
    assert await before == "a:v1" and await after == "a:v2"
    assert await cache.get("a") == "a:v2"


async def test_a_failed_read_reaches_every_waiter_and_is_not_kept() -> None:
    source, clock = Source(), Clock()
    cache = cache_of(source, clock)
    source.gate.clear()
    source.fail = RuntimeError("neo4j away")
    waiting = [asyncio.create_task(cache.get("a")) for _ in range(3)]
    await settled()
    source.gate.set()
    outcomes = await asyncio.gather(*waiting, return_exceptions=True)
    assert all(isinstance(o, RuntimeError) for o in outcomes)
    assert source.reads == 1
    source.fail = None
    assert await cache.get("a") == "a:v1"


async def test_one_cancelled_caller_does_not_cancel_the_shared_read() -> None:
    source, clock = Source(), Clock()
    cache = cache_of(source, clock)
    source.gate.clear()
    cancelled = asyncio.create_task(cache.get("a"))
    other = asyncio.create_task(cache.get("a"))
    await settled()
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    source.gate.set()
    assert await other == "a:v1"
    assert source.reads == 1
