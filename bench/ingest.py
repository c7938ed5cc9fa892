"""Ingestion: memories per second through `writeMemories`, beside a bare UNWIND.

    python -m bench.ingest [--count 20000] [--batch 1000] [--vectors base64|json]

Both paths write the same properties (client vectors, 384-d) into the same
indexed `:Memory` label, in batches of the same size: the ratio is the
service's own cost (GraphQL parsing, validation, audit entries) over what
Neo4j needs anyway. Vectors travel as the `Vector` scalar's base64 float32 by
default (what a client sending its own vectors should use); `--vectors json`
sends JSON arrays, which cost the server a JSON parse of every number.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import time
import uuid
from datetime import datetime, timezone

import numpy as np

from bench._harness import bench_service, synthetic_memories

WRITE = "mutation($inputs: [MemoryInput!]!) { writeMemories(inputs: $inputs) { id } }"
BARE = "UNWIND $rows AS row CREATE (m:Memory) SET m = row"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--vectors", choices=("base64", "json"), default="base64")
    args = parser.parse_args()
    texts, vectors = synthetic_memories(args.count, args.dimension)
    now = datetime.now(timezone.utc)
    async with bench_service(dimension=args.dimension) as bench:
        # Warm up both paths (JIT, page cache, query plans) outside the timing.
        await bench.gql(WRITE, {"inputs": [{"namespace": "bench/warm", "content": "warm up",
                                            "embedding": vectors[0].tolist()}]})
        rounds = []
        for round_ in range(2):
            bare_rows = [{
                "id": str(uuid.uuid4()), "namespace": f"bench/bare{round_}", "content": text,
                "embedding": vector.tolist(), "status": "active", "scopeKey": "namespace",
                "createdAt": now, "updatedAt": now, "version": 1, "accessCount": 0,
                "tags": [], "metadataJson": "{}", "confidence": 1.0, "memoryType": "note",
            } for text, vector in zip(texts, vectors)]
            started = time.perf_counter()
            for i in range(0, len(bare_rows), args.batch):
                await bench.graph.write((BARE, {"rows": bare_rows[i:i + args.batch]}))
            bare = args.count / (time.perf_counter() - started)

            inputs = [{"namespace": f"bench/api{round_}", "content": text,
                       "embedding": encode(vector, args.vectors)}
                      for text, vector in zip(texts, vectors)]
            started = time.perf_counter()
            for i in range(0, len(inputs), args.batch):
                await bench.gql(WRITE, {"inputs": inputs[i:i + args.batch]})
            api = args.count / (time.perf_counter() - started)
            rounds.append((bare, api))
        print(f"{'round':<6} {'bare UNWIND/s':>14} {'writeMemories/s':>16} {'ratio':>7}")
        for i, (bare, api) in enumerate(rounds):
            print(f"{i:<6} {bare:>14.0f} {api:>16.0f} {api / bare:>7.2f}")
        best_bare = max(b for b, _ in rounds)
        best_api = max(a for _, a in rounds)
        print(f"best   {best_bare:>14.0f} {best_api:>16.0f} {best_api / best_bare:>7.2f}"
              f"   ({args.count} memories, batches of {args.batch}, {args.dimension}-d,"
              f" {args.vectors} vectors)")


def encode(vector: np.ndarray, how: str) -> str | list[float]:
    if how == "json":
        return vector.tolist()
    return base64.b64encode(vector.astype("<f4").tobytes()).decode()


if __name__ == "__main__":
    asyncio.run(main())
