"""Retrieval quality on LoCoMo (../shared/bench/locomo-dev), through the API.

    python -m bench.locomo [--data DIR] [--limit 10] [--configs NAME ...] [--dump FILE]

Each conversation is loaded with `ingestConversation`, one call per LoCoMo
session, all under the conversation's id as session id (so its turns form one
NEXT chain and one scope bucket): one memory per turn, content "speaker:
text", the file's MiniLM vectors as client vectors, the turn's time as `at`.
Every question is asked within its conversation, with its MiniLM vector and
text. Prints, per search configuration (the default search first), recall@10
(share of a question's evidence in the top 10, averaged) and hit@10 (share of
questions with any evidence in the top 10) over categories 1-4, recall@10 per
category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5
adversarial), and search latency p50/p95.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from bench._harness import SHARED_BENCH, Bench, bench_service
from memlattice.core.messages import MessageInput, turn_id
from memlattice.server.app import runtime_of

INGEST = """mutation($input: ConversationInput!) {
  ingestConversation(input: $input) { created } }"""
SEARCH = """query($input: SearchInput!) { search(input: $input) { memory { id } } }"""

CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("default", {}),
    ("default, no context", {"contextHops": 0}),
    ("lexical", {"mode": "LEXICAL", "scoring": "SIMILARITY"}),
    ("lexical, no context", {"mode": "LEXICAL", "scoring": "SIMILARITY", "contextHops": 0}),
    ("semantic", {"mode": "SEMANTIC", "scoring": "SIMILARITY"}),
    ("hybrid rrf", {"mode": "HYBRID", "scoring": "RRF"}),
    ("hybrid weighted", {"mode": "HYBRID", "scoring": "HYBRID"}),
    ("default, 200 cand.", {"candidates": 200}),
]
CATEGORIES = (1, 2, 3, 4, 5)


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def load(bench: Bench, data: Path, namespace: str) -> dict[str, int]:
    memories = _read_jsonl(data / "memories.jsonl")
    vectors = np.load(data / "memories.speaker.minilm.npy")
    sessions: dict[str, dict[Any, list[tuple[dict[str, Any], list[float]]]]] = defaultdict(
        lambda: defaultdict(list))
    for row, vector in zip(memories, vectors):
        sessions[row["conv"]][row["session"]].append((row, vector.astype(float).tolist()))
    sizes: dict[str, int] = {}
    for conv, by_session in sessions.items():
        ordered = sorted(by_session.values(), key=lambda rows: min(r["seq"] for r, _ in rows))
        for rows in ordered:
            rows.sort(key=lambda r: r[0]["seq"])
            await bench.gql(INGEST, {"input": {
                "namespace": namespace, "sessionId": conv, "messages": [{
                    "id": row["id"], "speaker": row["speaker"], "content": row["text"],
                    "at": row["ts"], "embedding": vector,
                    "metadata": {"session": row["session"]}} for row, vector in rows]}})
        sizes[conv] = sum(len(rows) for rows in ordered)
    facts = runtime_of(bench.app).session_facts
    if facts is not None:  # MEMLATTICE_FACTS_LLM_MODEL is set: the facts, before any question
        await facts.drain()
    return sizes


def ids_of_turns(namespace: str, data: Path) -> dict[str, str]:
    """Dataset turn id -> memory id (ingestion derives memory ids from message ids)."""
    return {row["id"]: turn_id(namespace, row["conv"], MessageInput(id=row["id"],
                                                                    content=row["text"]))
            for row in _read_jsonl(data / "memories.jsonl")}


WARMUP_QUESTIONS = 20


async def evaluate(bench: Bench, data: Path, namespace: str, limit: int,
                   configs: list[str] | None = None, dump: Path | None = None) -> None:
    """Ask every question of every chosen configuration and print recall, hit rate
    and latency per configuration.

    Latency is compared within one run, so the configurations take turns on each
    question (in a rotating order) after a warm-up that is not timed: asked one
    configuration after another, the first paid for cold caches and every one
    for whatever else the machine was doing at its time.
    """
    queries = _read_jsonl(data / "queries.jsonl")
    vectors = np.load(data / "queries.minilm.npy")
    memory_of = ids_of_turns(namespace, data)
    chosen = [(name, config) for name, config in CONFIGS if not configs or name in configs]
    recalls: dict[str, dict[int, list[float]]] = {name: defaultdict(list) for name, _ in chosen}
    hits: dict[str, list[float]] = {name: [] for name, _ in chosen}
    latencies: dict[str, list[float]] = {name: [] for name, _ in chosen}
    rows: list[dict[str, Any]] = []

    def variables(query: dict[str, Any], vector: Any, config: dict[str, Any]) -> dict[str, Any]:
        return {"input": {
            "filter": {"namespace": namespace}, "query": query["question"],
            "embedding": vector.astype(float).tolist(), "sessionId": query["conv"],
            "scope": "SESSION", "limit": limit, **config,
        }}

    for query, vector in list(zip(queries, vectors))[:WARMUP_QUESTIONS]:
        for _, config in chosen:
            await bench.gql(SEARCH, variables(query, vector, config))
    for number, (query, vector) in enumerate(zip(queries, vectors)):
        evidence = {memory_of[e] for e in query["evidence"] if e in memory_of}
        if not evidence:
            continue
        turn = number % len(chosen)
        for name, config in chosen[turn:] + chosen[:turn]:
            started = time.perf_counter()
            found = await bench.gql(SEARCH, variables(query, vector, config))
            latencies[name].append(time.perf_counter() - started)
            ids = [h["memory"]["id"] for h in found["search"]][:limit]
            overlap = len(evidence & set(ids))
            recalls[name][int(query["category"])].append(overlap / len(evidence))
            if dump is not None:
                rows.append({"config": name, "qid": query["qid"], "category": query["category"],
                             "question": query["question"], "recall": overlap / len(evidence),
                             "evidence": sorted(evidence), "found": ids})
            if int(query["category"]) != 5:
                hits[name].append(1.0 if overlap else 0.0)

    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else float("nan")

    print(f"{'configuration':<24} {'R@' + str(limit) + ' 1-4':>8} {'hit 1-4':>8}"
          + "".join(f" {'c' + str(c):>6}" for c in CATEGORIES) + f" {'p50 ms':>8} {'p95 ms':>8}")
    p50: dict[str, float] = {}
    for name, _ in chosen:
        timed = sorted(latencies[name])
        p50[name] = timed[len(timed) // 2] * 1000
        headline = [r for c in (1, 2, 3, 4) for r in recalls[name][c]]
        print(f"{name:<24} {mean(headline):>8.3f} {mean(hits[name]):>8.3f}"
              + "".join(f" {mean(recalls[name][c]):>6.3f}" for c in CATEGORIES)
              + f" {p50[name]:>8.1f} {timed[int(len(timed) * 0.95)] * 1000:>8.1f}")
    if "default" in p50 and "lexical" in p50:
        print(f"# default p50 / lexical p50: {p50['default'] / p50['lexical']:.2f}"
              " (target: at most 2)")
    if dump is not None:
        dump.write_text("\n".join(json.dumps(row) for row in rows) + "\n")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get(
        "MEMLATTICE_LOCOMO", SHARED_BENCH / "locomo-dev")))
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--configs", nargs="*", metavar="NAME",
                        help="only these configurations (names as printed, e.g. default)")
    parser.add_argument("--dump", type=Path, help="write every question's hits as JSON lines")
    args = parser.parse_args()
    async with bench_service(dimension=384) as bench:
        namespace = "bench/locomo"
        started = time.monotonic()
        sizes = await load(bench, args.data, namespace)
        print(f"# loaded {sum(sizes.values())} turns of {len(sizes)} conversations"
              f" in {time.monotonic() - started:.1f}s")
        await evaluate(bench, args.data, namespace, args.limit, args.configs, args.dump)


if __name__ == "__main__":
    asyncio.run(main())
