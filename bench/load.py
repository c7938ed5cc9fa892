"""Load on loopback: N concurrent clients against a real `memlattice serve` process,
beside a bare baseline of driver clients sending the service's own Cypher.

Two mixes, each measured for both paths in the same run:
  - search: hybrid `search` only (vector + query text), over preloaded memories;
  - mixed:  55% `writeMemory`, 10% `writeMemories` (10 each), 25% hybrid
            `search`, 10% `memories` listing.
Every request comes from a pool built before measuring (a few dozen per
operation and namespace). For each request of the pool, the queries the
service sends are captured (bench._bare) and become its bare replay: N
driver clients (one driver, pool as large as N) pick requests the same way
and send those queries directly. The two paths alternate service, bare, bare,
service so that growth of the data during the mixed mix favours neither.

Both mixes run at each number of service processes (`--processes 1,2`: one
`memlattice serve`, then `serve --workers 2`, on the same data; the bare
baseline is measured again beside each, since the mixed mix grows the data).
Printed per mix and process count: operations/s and p50/p95/p99 for the
service and the bare baseline, their ratios, per operation for the mixed mix,
errors by code, the CPU each path's operations cost the server, Neo4j and
this load generator (the bare path's driver clients), and the server
processes' resident memory; at the end one summary line per process count
and mix. The CPU lines tell where a ratio comes from: one server process
runs its Python on one core, so its CPU per search bounds its throughput,
whatever Neo4j could give.

    .venv/bin/python -m bench.load                         # 32 clients, 60 s per path
    .venv/bin/python -m bench.load --clients 8 --duration 20 --warmup 5 --preload 2000
    .venv/bin/python -m bench.load --processes 2 --mixes search

Before a mix is first measured, both paths run in turn, unmeasured, for
`--jit-warmup` seconds (60): on a fresh Neo4j the JVM's JIT compiler is still
compiling Neo4j's hot paths for the first minute or so of load, and with a
few seconds of warm-up that cost fell mostly on the service's rounds (by Java
Flight Recorder, the compiler threads took 33% and 22% of Neo4j's thread CPU
in the two service rounds, 10% in a bare one; docs/benchmarks.md).

The load generator shares the machine with the server and Neo4j (and, for the
bare baseline, plays Neo4j's only client), so the figures are floors, not
capacities; the ratio of one run is the figure to compare.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import random
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np
import psutil

from bench._bare import Sent, capturer, replay
from bench._harness import WORDS, percentile
from bench._http import HTTPProtocolError, KeepAliveConnection
from bench._server import bench_neo4j, served_on
from memlattice.graph.client import GraphClient
from tests._live import Neo4jAddress

DIMENSION = 256
NAMESPACES = 5
WRITE = "mutation($i: MemoryInput!) { writeMemory(input: $i) { id } }"
WRITE_MANY = "mutation($is: [MemoryInput!]!) { writeMemories(inputs: $is) { id } }"
SEARCH = ("query($in: SearchInput!) { search(input: $in) { score memory { id content } } }")
LIST = ("query($f: MemoryFilterInput!) { memories(filter: $f, first: 20) { totalCount"
        " edges { node { id } } } }")
MIXES = {
    "search": [("search", 1)],
    "mixed": [("write", 55), ("write_batch", 10), ("search", 25), ("list", 10)],
}
POOL = {"write": 12, "write_batch": 6, "search": 24, "list": 1}  # requests per namespace
WRITES = {"write", "write_batch"}


def vector(rng: random.Random) -> list[float]:
    v = np.array([rng.gauss(0, 1) for _ in range(DIMENSION)], dtype=np.float32)
    return (v / np.linalg.norm(v)).tolist()  # type: ignore[no-any-return]


def memory(rng: random.Random, namespace: str) -> dict[str, Any]:
    return {"namespace": namespace, "content": " ".join(rng.choices(WORDS, k=12)),
            "tags": rng.sample(WORDS[:10], 2), "embedding": vector(rng)}


def body(op: str, rng: random.Random, namespace: str) -> dict[str, Any]:
    if op == "write":
        return {"query": WRITE, "variables": {"i": memory(rng, namespace)}}
    if op == "write_batch":
        return {"query": WRITE_MANY,
                "variables": {"is": [memory(rng, namespace) for _ in range(10)]}}
    if op == "search":
        return {"query": SEARCH, "variables": {"in": {
            "filter": {"namespace": namespace}, "embedding": vector(rng),
            "query": " ".join(rng.choices(WORDS, k=3)), "limit": 10}}}
    return {"query": LIST, "variables": {"f": {"namespace": namespace}}}


_serials = itertools.count()
# Where a write's encoded body takes each send's serial (see `distinct`, `Request`).
SERIAL = "@serial@"


def distinct(body: dict[str, Any], serial: int | str) -> dict[str, Any]:
    """A write's body with contents no other send has: the service stores the same
    content once (a repeat reinforces it), so repeating a pooled write would measure
    reinforcement, not the write. Searches and listings pass unchanged."""
    variables = body["variables"]
    if "i" in variables:
        return {**body, "variables": {"i": _suffixed(variables["i"], serial, 0)}}
    if "is" in variables:
        return {**body, "variables": {"is": [_suffixed(m, serial, n)
                                             for n, m in enumerate(variables["is"])]}}
    return body


def _suffixed(memory: dict[str, Any], serial: int | str, index: int) -> dict[str, Any]:
    return {**memory, "content": f"{memory['content']} w{serial}x{index}"}


@dataclass
class Request:
    """One pooled request: its body, encoded once (a write's with SERIAL where each send
    puts its own number), and the queries it made the service send."""

    body: dict[str, Any]
    capture: list[Sent]
    write: bool = False
    encoded: bytes = field(init=False)

    def __post_init__(self) -> None:
        # Encoded here, not per send: the load generator shares the two cores with the
        # server and Neo4j, and JSON-encoding a vector per request would be charged to
        # the service's side of the comparison only.
        self.encoded = json.dumps(distinct(self.body, SERIAL) if self.write
                                  else self.body).encode()

    def content(self) -> bytes:
        if not self.write:
            return self.encoded
        return self.encoded.replace(SERIAL.encode(), str(next(_serials)).encode())


@dataclass
class Recorder:
    latency: dict[tuple[str, str], list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter[str] = field(default_factory=Counter)
    seconds: Counter[str] = field(default_factory=Counter)
    # CPU seconds spent during the measured rounds, per (path, process): where each
    # path's operations cost the two cores (the server, Neo4j, this load generator).
    cpu: Counter[tuple[str, str]] = field(default_factory=Counter)
    measuring: bool = False

    def record(self, path: str, op: str, seconds: float, error: str | None) -> None:
        if not self.measuring:
            return
        self.latency[(path, op)].append(seconds)
        if error:
            self.errors[f"{path}:{op}:{error}"] += 1


Send = Callable[[str, Request], Awaitable[str | None]]


async def service_send(connection: KeepAliveConnection, request: Request) -> str | None:
    try:
        status, answer = await connection.post("/graphql", request.content())
    except (OSError, asyncio.IncompleteReadError, HTTPProtocolError) as exc:
        return type(exc).__name__
    if status != 200:
        return f"HTTP {status}"
    if b'"errors"' not in answer:
        return None
    errors = json.loads(answer).get("errors")
    return str((errors[0].get("extensions") or {}).get("code")) if errors else None


async def worker(index: int, path: str, mix: list[tuple[str, int]],
                 pool: dict[str, list[list[Request]]], send: Send,
                 stop: asyncio.Event, recorder: Recorder) -> None:
    rng = random.Random(index)
    requests = [pool[op][index % NAMESPACES] for op, _ in mix]
    weights = [w for _, w in mix]
    while not stop.is_set():
        (op, _), choices = rng.choices(list(zip(mix, requests, strict=True)), weights)[0]
        request = rng.choice(choices)
        started = time.perf_counter()
        error = await send(op, request)
        recorder.record(path, op, time.perf_counter() - started, error)


async def round_of(path: str, mix: list[tuple[str, int]], pool: dict[str, list[list[Request]]],
                   *, connections: list[KeepAliveConnection], bare: GraphClient, clients: int,
                   seconds: float, recorder: Recorder, measured: bool,
                   processes: Processes) -> None:
    stop = asyncio.Event()

    async def send_bare(op: str, request: Request) -> str | None:
        try:
            await replay(bare.driver, bare.database, request.capture, fresh_ids=op in WRITES)
        except Exception as exc:  # noqa: BLE001 - counted, like the service's codes
            return type(exc).__name__
        return None

    def send_service(i: int) -> Send:
        return lambda op, request: service_send(connections[i], request)

    tasks = [asyncio.create_task(worker(i, path, mix, pool,
                                        send_bare if path == "bare" else send_service(i),
                                        stop, recorder))
             for i in range(clients)]
    recorder.measuring = measured
    before = processes.cpu()
    await asyncio.sleep(seconds)
    recorder.measuring = False
    if measured:
        recorder.seconds[path] += seconds
        for who, spent in processes.cpu().items():
            recorder.cpu[(path, who)] += spent - before[who]
    stop.set()
    await asyncio.gather(*tasks)


async def build_pool(served_base: str, uri: str, password: str,
                     preload: int) -> dict[str, list[list[Request]]]:
    """Preload the run's own namespaces (fresh ones, so that runs against a shared Neo4j
    do not search each other's leftovers) and capture every request of the pool."""
    rng = random.Random(2024)
    run = uuid.uuid4().hex[:8]
    namespaces = [f"load-{run}/ns{i}" for i in range(NAMESPACES)]
    async with httpx.AsyncClient(base_url=served_base, timeout=300) as http:
        per_namespace = preload // NAMESPACES
        for namespace in namespaces:
            for start in range(0, per_namespace, 100):
                batch = [memory(rng, namespace) for _ in range(min(100, per_namespace - start))]
                answer = (await http.post("/graphql", json={
                    "query": WRITE_MANY, "variables": {"is": batch}})).json()
                assert not answer.get("errors"), answer["errors"][0]
    pool: dict[str, list[list[Request]]] = {}
    async with capturer(uri, password, DIMENSION) as capture:
        for op, size in POOL.items():
            pool[op] = []
            for namespace in namespaces:
                bodies = [body(op, rng, namespace) for _ in range(size)]
                pool[op].append([Request(b, await capture.capture(
                    b, renew=(lambda b, _: distinct(b, next(_serials))) if op in WRITES
                    else None), write=op in WRITES) for b in bodies])
    for op, lists in pool.items():
        counts = sorted({len(r.capture) for rs in lists for r in rs})
        print(f"# {op}: {sum(len(rs) for rs in lists)} requests in the pool,"
              f" {'/'.join(map(str, counts))} queries each")
    return pool


@dataclass(frozen=True)
class Summary:
    """One mix at one process count: what the closing table prints."""

    processes: int
    mix: str
    service: list[float]
    bare: list[float]
    service_s: float
    bare_s: float

    def line(self) -> str:
        service_rate, bare_rate = len(self.service) / self.service_s, len(self.bare) / self.bare_s
        ratio = service_rate / bare_rate if bare_rate else float("nan")
        return (f"{self.processes:>9} {self.mix:<7} {service_rate:>8.1f} {bare_rate:>8.1f}"
                f" {ratio:>6.2f} {_percentiles(self.service):>20} {_percentiles(self.bare):>20}"
                f" {_spread(self.service):>8.1f}")


def _percentiles(values: list[float]) -> str:
    return " / ".join(f"{percentile(values, q) * 1000:.0f}" for q in (50, 95, 99))


def _spread(values: list[float]) -> float:
    """p99 / p50: the tail the issue bounds (at most 5)."""
    return percentile(values, 99) / percentile(values, 50)


def report(name: str, mix: list[tuple[str, int]], recorder: Recorder, clients: int,
           processes: int) -> Summary:
    print(f"\n## {name} mix, {clients} clients, {processes} service process"
          f"{'es' if processes > 1 else ''}, {recorder.seconds['service']:.0f}s measured per path")
    print(f"{'operation':<12} {'path':<8} {'n':>7} {'ops/s':>8} {'p50 ms':>8} {'p95 ms':>8}"
          f" {'p99 ms':>8}")
    totals: dict[str, list[float]] = defaultdict(list)
    for op, _ in mix + ([("all", 0)] if len(mix) > 1 else []):
        for path in ("service", "bare"):
            values = (totals[path] if op == "all" else recorder.latency.get((path, op), []))
            if op != "all":
                totals[path].extend(values)
            seconds = recorder.seconds[path] or float("nan")
            print(f"{op:<12} {path:<8} {len(values):>7} {len(values) / seconds:>8.1f}"
                  f" {percentile(values, 50) * 1000:>8.1f} {percentile(values, 95) * 1000:>8.1f}"
                  f" {percentile(values, 99) * 1000:>8.1f}")
    service, bare = totals["service"], totals["bare"]
    throughput = (len(service) / recorder.seconds["service"]) / (
        len(bare) / recorder.seconds["bare"]) if bare else float("nan")
    print(f"# service / bare: throughput {throughput:.2f}x, p50 "
          f"{percentile(service, 50) / percentile(bare, 50):.2f}x, p99 "
          f"{percentile(service, 99) / percentile(bare, 99):.2f}x;"
          f" service p99/p50 {_spread(service):.1f}")
    print(f"# errors: {dict(recorder.errors) or 'none'}")
    for path, done in (("service", service), ("bare", bare)):
        if done:
            spent = ", ".join(f"{who} {recorder.cpu[(path, who)] / len(done) * 1000:.1f}"
                              for who in ("server", "neo4j", "generator"))
            print(f"# CPU ms per operation, {path} path: {spent}")
    if service and recorder.cpu[("service", "server")] > 0:
        per_op = recorder.cpu[("service", "server")] / len(service)
        # A server process runs its Python on one core at a time (the GIL).
        print(f"# at that CPU per operation, each server process can serve at most"
              f" {1 / per_op:.0f} ops/s")
    return Summary(processes, name, service, bare, recorder.seconds["service"],
                   recorder.seconds["bare"])


@dataclass(frozen=True)
class Processes:
    """The processes whose CPU a round is charged: the server (with its workers), the
    Neo4j server, and this load generator (the bare path's driver clients)."""

    server: int
    neo4j: int | None

    def cpu(self) -> dict[str, float]:
        return {"server": _tree_cpu(self.server),
                "neo4j": _tree_cpu(self.neo4j) if self.neo4j is not None else 0.0,
                "generator": time.process_time()}


def _tree(pid: int) -> list[psutil.Process]:
    """A process and its live children (a server's workers), or none once it is gone."""
    with contextlib.suppress(psutil.Error):
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    return []


def _tree_cpu(pid: int) -> float:
    """User and system CPU seconds of a process and its live children."""
    total = 0.0
    for process in _tree(pid):
        with contextlib.suppress(psutil.Error):
            times = process.cpu_times()
            total += times.user + times.system
    return total


def listening_pid(port: int) -> int | None:
    """The process listening on a local TCP port (Neo4j's Bolt port), if it can be told."""
    with contextlib.suppress(psutil.Error):
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port:
                return conn.pid
    return None


def resident(pid: int) -> int:
    """Resident bytes of the server: its process and, with --workers, every worker."""
    total = 0
    for process in _tree(pid):
        with contextlib.suppress(psutil.Error):
            total += process.memory_info().rss
    return total


def wait_for_workers(pid: int, workers: int, neo4j_port: int, timeout_s: float = 300) -> None:
    """With --workers, /readyz answers once the first worker is up: wait until every
    worker holds a connection to Neo4j (its lifespan has opened the runtime), so that
    none is still starting when the measurement begins."""
    deadline = time.monotonic() + timeout_s
    while True:
        connected = 0
        for child in psutil.Process(pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if any(c.raddr and c.raddr.port == neo4j_port
                       for c in child.net_connections(kind="tcp")):
                    connected += 1
        if connected >= workers:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{connected} of {workers} workers connected to Neo4j")
        time.sleep(0.5)


async def run(served_base: str, pid: int, neo4j: Neo4jAddress,
              pool: dict[str, list[list[Request]]], *, clients: int, duration: float,
              warmup: float, mixes: list[str], processes: int, jit_warmup: float = 0.0,
              warmed: set[str] | None = None) -> list[Summary]:
    """Each mix's rounds, warmed up first; a mix not yet in `warmed` (measured at
    an earlier process count) first runs `jit_warmup` unmeasured seconds, both
    paths in turn (see `main`'s `--jit-warmup`)."""
    warmed = set() if warmed is None else warmed
    bare = GraphClient.connect(neo4j.uri, neo4j.user, neo4j.password, "neo4j",
                               pool_size=max(64, clients), acquisition_timeout_s=60)
    # A connection per simulated client, kept alive across rounds (bench._http).
    connections = [KeepAliveConnection(served_base) for _ in range(clients)]
    mib = 1024 * 1024
    rss = [resident(pid)]
    measured_processes = Processes(pid, listening_pid(urlsplit(neo4j.uri).port or 7687))
    summaries: list[Summary] = []
    try:
        for name in mixes:
            mix = MIXES[name]
            recorder = Recorder()
            jit = ([(path, jit_warmup / 4, False) for path in ("service", "bare") * 2]
                   if name not in warmed and jit_warmup > 0 else [])
            warmed.add(name)
            rounds = jit + [(path, warmup, False) for path in ("service", "bare")] + [
                (path, duration / 2, True) for path in ("service", "bare", "bare", "service")]
            for path, seconds, measured in rounds:
                await round_of(path, mix, pool, connections=connections, bare=bare,
                               clients=clients, seconds=seconds, recorder=recorder,
                               measured=measured, processes=measured_processes)
                rss.append(resident(pid))
            summaries.append(report(name, mix, recorder, clients, processes))
    finally:
        await bare.close()
        for connection in connections:
            connection.close()
    print(f"# server RSS ({processes} process{'es' if processes > 1 else ''}): "
          f"{rss[0] / mib:.0f} MiB at start, peak {max(rss) / mib:.0f} MiB,"
          f" end {rss[-1] / mib:.0f} MiB")
    return summaries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--duration", type=float, default=60.0,
                        help="measured seconds per path and mix")
    parser.add_argument("--warmup", type=float, default=10.0, help="per path and mix")
    parser.add_argument(
        "--jit-warmup", type=float, default=60.0,
        help="unmeasured seconds of load, both paths in turn, before a mix is first"
             " measured: a fresh Neo4j's JIT compiler is still compiling its hot paths"
             " for the first minute or so, and that CPU fell mostly on the service's rounds")
    parser.add_argument("--preload", type=int, default=10_000,
                        help="memories written (over 5 namespaces) before measuring")
    parser.add_argument("--mixes", default="search,mixed")
    parser.add_argument("--processes", default="1,2",
                        help="service process counts, each measured in turn (serve --workers N)")
    args = parser.parse_args()
    counts = [int(n) for n in args.processes.split(",")]
    summaries: list[Summary] = []
    pool: dict[str, list[list[Request]]] | None = None
    warmed: set[str] = set()
    with bench_neo4j() as neo4j:
        for processes in counts:
            with served_on(neo4j, dimension=DIMENSION, workers=processes) as server:
                if processes > 1:
                    wait_for_workers(server.process.pid, processes,
                                     urlsplit(neo4j.uri).port or 7687)
                if pool is None:
                    pool = asyncio.run(build_pool(server.base, neo4j.uri, neo4j.password,
                                                  args.preload))
                summaries += asyncio.run(run(
                    server.base, server.process.pid, neo4j, pool, clients=args.clients,
                    duration=args.duration, warmup=args.warmup,
                    mixes=args.mixes.split(","), processes=processes,
                    jit_warmup=args.jit_warmup, warmed=warmed))
    print(f"\n## summary, {args.clients} clients (ms: p50 / p95 / p99)")
    print(f"{'processes':>9} {'mix':<7} {'service':>8} {'bare':>8} {'ratio':>6}"
          f" {'service ms':>20} {'bare ms':>20} {'p99/p50':>8}")
    for summary in summaries:
        print(summary.line())


if __name__ == "__main__":
    main()
