"""Fairness between tenants: one key floods the server, another keeps its latency.

A real `memlattice serve` (API keys on) over a private Neo4j (or `NEO4J_URI`);
three keys: an admin that preloads both namespaces, a quiet tenant and a
flooding tenant whose own limits are tight (`--flood-rate`, `--flood-burst`,
`--flood-concurrent`; a cost budget of its own with `--flood-cost-rate` and
`--flood-cost-burst`, else the one its rate implies). Phases of `--duration` seconds each; the first two alternate for `--rounds`
rounds and are pooled (drift favours neither), the last two run once after:

    unloaded          the quiet tenant alone
    flood, limited    the same, while the flooder's `--flooders` connections offer
                      `--flood-rps` heavy searches a second in all (limit 50, more
                      fields), ignoring `Retry-After`: 40 times its limit by default,
                      more than the server can search (about 125 a second a process);
                      `--flood-rps 0` sends back to back, as fast as answers come
    unloaded, again   the quiet tenant alone (the drift of the run)
    flood, unlimited  as the second, with the flooder's own limits lifted (0): what
                      they protect the quiet tenant from; the process still shares
                      itself among the keys when busy (memlattice.core.sharing), so
                      the flooder is refused its turn (`rate_limited:share`)

The flood is sent from a process of its own, at a lower CPU priority (nice 10):
on one machine its client's work would otherwise hold up the event loop that
times the quiet tenant, and be charged to the server, where a real flood comes
from another machine. Its requests still reach the server as fast as offered.

The quiet tenant is `--quiet-clients` connections each sending a hybrid search
(limit 10) then pausing `--think-ms`. Printed per phase: the quiet tenant's
p50/p95/p99 and errors, the flooder's answers by kind (served, 429 with
RATE_LIMITED, anything else), the CPU (in cores, over the phase) of the server,
Neo4j, the quiet tenant's client (this process), the flood's client and the rest
of the machine, and the ratio of each flood phase's quiet p95 to
the unloaded p95 measured beside it (pooled, or just before). The target (issue 30): the limited
ratio at most 1.5, and the flooder getting 429s and never another error.

    .venv/bin/python -m bench.fairness
    .venv/bin/python -m bench.fairness --duration 20 --flooders 32 --flood-rate 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import psutil

from bench._harness import percentile
from bench._http import KeepAliveConnection
from bench._server import bench_neo4j, served_on
from bench.load import SEARCH, WORDS, Processes, listening_pid, memory, vector
from memlattice.core.fairness import KeyLimits
from memlattice.graph.client import GraphClient
from memlattice.graph.keys import ApiKeyGraph
from memlattice.services.apikeys import KeySpec, create_key, set_key_limits

QUIET, FLOOD = "bench/quiet", "bench/flood"
# The flood's client runs below the server's priority: on one machine its own CPU
# would otherwise be charged to the server, where a real flood comes from elsewhere.
FLOOD_NICENESS = 10
HEAVY = ("query($in: SearchInput!) { search(input: $in) { score similarityScore ftsScore"
         " recencyScore memory { id content tags metadata createdAt version } } }")


@dataclass
class Phase:
    name: str
    quiet: list[float] = field(default_factory=list)
    quiet_errors: Counter[str] = field(default_factory=Counter)
    flood: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    # CPU seconds by whom: server, neo4j, quiet client, flood client, others.
    cpu: Counter[str] = field(default_factory=Counter)


def search_body(rng: random.Random, namespace: str, query: str, limit: int) -> bytes:
    return json.dumps({"query": query, "variables": {"in": {
        "filter": {"namespace": namespace}, "embedding": vector(rng),
        "query": " ".join(rng.choices(WORDS, k=3)), "limit": limit}}}).encode()


def outcome(status: int, answer: bytes) -> str:
    """served, rate_limited (429 RATE_LIMITED; `rate_limited:<limit>` for a limit other
    than the rate, such as `share`) or what else it was."""
    try:
        body = json.loads(answer)
    except ValueError:
        return f"HTTP {status} (not JSON)"
    errors = body.get("errors") or []
    codes = [str((e.get("extensions") or {}).get("code")) for e in errors]
    if status == 429 and codes == ["RATE_LIMITED"]:
        limit = (errors[0].get("extensions") or {}).get("limit")
        return "rate_limited" if limit == "rate" else f"rate_limited:{limit}"
    if status == 200 and not codes and body.get("data"):
        return "served"
    # The first error's message says which failure a code stands for (UNAVAILABLE is
    # a refused connection, a pool that had none free, or a transient Neo4j error).
    said = str(errors[0].get("message") or "")[:80] if errors else ""
    return f"HTTP {status} {','.join(codes) or 'no code'}" + (f": {said}" if said else "")


async def quiet_client(base: str, key: str, phase: Phase, until: float, seed: int,
                       think_s: float) -> None:
    rng = random.Random(seed)
    connection = KeepAliveConnection(base, {"Authorization": f"Bearer {key}"})
    try:
        while time.monotonic() < until:
            body = search_body(rng, QUIET, SEARCH, 10)
            started = time.perf_counter()
            status, answer = await connection.post("/graphql", body)
            elapsed = time.perf_counter() - started
            kind = outcome(status, answer)
            if kind == "served":
                phase.quiet.append(elapsed)
            else:
                phase.quiet_errors[kind] += 1
            await asyncio.sleep(think_s)
    finally:
        connection.close()


async def flooder(base: str, key: str, phase: Phase, until: float, seed: int,
                  interval_s: float) -> None:
    """One connection of the flood: a request every `interval_s` (or at once when the
    last answer came later), back to back when `interval_s` is 0."""
    rng = random.Random(seed)
    connection = KeepAliveConnection(base, {"Authorization": f"Bearer {key}"})
    due = time.monotonic() + rng.random() * interval_s  # spread the connections' starts
    try:
        while (now := time.monotonic()) < until:
            if due > now:
                await asyncio.sleep(due - now)
            due = max(due + interval_s, time.monotonic()) if interval_s else 0.0
            status, answer = await connection.post(
                "/graphql", search_body(rng, FLOOD, HEAVY, 50))
            phase.flood[outcome(status, answer)] += 1
    finally:
        connection.close()


def flood_for(base: str, key: str, until: float, flooders: int, interval_s: float
              ) -> tuple[Counter[str], float]:
    """The whole flood, run in a process of its own: its answers by kind, and the CPU
    seconds that process spent sending them (the load generator's own share of the
    two cores, which a flood from another machine would not take)."""
    phase = Phase("flood")
    started = time.process_time()

    async def run() -> None:
        await asyncio.gather(*(flooder(base, key, phase, until, seed=100 + i,
                                       interval_s=interval_s) for i in range(flooders)))

    asyncio.run(run())
    return phase.flood, time.process_time() - started


def _lower_priority() -> None:
    os.nice(FLOOD_NICENESS)


def busy_cpu() -> float:
    """CPU seconds the whole machine has spent on anything but idling."""
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def spent(processes: Processes | None) -> dict[str, float]:
    """CPU seconds so far of the server, Neo4j, this process, and the whole machine."""
    now = processes.cpu() if processes is not None else {}
    return {"server": now.get("server", 0.0), "neo4j": now.get("neo4j", 0.0),
            "quiet client": time.process_time(), "machine": busy_cpu()}


async def run_phase(name: str, base: str, quiet: str, flood: str | None, args: argparse.Namespace,
                    flood_pool: ProcessPoolExecutor | None = None,
                    processes: Processes | None = None) -> Phase:
    """One phase. The flood runs in its own process (`flood_pool`), as a flood from
    another machine would: in this process its 200 requests a second would hold up
    the event loop that times the quiet tenant's answers."""
    phase = Phase(name)
    before = spent(processes)
    started = time.monotonic()
    until = started + args.duration
    tasks = [quiet_client(base, quiet, phase, until, seed=i, think_s=args.think_ms / 1000)
             for i in range(args.quiet_clients)]
    flooding = None
    if flood is not None:
        assert flood_pool is not None
        interval = args.flooders / args.flood_rps if args.flood_rps else 0.0
        flooding = asyncio.get_running_loop().run_in_executor(
            flood_pool, flood_for, base, flood, until, args.flooders, interval)
    await asyncio.gather(*tasks)
    if flooding is not None:
        answers, phase.cpu["flood client"] = await flooding
        phase.flood.update(answers)
    phase.seconds = time.monotonic() - started
    after = spent(processes)
    for who in ("server", "neo4j", "quiet client"):
        phase.cpu[who] = after[who] - before[who]
    # What else ran on the machine meanwhile (others' work, and the pool's idle worker).
    phase.cpu["others"] = max(0.0, after["machine"] - before["machine"] - sum(phase.cpu.values()))
    return phase


async def preload(base: str, admin: str, count: int) -> None:
    rng = random.Random(7)
    connection = KeepAliveConnection(base, {"Authorization": f"Bearer {admin}"})
    query = "mutation($is: [MemoryInput!]!) { writeMemories(inputs: $is) { id } }"
    try:
        for namespace in (QUIET, FLOOD):
            for start in range(0, count, 100):
                batch = [memory(rng, namespace) for _ in range(min(100, count - start))]
                status, answer = await connection.post("/graphql", json.dumps(
                    {"query": query, "variables": {"is": batch}}).encode())
                assert outcome(status, answer) == "served", answer[:300]
    finally:
        connection.close()


def pool(into: Phase, phase: Phase) -> None:
    into.quiet += phase.quiet
    into.quiet_errors.update(phase.quiet_errors)
    into.flood.update(phase.flood)
    into.cpu.update(phase.cpu)
    into.seconds += phase.seconds


def report(phase: Phase) -> None:
    q = phase.quiet
    print(f"{phase.name:18s} quiet: {len(q) / phase.seconds:6.1f} req/s"
          f"  p50 {percentile(q, 50) * 1000:7.2f} ms  p95 {percentile(q, 95) * 1000:7.2f} ms"
          f"  p99 {percentile(q, 99) * 1000:7.2f} ms  n={len(q)}"
          f"  errors {dict(phase.quiet_errors) or 0}")
    if phase.flood:
        total = sum(phase.flood.values())
        print(f"{'':18s} flood: {total / phase.seconds:6.1f} req/s  {dict(phase.flood)}")
    if phase.cpu:
        cores = ", ".join(f"{who} {seconds / phase.seconds:.2f}" for who, seconds in phase.cpu.items())
        print(f"{'':18s} cpu (cores): {cores}")


async def bench(args: argparse.Namespace) -> int:
    # A preload batch on a busy machine may take longer than the default 30 s budget.
    with bench_neo4j() as neo4j, served_on(neo4j, env={
            "MEMLATTICE_AUTH_MODE": "keys", "MEMLATTICE_ENVIRONMENT": "test",
            "MEMLATTICE_LIMIT_REQUEST_TIMEOUT_S": "300"}) as server:
        graph = GraphClient.connect(neo4j.uri, neo4j.user, neo4j.password, "neo4j")
        try:
            keys = ApiKeyGraph(graph)
            _, admin = await create_key(keys, KeySpec(name="bench-admin", namespaces=None,
                                                      admin=True))
            _, quiet = await create_key(keys, KeySpec(name="quiet", namespaces=(QUIET,)))
            limits = KeyLimits(rate=args.flood_rate, burst=args.flood_burst,
                               concurrent=args.flood_concurrent,
                               cost_rate=args.flood_cost_rate, cost_burst=args.flood_cost_burst)
            flood_key, flood = await create_key(keys, KeySpec(
                name="flood", namespaces=(FLOOD,), limits=limits))
            processes = Processes(server.process.pid,
                                  listening_pid(urlsplit(neo4j.uri).port or 7687))
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                     initializer=_lower_priority) as flood_pool:
                await preload(server.base, admin, args.preload)
                # Warm the server and Neo4j on both tenants' queries, unmeasured.
                await run_phase("warm-up", server.base, quiet, flood, argparse.Namespace(
                    **{**vars(args), "duration": args.warmup}), flood_pool)
                # Alternating rounds, pooled per kind, so that the drift of a busy machine
                # (or of a Neo4j still warming up) favours neither.
                unloaded, limited = Phase("unloaded"), Phase("flood, limited")
                for _ in range(args.rounds):
                    for pooled, flooding in ((unloaded, None), (limited, flood)):
                        pool(pooled, await run_phase(pooled.name, server.base, quiet, flooding,
                                                     args, flood_pool, processes))
                phases = [unloaded, limited,
                          await run_phase("unloaded, again", server.base, quiet, None, args,
                                          processes=processes)]
                await set_key_limits(keys, flood_key.id, KeyLimits(rate=0, burst=0, concurrent=0))
                phases.append(await run_phase("flood, unlimited", server.base, quiet, flood, args,
                                              flood_pool, processes))
        finally:
            await graph.close()
    offered = f"{args.flood_rps:g}/s offered" if args.flood_rps else "back to back"
    print(f"# {args.quiet_clients} quiet clients (think {args.think_ms} ms), {args.flooders}"
          f" flood connections ({offered}); flooder limits: rate {args.flood_rate}/s, burst {args.flood_burst},"
          f" concurrent {args.flood_concurrent}, cost budget {_cost_budget(args)};"
          f" {args.preload} memories per tenant;"
          f" {args.rounds} rounds of {args.duration:g} s per kind, then one of each after")
    for phase in phases:
        report(phase)
    p95 = [percentile(p.quiet, 95) for p in phases]
    limited, unlimited = p95[1] / p95[0], p95[3] / p95[2]
    others = sum(n for kind, n in phases[1].flood.items()
                 if kind != "served" and not kind.startswith("rate_limited"))
    print(f"quiet p95 under a limited flood:   {limited:.2f}x unloaded (target <= 1.5)")
    print(f"quiet p95 under an unlimited flood: {unlimited:.2f}x unloaded")
    print(f"flooder answers other than served or 429 RATE_LIMITED: {others};"
          f" quiet errors: {sum(sum(p.quiet_errors.values()) for p in phases)}")
    refused = sum(n for kind, n in phases[1].flood.items() if kind.startswith("rate_limited"))
    return 0 if limited <= 1.5 and others == 0 and refused else 1


def _cost_budget(args: argparse.Namespace) -> str:
    if args.flood_cost_rate is None:
        return "from its rate"
    return f"{args.flood_cost_rate:g}/s, burst {args.flood_cost_burst or 'default'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=15.0, help="seconds per phase")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating unloaded / limited-flood rounds, pooled")
    parser.add_argument("--warmup", type=float, default=60.0,
                        help="seconds of both tenants' load first, unmeasured: a fresh Neo4j"
                        " compiles its hot paths for about a minute (docs/operating.md)")
    parser.add_argument("--preload", type=int, default=2000, help="memories per tenant")
    parser.add_argument("--quiet-clients", type=int, default=2)
    parser.add_argument("--think-ms", type=float, default=50.0)
    parser.add_argument("--flooders", type=int, default=32, help="the flood's connections")
    parser.add_argument("--flood-rps", type=float, default=200.0,
                        help="requests a second the flood offers in all (0: each connection"
                        " sends back to back, as fast as the answers come)")
    parser.add_argument("--flood-rate", type=float, default=5.0)
    parser.add_argument("--flood-burst", type=float, default=5.0)
    parser.add_argument("--flood-concurrent", type=int, default=2)
    parser.add_argument("--flood-cost-rate", type=float, default=None,
                        help="the flooder's cost budget a second (default: none of its own,"
                        " so its rate times MEMLATTICE_FAIRNESS_REQUEST_COST)")
    parser.add_argument("--flood-cost-burst", type=float, default=None,
                        help="its cost burst (default: without --flood-cost-rate, its burst"
                        " times the cost a request; with it, the server's default cost burst)")
    raise SystemExit(asyncio.run(bench(parser.parse_args())))


if __name__ == "__main__":
    main()

