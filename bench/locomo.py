"""Retrieval quality on LoCoMo (../shared/bench/locomo-dev), through the API.

    python bench/locomo.py [--data DIR] [--limit 10]

Each conversation is loaded into its own session scope (one memory per turn,
content "speaker: text", the file's MiniLM vectors as client vectors, the
turn's time as `now`), consecutive turns are joined by RELATED, and every
question is asked within its conversation, with its MiniLM vector and text.
Prints recall@10 (share of a question's evidence in the top 10, averaged) and
hit@10 (share of questions with any evidence in the top 10) per search
configuration, with and without graph expansion.
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

WRITE = "mutation($inputs: [MemoryInput!]!) { writeMemories(inputs: $inputs) { id } }"
LINK = """mutation($ns: String!, $inputs: [EdgeSpecInput!]!) {
  addEdges(namespace: $ns, inputs: $inputs) { id } }"""
SEARCH = """query($input: SearchInput!) { search(input: $input) { memory { id } } }"""

EXPAND = {"maxExpand": 10, "depth": 1, "types": ["RELATED"], "share": 0.5}
CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("lexical", {"mode": "LEXICAL", "scoring": "SIMILARITY"}),
    ("semantic", {"mode": "SEMANTIC", "scoring": "SIMILARITY"}),
    ("hybrid rrf", {"mode": "HYBRID", "scoring": "RRF"}),
    ("hybrid weighted", {"mode": "HYBRID", "scoring": "HYBRID"}),
    ("lexical + expansion", {"mode": "LEXICAL", "scoring": "SIMILARITY", "expansion": EXPAND}),
    ("semantic + expansion", {"mode": "SEMANTIC", "scoring": "SIMILARITY", "expansion": EXPAND}),
    ("hybrid rrf + expansion", {"mode": "HYBRID", "scoring": "RRF", "expansion": EXPAND}),
    ("hybrid weighted + expansion", {"mode": "HYBRID", "scoring": "HYBRID", "expansion": EXPAND}),
    # Neighbours lend their score only when they are candidates too: a wider pool helps.
    ("lexical + expansion, 200 cand.", {"mode": "LEXICAL", "scoring": "SIMILARITY",
                                        "expansion": EXPAND, "candidates": 200}),
    ("hybrid rrf + expansion, 200 cand.", {"mode": "HYBRID", "scoring": "RRF",
                                           "expansion": EXPAND, "candidates": 200}),
]


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def load(bench: Bench, data: Path, namespace: str) -> dict[str, int]:
    memories = _read_jsonl(data / "memories.jsonl")
    vectors = np.load(data / "memories.speaker.minilm.npy")
    by_conv: dict[str, list[tuple[dict[str, Any], list[float]]]] = defaultdict(list)
    for row, vector in zip(memories, vectors):
        by_conv[row["conv"]].append((row, vector.astype(float).tolist()))
    for conv, rows in by_conv.items():
        rows.sort(key=lambda r: r[0]["seq"])
        inputs = [{
            "namespace": namespace, "id": row["id"], "content": f"{row['speaker']}: {row['text']}",
            "scope": "SESSION", "sessionId": conv, "embedding": vector, "now": row["ts"],
            "sourceType": "conversation", "metadata": {"speaker": row["speaker"],
                                                       "session": row["session"]},
        } for row, vector in rows]
        for start in range(0, len(inputs), 500):
            await bench.gql(WRITE, {"inputs": inputs[start:start + 500]})
        links = [{"sourceId": a[0]["id"], "targetId": b[0]["id"], "type": "RELATED"}
                 for a, b in zip(rows, rows[1:])]
        for start in range(0, len(links), 500):
            await bench.gql(LINK, {"ns": namespace, "inputs": links[start:start + 500]})
    return {conv: len(rows) for conv, rows in by_conv.items()}


async def evaluate(bench: Bench, data: Path, namespace: str, limit: int) -> None:
    queries = _read_jsonl(data / "queries.jsonl")
    vectors = np.load(data / "queries.minilm.npy")
    print(f"{'configuration':<34} {'recall@' + str(limit):>10} {'hit@' + str(limit):>8}"
          f" {'p50 ms':>8}")
    for name, config in CONFIGS:
        recalls, hits, latencies = [], [], []
        for query, vector in zip(queries, vectors):
            evidence = set(query["evidence"])
            if not evidence:
                continue
            variables = {"input": {
                "filter": {"namespace": namespace}, "query": query["question"],
                "vector": vector.astype(float).tolist(), "context": {"sessionId": query["conv"]},
                "scope": "SESSION", "limit": limit, **config,
            }}
            started = time.perf_counter()
            found = await bench.gql(SEARCH, variables)
            latencies.append(time.perf_counter() - started)
            ids = [h["memory"]["id"] for h in found["search"]][:limit]
            overlap = len(evidence & set(ids))
            recalls.append(overlap / len(evidence))
            hits.append(1.0 if overlap else 0.0)
        latencies.sort()
        print(f"{name:<34} {sum(recalls) / len(recalls):>10.3f} {sum(hits) / len(hits):>8.3f}"
              f" {latencies[len(latencies) // 2] * 1000:>8.1f}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get(
        "MEMLATTICE_LOCOMO", SHARED_BENCH / "locomo-dev")))
    parser.add_argument("--limit", type=int, default=10)
    args = parser.parse_args()
    async with bench_service(dimension=384) as bench:
        namespace = "bench/locomo"
        started = time.monotonic()
        sizes = await load(bench, args.data, namespace)
        print(f"# loaded {sum(sizes.values())} turns of {len(sizes)} conversations"
              f" in {time.monotonic() - started:.1f}s")
        await evaluate(bench, args.data, namespace, args.limit)


if __name__ == "__main__":
    asyncio.run(main())
