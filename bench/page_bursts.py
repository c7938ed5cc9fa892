"""A page's parallel requests on a shared server: served in turn, or refused?

A frontend loads a view with several requests at once (a browser opens up to six
connections to one origin). On a busy process the key with the most work in
flight waits for its turn (memlattice.core.sharing), so while another tenant is
active a page's burst runs about one search at a time; before
`MEMLATTICE_FAIRNESS_QUEUE`, each request waited at most the turn wait (1 s) from
its arrival, and the tail of a burst was refused 429 `share` although the key was
within its own limits and being served (memlattice.core.turn_waits).

A real `memlattice serve` (API keys on, default limits) over a private Neo4j (or
`NEO4J_URI`), run twice on the same store: with `MEMLATTICE_FAIRNESS_QUEUE=0` (the
rule before) and with the default queue. In each, a steady tenant (`--steady-clients`
connections, each a hybrid search then `--think-ms`) runs throughout, and a page
sends `--page-connections` searches at once every `--every` seconds. Printed per
run: the page's answers by kind, the bursts with a refusal, how long a burst took
to be answered whole (p50/p95), and the steady tenant's p50/p95.

    .venv/bin/python -m bench.page_bursts
    .venv/bin/python -m bench.page_bursts --page-connections 12 --duration 60
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass, field

from bench._harness import percentile
from bench._http import KeepAliveConnection
from bench._server import bench_neo4j, served_on
from bench.fairness import FLOOD, QUIET, outcome, preload, search_body
from bench.load import SEARCH
from memlattice.graph.client import GraphClient
from memlattice.graph.keys import ApiKeyGraph
from memlattice.services.apikeys import KeySpec, create_key


@dataclass
class Run:
    name: str
    page: Counter[str] = field(default_factory=Counter)
    bursts: list[float] = field(default_factory=list)
    refused_bursts: int = 0
    steady: list[float] = field(default_factory=list)
    steady_errors: Counter[str] = field(default_factory=Counter)


async def steady_client(base: str, key: str, run: Run | None, until: float, seed: int,
                        think_s: float) -> None:
    rng = random.Random(seed)
    connection = KeepAliveConnection(base, {"Authorization": f"Bearer {key}"})
    try:
        while time.monotonic() < until:
            started = time.perf_counter()
            status, answer = await connection.post("/graphql",
                                                   search_body(rng, QUIET, SEARCH, 10))
            kind = outcome(status, answer)
            if run is not None:
                if kind == "served":
                    run.steady.append(time.perf_counter() - started)
                else:
                    run.steady_errors[kind] += 1
            await asyncio.sleep(think_s)
    finally:
        connection.close()


async def page(base: str, key: str, run: Run | None, until: float, connections: int,
               every_s: float) -> None:
    """Every `every_s`, one search on each of `connections` connections at once."""
    rng = random.Random(99)
    opened = [KeepAliveConnection(base, {"Authorization": f"Bearer {key}"})
              for _ in range(connections)]
    try:
        while time.monotonic() < until:
            due = time.monotonic() + every_s
            started = time.perf_counter()
            answers = await asyncio.gather(*(
                c.post("/graphql", search_body(rng, FLOOD, SEARCH, 10)) for c in opened))
            kinds = [outcome(status, answer) for status, answer in answers]
            if run is not None:
                run.page.update(kinds)
                run.bursts.append(time.perf_counter() - started)
                run.refused_bursts += any(kind != "served" for kind in kinds)
            await asyncio.sleep(max(0.0, due - time.monotonic()))
    finally:
        for connection in opened:
            connection.close()


async def measure(base: str, steady: str, paging: str, args: argparse.Namespace,
                  run: Run | None, seconds: float) -> None:
    until = time.monotonic() + seconds
    await asyncio.gather(
        *(steady_client(base, steady, run, until, seed=i, think_s=args.think_ms / 1000)
          for i in range(args.steady_clients)),
        page(base, paging, run, until, args.page_connections, args.every))


def report(run: Run) -> None:
    b, s = run.bursts, run.steady
    print(f"{run.name:28s} page: {dict(run.page)}; bursts {len(b)}, with a refusal"
          f" {run.refused_bursts}; answered whole p50 {percentile(b, 50) * 1000:7.1f} ms"
          f" p95 {percentile(b, 95) * 1000:7.1f} ms")
    print(f"{'':28s} steady: p50 {percentile(s, 50) * 1000:7.1f} ms"
          f"  p95 {percentile(s, 95) * 1000:7.1f} ms  n={len(s)}"
          f"  errors {dict(run.steady_errors) or 0}")


async def bench(args: argparse.Namespace) -> int:
    runs = []
    with bench_neo4j() as neo4j:
        graph = GraphClient.connect(neo4j.uri, neo4j.user, neo4j.password, "neo4j")
        try:
            keys = ApiKeyGraph(graph)
            _, admin = await create_key(keys, KeySpec(name="bench-admin", namespaces=None,
                                                      admin=True))
            _, steady = await create_key(keys, KeySpec(name="steady", namespaces=(QUIET,)))
            _, paging = await create_key(keys, KeySpec(name="page", namespaces=(FLOOD,)))
        finally:
            await graph.close()
        for queue in ("0", str(args.queue)):
            with served_on(neo4j, env={
                    "MEMLATTICE_AUTH_MODE": "keys", "MEMLATTICE_ENVIRONMENT": "test",
                    "MEMLATTICE_LIMIT_REQUEST_TIMEOUT_S": "300",
                    "MEMLATTICE_FAIRNESS_QUEUE": queue}) as server:
                if not runs:
                    await preload(server.base, admin, args.preload)
                await measure(server.base, steady, paging, args, None, args.warmup)
                run = Run(f"MEMLATTICE_FAIRNESS_QUEUE={queue}")
                await measure(server.base, steady, paging, args, run, args.duration)
                runs.append(run)
    print(f"# {args.steady_clients} steady clients (think {args.think_ms:g} ms); a page of"
          f" {args.page_connections} searches at once every {args.every:g} s;"
          f" {args.preload} memories per tenant; {args.duration:g} s per run after"
          f" {args.warmup:g} s of warm-up")
    for run in runs:
        report(run)
    return 0 if runs[-1].refused_bursts == 0 else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=40.0, help="seconds per run")
    parser.add_argument("--warmup", type=float, default=30.0,
                        help="seconds of the same load first, unmeasured, in each run")
    parser.add_argument("--preload", type=int, default=2000, help="memories per tenant")
    parser.add_argument("--steady-clients", type=int, default=2)
    parser.add_argument("--think-ms", type=float, default=50.0)
    parser.add_argument("--page-connections", type=int, default=6)
    parser.add_argument("--every", type=float, default=2.0, help="seconds between bursts")
    parser.add_argument("--queue", type=int, default=8,
                        help="MEMLATTICE_FAIRNESS_QUEUE of the second run")
    raise SystemExit(asyncio.run(bench(parser.parse_args())))


if __name__ == "__main__":
    main()
