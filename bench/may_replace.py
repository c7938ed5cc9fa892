"""What a writer is shown: how often `Memory.mayReplace` offers the memory a new one replaces.

    python -m bench.may_replace [--files dev,holdout,unseen,fresh] [--first 5]

The rule set links a tenth to a half of the updates in scenarios nobody tuned
it on (bench.knowledge_update); the writer (an agent's model, a person) can
judge the rest if it is shown the right earlier memory. This loads each
scenario of bench/knowledge_updates/ as bench.knowledge_update does (its own
namespace, `ingestConversation` per session, the server's own embedder) and,
for every true update (newer, older), asks the API for the newer memory's
`mayReplace(first: N)`. Prints per file and group (person / agent):

- pairs: the true updates;
- rules: those the rule set linked on write (`memoryUpdates`);
- offered@1 / @3 / @N: the older memory is among the first 1, 3, N offered;
- rules or @3: linked by the rules, or offered in the first three: what a
  writer that judges every offer right would end with;
- the median time of asking a memory with its offers against asking it alone,
  the same memories in the same run (the offer's cost is one vector query).

It prints counts only, never a scenario's text, so it may run on the sealed
files. It measures the offer, not a judgment: no model runs here.

`--judge-right` then plays a writer that judges every offer right (it proposes,
as a candidate, exactly the true pairs offered in the first three, and nothing
else) and asks every question as bench.knowledge_update does, printing its
table: what recall would give with such links. A ceiling for the writer's path,
not a figure of the product on its own.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import time
from collections import Counter
from typing import Any

from bench._harness import Bench, bench_service
from bench.knowledge_update import (
    PARALLEL,
    UPDATES,
    Results,
    Scenario,
    evaluate,
    load,
    print_failures,
    read_scenarios,
)
from bench.knowledge_update import report as question_report
from memlattice.core.settings import EmbeddingSettings

PROPOSE = """mutation($ns: String!, $newer: ID!, $older: ID!) {
  proposeUpdate(namespace: $ns, newerId: $newer, olderId: $older) { id } }"""
READ = """query($ns: String!, $id: ID!) { memory(namespace: $ns, id: $id) { id } }"""
MAY_REPLACE = """query($ns: String!, $id: ID!, $first: Int!) {
  memory(namespace: $ns, id: $id) { mayReplace(first: $first) { memory { id } } } }"""


async def timed(bench: Bench, query: str, variables: dict[str, Any],
                times: list[float]) -> Any:
    started = time.perf_counter()
    data = await bench.gql(query, variables)
    times.append(time.perf_counter() - started)
    return data


async def offered(bench: Bench, scenario: Scenario, first: int,
                  tally: dict[str, Counter[str]], times: dict[str, list[float]], *,
                  judge_right: bool = False) -> None:
    ids = scenario.memory_ids()
    data = await bench.gql(UPDATES, {"namespace": scenario.namespace})
    linked = {(u["newer"]["id"], u["older"]["id"]) for u in data["memoryUpdates"]
              if u["newer"] and u["older"]}
    for newer, older in scenario.truth():
        pair = (ids[newer], ids[older])
        variables = {"ns": scenario.namespace, "id": pair[0]}
        await timed(bench, READ, variables, times["read"])
        shown = await timed(bench, MAY_REPLACE, {**variables, "first": first},
                            times["mayReplace"])
        order = [c["memory"]["id"] for c in shown["memory"]["mayReplace"]]
        rank = order.index(pair[1]) + 1 if pair[1] in order else None
        for name in ("all", scenario.file, f"{scenario.file}/{scenario.group}"):
            counts = tally.setdefault(name, Counter())
            counts["pairs"] += 1
            counts["rules"] += pair in linked
            counts["@1"] += rank is not None and rank <= 1
            counts["@3"] += rank is not None and rank <= 3
            counts["@N"] += rank is not None
            counts["rules or @3"] += pair in linked or (rank is not None and rank <= 3)
        if judge_right and pair not in linked and rank is not None and rank <= 3:
            await bench.gql(PROPOSE, {"ns": scenario.namespace, "newer": pair[0],
                                      "older": pair[1]})


def report(tally: dict[str, Counter[str]], first: int) -> None:
    print(f"| slice | pairs | rules | offered@1 | offered@3 | offered@{first} | rules or @3 |")
    print("|---|---|---|---|---|---|---|")
    for name in sorted(tally, key=lambda n: (n != "all", n)):
        c = tally[name]

        def share(key: str, c: Counter[str] = c) -> str:
            return f"{c[key] / c['pairs']:.2f}" if c["pairs"] else "n/a"

        print(f"| {name} | {c['pairs']} | {share('rules')} | {share('@1')} | {share('@3')}"
              f" | {share('@N')} | {share('rules or @3')} |")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="dev,holdout,unseen,fresh",
                        help="scenario files of bench/knowledge_updates, comma-separated")
    parser.add_argument("--first", type=int, default=5, help="how many offers to ask for")
    parser.add_argument("--verbose", action="store_true",
                        help="with --judge-right, print every failed question (not on sealed files)")
    parser.add_argument("--judge-right", action="store_true",
                        help="propose the true pairs offered in the first three, then ask")
    args = parser.parse_args()
    files = [name.strip() for name in args.files.split(",") if name.strip()]
    scenarios = read_scenarios(files)
    os.environ.setdefault("MEMLATTICE_LIMIT_REQUEST_TIMEOUT_S", "600")
    for chatty in ("httpx", "memlattice.access"):
        logging.getLogger(chatty).setLevel(logging.WARNING)
    tally: dict[str, Counter[str]] = {}
    times: dict[str, list[float]] = {"read": [], "mayReplace": []}
    results = Results()
    async with bench_service(dimension=256, heap="1g", pagecache="512m",
                             embedding=EmbeddingSettings(provider="local")) as bench:
        gate = asyncio.Semaphore(PARALLEL)
        started = time.monotonic()

        async def one(scenario: Scenario) -> Any:
            async with gate:
                await load(bench, scenario)
                await offered(bench, scenario, args.first, tally, times,
                              judge_right=args.judge_right)
                if args.judge_right:
                    await evaluate(bench, results, scenario)

        await asyncio.gather(*(one(s) for s in scenarios))
        print(f"# {len(scenarios)} scenarios ({', '.join(files)}) in"
              f" {time.monotonic() - started:.1f}s")
    report(tally, args.first)
    read, offer = (statistics.median(times[k]) * 1000 for k in ("read", "mayReplace"))
    print(f"# p50 per request: memory(id) {read:.1f} ms, memory(id) {{ mayReplace }}"
          f" {offer:.1f} ms, ratio {offer / read:.2f} ({len(times['read'])} each, same run)")
    if args.judge_right:
        print("\n# every question, with a writer that judged every offer in the first three right")
        question_report(results, files)
        if args.verbose:
            print_failures(results)


if __name__ == "__main__":
    asyncio.run(main())
