"""Retrieval quality on LoCoMo (../shared/bench/locomo-dev), through the API.

    python -m bench.locomo [--data DIR] [--limit 10] [--configs NAME ...]
                           [--sweep FIELD=V1,V2 ...] [--server-embedder] [--dump FILE]

Each conversation is loaded with `ingestConversation`, one call per LoCoMo
session, all under the conversation's id as session id (so its turns form one
NEXT chain and one scope bucket): one memory per turn, content "speaker:
text", the file's MiniLM vectors as client vectors (`--server-embedder`: no
vectors, the server's own default embedder), the turn's time as `at`. Every
question is asked within its conversation, with its MiniLM vector and text.

Prints, per search configuration (the default search first): recall@10
(share of a question's evidence in the top 10, averaged), hit@10, nDCG@10
(where in the ten the evidence sits: what an agent reading a prompt block
sees first) and precision@5 over categories 1-4, recall@10 per category (1
multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial), search
latency p50/p95; then the same per dev conversation with the spread between
them, and leave-one-conversation-out: for each conversation, the
configuration (or `--sweep` value) that scores best on the other two, and
what it scores on that one. A figure that only a choice made on the same
conversation reaches is a fit, not a prediction of unseen data.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench._harness import SHARED_BENCH, Bench, bench_service
from bench.retrieval_metrics import Scores, leave_one_out, mean, score
from memlattice.core.messages import MessageInput, turn_id
from memlattice.core.settings import EmbeddingSettings
from memlattice.server.app import runtime_of

INGEST = """mutation($input: ConversationInput!) {
  ingestConversation(input: $input) { created } }"""
SEARCH = """query($input: SearchInput!) {
  search(input: $input) { score memory { id } } }"""

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


UPDATE_LINKS = """query($namespace: String!) {
  memoryUpdates(namespace: $namespace, statuses: [CANDIDATE, CONFIRMED], first: 500) { id } }"""


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def load(bench: Bench, data: Path, namespace: str, *,
               client_vectors: bool = True) -> dict[str, int]:
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
                    "at": row["ts"], **({"embedding": vector} if client_vectors else {}),
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
HEADLINE = (1, 2, 3, 4)


@dataclass
class Figures:
    """Every question's figures for one configuration."""

    rows: list[tuple[str, int, Scores]] = field(default_factory=list)  # conv, category, scores
    latencies: list[float] = field(default_factory=list)

    def values(self, metric: str, *, categories: tuple[int, ...] = HEADLINE,
               conv: str | None = None) -> list[float]:
        return [float(getattr(s, metric)) for c, cat, s in self.rows
                if cat in categories and (conv is None or c == conv)]

    def by_conv(self, metric: str = "recall") -> dict[str, list[float]]:
        return {conv: self.values(metric, conv=conv) for conv in self.convs()}

    def convs(self) -> list[str]:
        return sorted({c for c, _, _ in self.rows})


def sweep_configs(sweeps: list[str]) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """`NAME=v1,v2` (values as JSON) -> that parameter's configurations on the default."""
    groups: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for sweep in sweeps:
        name, _, values = sweep.partition("=")
        groups[name] = [(f"{name}={value}", {name: json.loads(value)})
                        for value in values.split(",")]
    return groups


async def evaluate(bench: Bench, data: Path, namespace: str, limit: int,
                   chosen: list[tuple[str, dict[str, Any]]], dump: Path | None = None,
                   client_vectors: bool = True) -> dict[str, Figures]:
    """Ask every question of every chosen configuration; every question's figures
    (memlattice's bench.retrieval_metrics) and latency per configuration.

    Latency is compared within one run, so the configurations take turns on each
    question (in a rotating order) after a warm-up that is not timed: asked one
    configuration after another, the first paid for cold caches and every one
    for whatever else the machine was doing at its time.
    """
    queries = _read_jsonl(data / "queries.jsonl")
    vectors = np.load(data / "queries.minilm.npy")
    memory_of = ids_of_turns(namespace, data)
    figures = {name: Figures() for name, _ in chosen}
    rows: list[dict[str, Any]] = []

    def variables(query: dict[str, Any], vector: Any, config: dict[str, Any]) -> dict[str, Any]:
        vector_part = {"embedding": vector.astype(float).tolist()} if client_vectors else {}
        return {"input": {
            "filter": {"namespace": namespace}, "query": query["question"], **vector_part,
            "sessionId": query["conv"], "scope": "SESSION", "limit": limit, **config,
        }}

    for query, vector in list(zip(queries, vectors))[:WARMUP_QUESTIONS]:
        for _, config in chosen:
            await bench.gql(SEARCH, variables(query, vector, config))
    for number, (query, vector) in enumerate(zip(queries, vectors)):
        evidence = frozenset(memory_of[e] for e in query["evidence"] if e in memory_of)
        if not evidence:
            continue
        turn = number % len(chosen)
        for name, config in chosen[turn:] + chosen[:turn]:
            started = time.perf_counter()
            found = await bench.gql(SEARCH, variables(query, vector, config))
            figures[name].latencies.append(time.perf_counter() - started)
            ids = [h["memory"]["id"] for h in found["search"]][:limit]
            scores = score(ids, evidence, limit)
            figures[name].rows.append((query["conv"], int(query["category"]), scores))
            if dump is not None:
                rows.append({"config": name, "qid": query["qid"], "conv": query["conv"],
                             "category": query["category"], "question": query["question"],
                             "recall": scores.recall, "ndcg": scores.ndcg,
                             "evidence": sorted(evidence), "found": ids,
                             "scores": [h["score"] for h in found["search"]][:limit]})
    if dump is not None:
        dump.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    return figures


def report(figures: dict[str, Figures], limit: int,
           sweeps: dict[str, list[tuple[str, dict[str, Any]]]]) -> None:
    """Print every configuration's figures: overall, per category, per conversation
    (with the spread), latency; then leave-one-conversation-out for each sweep."""
    k = str(limit)
    print(f"{'configuration':<26} {'R@' + k:>6} {'hit':>6} {'nDCG@' + k:>7} {'P@5':>6}"
          + "".join(f" {'c' + str(c):>6}" for c in CATEGORIES) + f" {'p50 ms':>7} {'p95 ms':>7}")
    p50: dict[str, float] = {}
    for name, f in figures.items():
        timed = sorted(f.latencies)
        p50[name] = timed[len(timed) // 2] * 1000
        print(f"{name:<26} {mean(f.values('recall')):>6.3f} {mean(f.values('hit')):>6.3f}"
              f" {mean(f.values('ndcg')):>7.3f} {mean(f.values('precision5')):>6.3f}"
              + "".join(f" {mean(f.values('recall', categories=(c,))):>6.3f}" for c in CATEGORIES)
              + f" {p50[name]:>7.1f} {timed[int(len(timed) * 0.95)] * 1000:>7.1f}")
    convs = next(iter(figures.values())).convs()
    print(f"\n# per conversation: R@{k} (categories 1-4) / nDCG@{k}; multi-hop (c1) R@{k}")
    print(f"{'configuration':<26}" + "".join(f" {c:>15}" for c in convs)
          + f" {'min R':>6} {'max R':>6}" + "".join(f" {'c1 ' + c[-2:]:>6}" for c in convs))
    for name, f in figures.items():
        per = [mean(f.values("recall", conv=c)) for c in convs]
        print(f"{name:<26}" + "".join(
            f" {r:>7.3f}/{mean(f.values('ndcg', conv=c)):<7.3f}" for r, c in zip(per, convs))
            + f" {min(per):>6.3f} {max(per):>6.3f}"
            + "".join(f" {mean(f.values('recall', categories=(1,), conv=c)):>6.3f}"
                      for c in convs))
    if "default" in p50 and "lexical" in p50:
        print(f"\n# default p50 / lexical p50: {p50['default'] / p50['lexical']:.2f}"
              " (target: at most 2.5)")
    groups = dict(sweeps)
    if len(figures) > 1:
        groups["configuration"] = [(name, {}) for name in figures]
    for group, configs in groups.items():
        names = [name for name, _ in configs if name in figures]
        if len(names) < 2:
            continue
        held = leave_one_out({name: figures[name].by_conv() for name in names})
        print(f"\n# leave one conversation out, {group}: chosen on the other two, scored on it")
        for h in held:
            print(f"#   {h.group}: {h.chosen:<26} R@{k} {h.score:.3f}")
        print(f"#   mean held-out R@{k} {mean([h.score for h in held]):.3f}, spread"
              f" {min(h.score for h in held):.3f}..{max(h.score for h in held):.3f}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get(
        "MEMLATTICE_LOCOMO", SHARED_BENCH / "locomo-dev")))
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--configs", nargs="*", metavar="NAME",
                        help="only these configurations (names as printed, e.g. default)")
    parser.add_argument("--sweep", nargs="*", default=[], metavar="FIELD=V1,V2",
                        help="a search input field's values (JSON) on the default, each a"
                             " configuration, with leave-one-conversation-out over them")
    parser.add_argument("--server-embedder", action="store_true",
                        help="send no vectors: the server's own default embedder embeds"
                             " turns and questions")
    parser.add_argument("--dump", type=Path, help="write every question's hits as JSON lines")
    parser.add_argument("--loaded", action="store_true",
                        help="the Neo4j at NEO4J_URI holds the data from an earlier run with"
                             " the same vectors: ask the questions only")
    args = parser.parse_args()
    sweeps = sweep_configs(args.sweep)
    chosen = [(name, config) for name, config in CONFIGS
              if (not args.configs and not sweeps) or name in (args.configs or [])]
    chosen += [c for configs in sweeps.values() for c in configs]
    embedding = EmbeddingSettings() if args.server_embedder else None
    async with bench_service(dimension=384, embedding=embedding) as bench:
        namespace = "bench/locomo"
        started = time.monotonic()
        if not args.loaded:
            sizes = await load(bench, args.data, namespace,
                               client_vectors=not args.server_embedder)
            print(f"# loaded {sum(sizes.values())} turns of {len(sizes)} conversations"
                  f" in {time.monotonic() - started:.1f}s")
            links = (await bench.gql(UPDATE_LINKS, {"namespace": namespace}))["memoryUpdates"]
            print(f"# update links the write path made: {len(links)} (these chats state few"
                  " facts that change: most links here are false)")
        print("# vectors: " + ("the server's own embedder" if args.server_embedder else
                               "client MiniLM"))
        figures = await evaluate(bench, args.data, namespace, args.limit, chosen, args.dump,
                                 client_vectors=not args.server_embedder)
        report(figures, args.limit, sweeps)


if __name__ == "__main__":
    asyncio.run(main())
