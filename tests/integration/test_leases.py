"""Leases on the real Neo4j: of several processes asking at once exactly one holds a
job's lease; it renews, and another takes over only once it is released or lapsed."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from memlattice.core.model import utcnow
from memlattice.graph.leases import LeaseGraph
from memlattice.services.leases import Elected

TERM = timedelta(hours=1)


@pytest.fixture
async def lease(graph_client: Any) -> AsyncIterator[str]:
    name = f"test-{uuid.uuid4().hex[:12]}"
    yield name
    await graph_client.write(("MATCH (l:Lease {name: $name}) DELETE l", {"name": name}))


async def test_of_many_asking_at_once_exactly_one_holds_it(graph_client: Any,
                                                          lease: str) -> None:
    leases = LeaseGraph(graph_client)
    now = utcnow()
    held = await asyncio.gather(*(leases.take(lease, f"p{i}", now, TERM) for i in range(8)))
    assert sum(held) == 1
    holder = f"p{held.index(True)}"
    assert await leases.take(lease, holder, utcnow(), TERM)  # renewing
    assert not await leases.take(lease, "late", utcnow(), TERM)


async def test_a_lapsed_or_released_lease_passes_on(graph_client: Any, lease: str) -> None:
    leases = LeaseGraph(graph_client)
    now = utcnow()
    assert await leases.take(lease, "old", now, TERM)
    assert not await leases.take(lease, "new", now + TERM / 2, TERM)
    assert await leases.take(lease, "new", now + TERM * 2, TERM)  # the old term lapsed
    await leases.release(lease, "old")  # not the holder any more: changes nothing
    assert not await leases.take(lease, "third", utcnow(), TERM)
    await leases.release(lease, "new")
    assert await leases.take(lease, "third", utcnow(), TERM)


async def test_an_elected_job_runs_only_where_the_lease_is_held(graph_client: Any,
                                                                lease: str) -> None:
    ran: list[str] = []

    def job(name: str) -> Any:
        async def run() -> None:
            ran.append(name)
        return run

    first = Elected(LeaseGraph(graph_client), lease, job("first"), every_s=3600,
                    holder="first")
    second = Elected(LeaseGraph(graph_client), lease, job("second"), every_s=3600,
                     holder="second")
    assert await first.run_once() and not await second.run_once()
    assert await first.run_once()
    await first.stop()  # a clean shutdown hands the lease on at once
    assert await second.run_once()
    assert ran == ["first", "first", "second"]
