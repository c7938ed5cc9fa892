"""What logging events in commit order would cost writes (issue 17, item 2's order).

Today a change commits in its own transaction and its events are appended to
the namespace's log right after, by one group-committing task per process
(memlattice.services.shared_events): two concurrent changes are logged in the
order their appends commit, which may differ from the order the changes
committed. The only way Neo4j offers to make the log's order the commit order
is to append inside the change's own transaction, holding the namespace's
counter lock from the append until commit, so that the writes of one
namespace commit one at a time.

This measures both with the driver alone, on one namespace, with the log's own
append statement (graph.event_log.append_events) and a write of a memory's
size (a 256-d vector and a ~1 KB event payload):

- `after`: the write commits, then joins the next group append and waits for
  it (as `announce` does);
- `inside`: the write and its append in one transaction, the append last.

Printed per mode and concurrency: writes/s, p50 and p95 of a write. Everything
it stores is deleted afterwards.

    .venv/bin/python -m bench.commit_order                  # 2,000 writes per run
    .venv/bin/python -m bench.commit_order --writes 500 --clients 1 8
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable

from neo4j import AsyncDriver, AsyncGraphDatabase, AsyncManagedTransaction

from bench._harness import PASSWORD
from memlattice.core.model import utcnow
from memlattice.graph.event_log import append_events

CREATE = ("CREATE (m:BenchOrderItem {namespace: $ns, i: $i, content: $content,"
          " embedding: $embedding, at: datetime()})")
PAYLOAD = json.dumps({"kind": "WRITTEN", "memory": {"content": "x" * 900}})
VECTOR = [0.5] * 256

Write = Callable[[int], Awaitable[None]]


class GroupAppender:
    """One task per process appends what the writes of the moment queued, in one
    transaction, and lets each of them go on (shared_events' outbox, reduced)."""

    def __init__(self, driver: AsyncDriver, ns: str) -> None:
        self.driver, self.ns = driver, ns
        self.queue: list[asyncio.Future[None]] = []
        self.pending = asyncio.Event()
        self.task = asyncio.ensure_future(self.loop())

    async def announce(self) -> None:
        done = asyncio.get_running_loop().create_future()
        self.queue.append(done)
        self.pending.set()
        await done

    async def loop(self) -> None:
        while True:
            await self.pending.wait()
            self.pending.clear()
            batch, self.queue = self.queue, []
            if batch:
                text, params = append_events(namespace=self.ns, now=utcnow(), rows=[
                    {"payload": PAYLOAD, "memoryIds": [str(i)]} for i in range(len(batch))])
                await self.driver.execute_query(text, params)
            for done in batch:
                done.set_result(None)


def after_mode(driver: AsyncDriver, ns: str, appender: GroupAppender) -> Write:
    async def write(i: int) -> None:
        await driver.execute_query(CREATE, {"ns": ns, "i": i, "content": f"item {i}",
                                            "embedding": VECTOR})
        await appender.announce()

    return write


def inside_mode(driver: AsyncDriver, ns: str) -> Write:
    async def work(tx: AsyncManagedTransaction, i: int) -> None:
        await (await tx.run(CREATE, {"ns": ns, "i": i, "content": f"item {i}",
                                     "embedding": VECTOR})).consume()
        text, params = append_events(namespace=ns, now=utcnow(), rows=[
            {"payload": PAYLOAD, "memoryIds": [str(i)]}])
        await (await tx.run(text, params)).consume()

    async def write(i: int) -> None:
        async with driver.session() as session:
            await session.execute_write(work, i)

    return write


async def measure(write: Write, writes: int, clients: int) -> tuple[float, float, float]:
    """writes/s, p50 and p95 (ms) of `writes` writes by `clients` concurrent clients."""
    numbers = iter(range(writes))
    latencies: list[float] = []

    async def client() -> None:
        for i in numbers:
            started = time.perf_counter()
            await write(i)
            latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    elapsed = time.perf_counter() - started
    cuts = statistics.quantiles(latencies, n=20)
    return writes / elapsed, cuts[9] * 1000, cuts[18] * 1000


async def clean(driver: AsyncDriver, prefix: str) -> None:
    """Delete what the runs stored (an auto-commit query: IN TRANSACTIONS needs one)."""
    async with driver.session() as session:
        for label in ("BenchOrderItem", "Event", "EventCounter"):
            await (await session.run(
                f"MATCH (n:{label}) WHERE n.namespace STARTS WITH $prefix"
                " CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS",
                {"prefix": prefix})).consume()


async def run(uri: str, user: str, password: str, writes: int, clients: list[int]) -> None:
    driver = AsyncGraphDatabase.driver(uri, auth=(user, password))
    prefix = f"bench/order-{uuid.uuid4().hex[:8]}"
    try:
        print(f"# {writes} writes into one namespace per run; ms per write")
        print(f"{'mode':<8} {'clients':>7} {'writes/s':>9} {'p50':>7} {'p95':>7}")
        for n in clients:
            results = {}
            for mode in ("after", "inside"):
                ns = f"{prefix}/{mode}-{n}"
                appender = GroupAppender(driver, ns) if mode == "after" else None
                write = (after_mode(driver, ns, appender) if appender is not None
                         else inside_mode(driver, ns))
                results[mode] = await measure(write, writes, n)
                if appender is not None:
                    appender.task.cancel()
                rate, p50, p95 = results[mode]
                print(f"{mode:<8} {n:>7} {rate:>9.0f} {p50:>7.1f} {p95:>7.1f}", flush=True)
            print(f"# {n} clients: inside/after throughput"
                  f" {results['inside'][0] / results['after'][0]:.2f}")
    finally:
        await clean(driver, prefix)
        await driver.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    args = parser.parse_args()
    uri = os.environ.get("NEO4J_URI")
    if not uri:
        raise SystemExit("set NEO4J_URI (NEO4J_USER, NEO4J_PASSWORD) to a Neo4j to measure on")
    asyncio.run(run(uri, os.environ.get("NEO4J_USER", "neo4j"),
                    os.environ.get("NEO4J_PASSWORD", PASSWORD), args.writes, args.clients))


if __name__ == "__main__":
    main()
