"""Load on loopback: N concurrent clients against a real `memlattice serve` process.

Each client loops over a mix of operations for `--duration` seconds:
55% `writeMemory`, 10% `writeMemories` (10 each), 25% hybrid `search`,
10% `memories` listing, in a handful of namespaces that fill up as it runs.
Printed: throughput, p50/p95/p99 per operation, errors by code, and the
server process's resident memory (after warm-up, peak, at the end).

    .venv/bin/python -m bench.load                         # 50 clients, 150 s
    .venv/bin/python -m bench.load --clients 20 --duration 60

The load generator shares the machine with the server and Neo4j, so the
figures are a floor, not a capacity.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections import Counter, defaultdict
from typing import Any

import httpx
import numpy as np
import psutil

from bench._harness import WORDS, percentile
from bench._server import served

DIMENSION = 256
WRITE = "mutation($i: MemoryInput!) { writeMemory(input: $i) { id } }"
WRITE_MANY = "mutation($is: [MemoryInput!]!) { writeMemories(inputs: $is) { id } }"
SEARCH = ("query($in: SearchInput!) { search(input: $in) { score memory { id content } } }")
LIST = ("query($f: MemoryFilterInput!) { memories(filter: $f, first: 20) { totalCount"
        " edges { node { id } } } }")
MIX = [("write", 55), ("write_batch", 10), ("search", 25), ("list", 10)]


def vector(rng: random.Random) -> list[float]:
    v = np.array([rng.gauss(0, 1) for _ in range(DIMENSION)], dtype=np.float32)
    return (v / np.linalg.norm(v)).tolist()  # type: ignore[no-any-return]


def memory(rng: random.Random, namespace: str) -> dict[str, Any]:
    return {"namespace": namespace, "content": " ".join(rng.choices(WORDS, k=12)),
            "tags": rng.sample(WORDS[:10], 2), "embedding": vector(rng)}


class Recorder:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: Counter[str] = Counter()
        self.measuring = False

    def record(self, op: str, seconds: float, error: str | None) -> None:
        if not self.measuring:
            return
        self.latency[op].append(seconds)
        if error:
            self.errors[f"{op}:{error}"] += 1


async def client(base: str, worker: int, stop: asyncio.Event, recorder: Recorder) -> None:
    rng = random.Random(worker)
    namespace = f"load/ns{worker % 5}"
    ops, weights = zip(*MIX, strict=True)
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        while not stop.is_set():
            op = rng.choices(ops, weights)[0]
            if op == "write":
                body: dict[str, Any] = {"query": WRITE, "variables": {"i": memory(rng, namespace)}}
            elif op == "write_batch":
                body = {"query": WRITE_MANY,
                        "variables": {"is": [memory(rng, namespace) for _ in range(10)]}}
            elif op == "search":
                body = {"query": SEARCH, "variables": {"in": {
                    "filter": {"namespace": namespace}, "vector": vector(rng),
                    "query": " ".join(rng.choices(WORDS, k=3)), "limit": 10}}}
            else:
                body = {"query": LIST, "variables": {"f": {"namespace": namespace}}}
            started = time.perf_counter()
            error: str | None = None
            try:
                response = await http.post("/graphql", json=body)
                if response.status_code != 200:
                    error = f"HTTP {response.status_code}"
                else:
                    errors = response.json().get("errors")
                    if errors:
                        error = str((errors[0].get("extensions") or {}).get("code"))
            except httpx.HTTPError as exc:
                error = type(exc).__name__
            recorder.record(op, time.perf_counter() - started, error)


async def run(base: str, pid: int, *, clients: int, duration: float, warmup: float) -> None:
    process = psutil.Process(pid)
    recorder = Recorder()
    stop = asyncio.Event()
    tasks = [asyncio.create_task(client(base, w, stop, recorder)) for w in range(clients)]
    await asyncio.sleep(warmup)
    recorder.measuring = True
    rss_start = process.memory_info().rss
    samples = [rss_start]
    started = time.monotonic()
    while time.monotonic() - started < duration:
        await asyncio.sleep(5)
        samples.append(process.memory_info().rss)
    recorder.measuring = False
    elapsed = time.monotonic() - started
    stop.set()
    await asyncio.gather(*tasks)
    total = sum(len(v) for v in recorder.latency.values())
    print(f"# {clients} clients, {elapsed:.0f}s measured after {warmup:.0f}s warm-up")
    print(f"# throughput: {total / elapsed:.1f} operations/s ({total} operations)")
    print(f"{'operation':<12} {'n':>7} {'ops/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}")
    for op, _ in MIX:
        values = recorder.latency.get(op, [])
        print(f"{op:<12} {len(values):>7} {len(values) / elapsed:>7.1f}"
              f" {percentile(values, 50) * 1000:>8.1f} {percentile(values, 95) * 1000:>8.1f}"
              f" {percentile(values, 99) * 1000:>8.1f}")
    print(f"# errors: {dict(recorder.errors) or 'none'}")
    mib = 1024 * 1024
    print(f"# server RSS: {rss_start / mib:.0f} MiB after warm-up, peak {max(samples) / mib:.0f}"
          f" MiB, end {samples[-1] / mib:.0f} MiB (growth {(samples[-1] - rss_start) / mib:+.0f}"
          f" MiB over {elapsed:.0f}s)")
    step = max(1, len(samples) // 10)
    print("# RSS series (MiB): " + " ".join(f"{s / mib:.0f}" for s in samples[::step]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--duration", type=float, default=150.0, help="measured seconds")
    parser.add_argument("--warmup", type=float, default=15.0)
    args = parser.parse_args()
    with served() as server:
        asyncio.run(run(server.base, server.process.pid, clients=args.clients,
                        duration=args.duration, warmup=args.warmup))


if __name__ == "__main__":
    main()
