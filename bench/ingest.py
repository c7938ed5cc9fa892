"""Ingestion: memories per second through `writeMemories`, beside a bare UNWIND.

    python -m bench.ingest [--count 20000] [--batch 1000] [--vectors base64|json]
                           [--writers 1,2]

Both paths write the same properties (client vectors, 384-d) into the same
indexed `:Memory` label, in batches of the same size: the ratio is the
service's own cost (GraphQL parsing, validation, audit entries) over what
Neo4j needs anyway. Vectors travel as the `Vector` scalar's base64 float32 by
default (what a client sending its own vectors should use); `--vectors json`
sends JSON arrays, which cost the server a JSON parse of every number.
With several writers (`--writers`), that many batches are in flight at once on
both paths: Neo4j indexes a transaction's vectors in the committing thread, so
concurrent batches are how a multi-core server is kept busy.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import numpy as np

from bench._harness import bench_service, synthetic_memories
from memlattice.graph.codec import epoch_parts
from memlattice.graph.projections import instant

WRITE = "mutation($inputs: [MemoryInput!]!) { writeMemories(inputs: $inputs) { id } }"
# Times travel as epoch parts, as the service sends them (graph.codec.epoch_parts):
# a datetime parameter costs the driver more Python time than the rest of a row.
BARE = ("UNWIND $rows AS row CREATE (m:Memory) SET m = row.props,"
        f" m.createdAt = {instant('row.at')}, m.updatedAt = {instant('row.at')}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--vectors", choices=("base64", "json"), default="base64")
    parser.add_argument("--writers", default="1,2",
                        help="comma-separated numbers of concurrent batch writers to run")
    args = parser.parse_args()
    writer_counts = [int(w) for w in args.writers.split(",")]
    texts, vectors = synthetic_memories(args.count, args.dimension)
    now = datetime.now(UTC)
    async with bench_service(dimension=args.dimension) as bench:
        # Warm up both paths (JIT, page cache, query plans) outside the timing.
        await bench.gql(WRITE, {"inputs": [{"namespace": "bench/warm", "content": "warm up",
                                            "embedding": vectors[0].tolist()}]})
        rounds: list[tuple[int, float, float]] = []
        for round_, writers in enumerate(w for w in writer_counts for _ in range(2)):
            bare_rows = [{"props": {
                "id": str(uuid.uuid4()), "namespace": f"bench/bare{round_}", "content": text,
                "embedding": vector.tolist(), "status": "active", "scopeKey": "namespace",
                "version": 1, "accessCount": 0,
                "tags": [], "metadataJson": "{}", "confidence": 1.0, "memoryType": "note",
            }, "at": epoch_parts(now)} for text, vector in zip(texts, vectors)]
            bare = await rate(args.count, args.batch, writers, lambda rows: bench.graph.write(
                (BARE, {"rows": rows})), bare_rows)
            inputs = [{"namespace": f"bench/api{round_}", "content": text,
                       "embedding": encode(vector, args.vectors)}
                      for text, vector in zip(texts, vectors)]
            api = await rate(args.count, args.batch, writers,
                             lambda rows: bench.gql(WRITE, {"inputs": rows}), inputs)
            rounds.append((writers, bare, api))
        print(f"{'writers':<8} {'bare UNWIND/s':>14} {'writeMemories/s':>16} {'ratio':>7}")
        for writers, bare, api in rounds:
            print(f"{writers:<8} {bare:>14.0f} {api:>16.0f} {api / bare:>7.2f}")
        for writers in writer_counts:
            best_bare = max(b for w, b, _ in rounds if w == writers)
            best_api = max(a for w, _, a in rounds if w == writers)
            print(f"best {writers:<3} {best_bare:>14.0f} {best_api:>16.0f}"
                  f" {best_api / best_bare:>7.2f}   ({args.count} memories, batches of"
                  f" {args.batch}, {args.dimension}-d, {args.vectors} vectors)")


async def rate(count: int, batch: int, writers: int,
               write: Callable[[list[Any]], Awaitable[object]], rows: list[Any]) -> float:
    """Rows per second writing `rows` in batches, `writers` batches in flight at a time."""
    batches = [rows[i:i + batch] for i in range(0, len(rows), batch)]
    queue: asyncio.Queue[list[Any]] = asyncio.Queue()
    for b in batches:
        queue.put_nowait(b)

    async def writer() -> None:
        while not queue.empty():
            await write(queue.get_nowait())

    started = time.perf_counter()
    await asyncio.gather(*(writer() for _ in range(writers)))
    return count / (time.perf_counter() - started)


def encode(vector: np.ndarray, how: str) -> str | list[float]:
    if how == "json":
        return vector.tolist()
    return base64.b64encode(vector.astype("<f4").tobytes()).decode()


if __name__ == "__main__":
    asyncio.run(main())
