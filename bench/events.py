"""Live events across two service processes: lost, duplicated, out of order.

Two `memlattice serve` processes share one Neo4j (a private one unless
NEO4J_URI is set). Concurrent clients write `--writes` memories into one
namespace, alternating between the processes; three subscribers watch it: one
on each process, and one that starts on the first and, halfway through,
disconnects and resumes on the second with the cursor of the last event it
handled. Printed: writes/s, and for each subscriber the events received,
lost, duplicated, whether `seq` only ever increased, whether it saw the
events in the same order as the subscriber on A, and any `missed`.

    .venv/bin/python -m bench.events                     # 10,000 writes, 16 clients
    .venv/bin/python -m bench.events --writes 1000 --clients 4
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import uuid
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from httpx_ws import AsyncWebSocketSession, aconnect_ws

from bench._harness import PASSWORD
from tests._live import Neo4jAddress, private_neo4j, spawned_server

DIMENSION = 256
WRITE = "mutation($i: MemoryInput!) { writeMemory(input: $i) { id } }"
EVENTS = ("subscription($ns: String!, $after: String) { memoryEvents(namespace: $ns,"
          " after: $after) { seq cursor kind memoryId missed } }")
QUIET_S = 120  # a subscriber that hears nothing for this long has everything it will get


@dataclass
class Watcher:
    name: str
    ids: list[str] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)
    missed: int = 0
    reconnects: int = 0
    ready: asyncio.Event = field(default_factory=asyncio.Event)


async def _session(base: str, ns: str, after: str | None, watcher: Watcher,
                   stop_after: int) -> str | None:
    """Receive events until `stop_after` have arrived in all (then return the last
    cursor) or until quiet (None)."""
    cursor = after
    async with (httpx.AsyncClient(base_url=base, timeout=QUIET_S) as client,
                aconnect_ws(base + "/graphql", client,
                            subprotocols=["graphql-transport-ws"]) as ws):
        await _start(ws, ns, after)
        watcher.ready.set()
        while True:
            try:
                message = await ws.receive_json(timeout=QUIET_S)
            except TimeoutError:
                return None
            event = message["payload"]["data"]["memoryEvents"]
            watcher.missed += event["missed"]
            if event["kind"] == "SUBSCRIBED":
                continue
            watcher.ids.append(event["memoryId"])
            watcher.seqs.append(event["seq"])
            cursor = event["cursor"]
            if len(watcher.ids) >= stop_after:
                return cursor


async def _start(ws: AsyncWebSocketSession, ns: str, after: str | None) -> None:
    await ws.send_json({"type": "connection_init", "payload": {}})
    assert (await ws.receive_json(timeout=QUIET_S))["type"] == "connection_ack"
    await ws.send_json({"id": "1", "type": "subscribe", "payload": {
        "query": EVENTS, "variables": {"ns": ns, "after": after}}})


async def watch(bases: list[str], ns: str, watcher: Watcher, total: int,
                switch_at: int | None = None) -> None:
    """Watch until `total` events arrived (or quiet); at `switch_at`, resume on the other
    process from the last cursor."""
    cursor = await _session(bases[0], ns, None, watcher, switch_at or total)
    if cursor is not None and switch_at is not None:
        watcher.reconnects += 1
        await _session(bases[1], ns, cursor, watcher, total)


async def writers(bases: list[str], ns: str, writes: int, clients: int) -> list[str]:
    ids: list[str] = []
    counter = iter(range(writes))

    async def client(k: int) -> None:
        # Idle connections are dropped before uvicorn's 5 s keep-alive ends them: on a
        # busy machine a write can take that long, and a request sent on a connection
        # the server is closing fails (httpx.ReadError) without reaching it.
        limits = httpx.Limits(keepalive_expiry=2)
        async with (httpx.AsyncClient(base_url=bases[0], timeout=120, limits=limits) as a,
                    httpx.AsyncClient(base_url=bases[1], timeout=120, limits=limits) as b):
            for i in counter:
                http = (a, b)[(i + k) % 2]
                answer = (await http.post("/graphql", json={"query": WRITE, "variables": {
                    "i": {"namespace": ns, "content": f"event bench {i}",
                          "embedding": [1.0] + [0.0] * (DIMENSION - 1)}}})).json()
                if answer.get("errors"):
                    raise RuntimeError(answer["errors"])
                ids.append(answer["data"]["writeMemory"]["id"])

    await asyncio.gather(*(client(k) for k in range(clients)))
    return ids


def report(watcher: Watcher, written: list[str], reference: Watcher) -> None:
    counts = Counter(watcher.ids)
    lost = len(set(written) - counts.keys())
    duplicated = sum(n - 1 for n in counts.values() if n > 1)
    ordered = all(a < b for a, b in zip(watcher.seqs, watcher.seqs[1:]))
    same_order = watcher.ids == reference.ids
    print(f"{watcher.name:<28} received {len(watcher.ids):>6}  lost {lost:>5}"
          f"  duplicated {duplicated:>5}  seq increasing {ordered!s:<5}"
          f"  same order as A {same_order!s:<5}"
          f"  missed {watcher.missed}  reconnects {watcher.reconnects}")


async def run(bases: list[str], writes: int, clients: int) -> None:
    ns = f"bench/events-{uuid.uuid4().hex[:8]}"
    watchers = [Watcher("subscriber on A"), Watcher("subscriber on B"),
                Watcher("A, then resumed on B")]
    tasks = [asyncio.ensure_future(watch(bases, ns, watchers[0], writes)),
             asyncio.ensure_future(watch(bases[::-1], ns, watchers[1], writes)),
             asyncio.ensure_future(watch(bases, ns, watchers[2], writes, writes // 2))]
    for w in watchers:
        await w.ready.wait()
    started = time.monotonic()
    written = await writers(bases, ns, writes, clients)
    elapsed = time.monotonic() - started
    await asyncio.gather(*tasks)
    print(f"# {writes} writes through 2 processes, {clients} clients:"
          f" {writes / elapsed:.0f} writes/s")
    for w in watchers:
        report(w, written, watchers[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writes", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()
    with ExitStack() as stack:
        uri = os.environ.get("NEO4J_URI")
        neo4j = (Neo4jAddress(uri, os.environ.get("NEO4J_USER", "neo4j"),
                              os.environ.get("NEO4J_PASSWORD", PASSWORD)) if uri else
                 stack.enter_context(private_neo4j(PASSWORD, folder="bench-neo4j")))
        logs = Path(tempfile.mkdtemp(prefix="memlattice-bench-events-"))
        bases = [stack.enter_context(spawned_server(
            ["memlattice.cli", "serve", "--no-neo4j"], neo4j, logs / f"{name}.log",
            dimension=DIMENSION, env={"MEMLATTICE_LOG_LEVEL": "WARNING"},
            stop_grace_s=60)).base for name in ("a", "b")]
        asyncio.run(run(bases, args.writes, args.clients))


if __name__ == "__main__":
    main()
