"""Recall of scoped vector search against exact search, by filter selectivity.

    python -m bench.filtered_recall [--count 100000] [--users 10000] [--queries 50]
                                    [--vectors text|isotropic] [--others 0]

Memories are spread over `users` user scopes (one user = count/users
memories: 0.01% with the defaults). A search whose scope chain admits k users
selects k/users of the namespace; for selectivities from 100% down to one
user, the service's search (`MemoryService.search`, SEMANTIC mode, SIMILARITY
scoring, limit 10: the path a GraphQL `search` takes, pool sizing included)
is compared with an exact top 10 computed in numpy over exactly the admitted
memories.

`--others N` first loads N more memories of the same distribution into three
other namespaces: the vector index is shared, so the namespace filter itself
then selects only part of it, as it does on a server with many tenants.

Vectors (`--vectors`): `text` (default) are shaped like real sentence
embeddings (bench._harness.text_like_memories); `isotropic` are topic centres
plus isotropic noise, a much harder case for any approximate index. Queries are
fresh samples from the same distribution as the memories, never stored ones.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from datetime import UTC, datetime

import numpy as np

from bench._harness import bench_service, synthetic_memories, text_like_memories
from memlattice.core.auth import Principal
from memlattice.core.model import MemoryFilter, ScoringMode, SearchMode, validated
from memlattice.core.search_config import SearchConfig
from memlattice.server.app import runtime_of
from memlattice.services.memories import SearchRequest

WRITE = "mutation($inputs: [MemoryInput!]!) { writeMemories(inputs: $inputs) { id } }"
NAMESPACE = "bench/filtered"
TENANT = Principal.development().tenant(NAMESPACE, write=False)
SELECTIVITIES = (1.0, 0.5, 0.25, 0.1, 0.01, 0.001, 0.0001)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--vectors", choices=("text", "isotropic"), default="text")
    parser.add_argument("--dimension", type=int, default=384,
                        help="isotropic vectors only (text-like ones are 384-d)")
    parser.add_argument("--noise", type=float, default=0.5,
                        help="isotropic spread around topic centres; 1.5 is near-uniform")
    parser.add_argument("--others", type=int, default=0,
                        help="memories of other namespaces sharing the index, loaded first")
    args = parser.parse_args()
    if args.vectors == "text":
        args.dimension = 384

    def sample(count: int, start: int) -> tuple[list[str], np.ndarray]:
        if args.vectors == "text":
            return text_like_memories(count, start=start)
        return synthetic_memories(count, args.dimension, start=start, noise=args.noise)

    async with bench_service(dimension=args.dimension, heap="2g", pagecache="3g") as bench:
        ids: list[str] = []
        users: list[int] = []
        all_vectors = []
        started = time.perf_counter()
        for offset in range(0, args.others, 1000):
            # Other tenants: the same distribution, samples the target never holds.
            texts, vectors = sample(min(1000, args.others - offset), 10**8 + offset)
            await bench.gql(WRITE, {"inputs": [
                {"namespace": f"{NAMESPACE}-other-{offset // 1000 % 3}", "content": t,
                 "embedding": v.tolist()} for t, v in zip(texts, vectors)]})
        for offset in range(0, args.count, 1000):
            count = min(1000, args.count - offset)
            texts, vectors = sample(count, offset)
            batch_users = [(offset + i) % args.users for i in range(count)]
            written = await bench.gql(WRITE, {"inputs": [
                {"namespace": NAMESPACE, "content": t, "embedding": v.tolist(), "scope": "USER",
                 "userId": f"u{u}"} for t, v, u in zip(texts, vectors, batch_users)]})
            ids.extend(m["id"] for m in written["writeMemories"])
            users.extend(batch_users)
            all_vectors.append(vectors)
        await bench.graph.write(("CALL db.awaitIndexes(600)", {}))
        print(f"# {args.count} {args.vectors} memories over {args.users} users"
              f" (and {args.others} in other namespaces) loaded in"
              f" {time.perf_counter() - started:.1f}s")
        matrix = np.concatenate(all_vectors)
        user_of = np.array(users)
        service = runtime_of(bench.app).service
        config = SearchConfig(mode=SearchMode.SEMANTIC, scoring=ScoringMode.SIMILARITY, limit=10)
        # Past every stored offset: new samples around the same topics.
        _, queries = sample(args.queries, 10**9)
        rng = np.random.default_rng(5)
        now = datetime.now(UTC)
        # Right after loading, caches are cold and the index is still merging its
        # segments: the first queries take twice as long, which is not the figure.
        _, warmup = sample(100, 2 * 10**9)
        for q in warmup:
            await service.search(SearchRequest(
                filter=validated(MemoryFilter, namespace=NAMESPACE), vector=tuple(q.tolist()),
                config=config, now=now), tenant=TENANT)
        print(f"{'selectivity':>12} {'users':>6} {'memories':>9} {'recall@10':>10} {'p50 ms':>8}")
        # The middle of the range is where filtered HNSW search is weakest: too
        # selective for the graph walk to fill its pool quickly, not selective
        # enough for the index to fall back to an exact scan of the filter.
        for fraction in SELECTIVITIES:
            k = round(fraction * args.users)
            if k < 1:
                break
            recalls, latencies = [], []
            for q in queries:
                chosen = rng.choice(args.users, size=k, replace=False)
                mask = np.isin(user_of, chosen)
                admitted = np.flatnonzero(mask)
                exact = admitted[np.argsort(-(matrix[admitted] @ q))[:10]]
                flt = validated(MemoryFilter, namespace=NAMESPACE)
                if k < args.users:
                    flt = flt.model_copy(update={"scope_keys": tuple(f"user:u{u}" for u in chosen)})
                t0 = time.perf_counter()
                hits = await service.search(SearchRequest(
                    filter=flt, vector=tuple(q.tolist()), config=config, now=now), tenant=TENANT)
                latencies.append(time.perf_counter() - t0)
                got = {h.memory.id for h in hits}
                truth = {ids[i] for i in exact}
                recalls.append(len(got & truth) / len(truth))
            latencies.sort()
            print(f"{fraction:>12.4%} {k:>6} {int(mask.sum()):>9} {np.mean(recalls):>10.3f}"
                  f" {latencies[len(latencies) // 2] * 1000:>8.1f}")


if __name__ == "__main__":
    asyncio.run(main())
