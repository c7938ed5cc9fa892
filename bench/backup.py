"""Backup and restore time per 100k memories (`memlattice backup` / `restore`).

    python -m bench.backup [--count 20000] [--dimension 256]

Writes `count` memories through `writeMemories` (client vectors; each with its
audit entry and events, as the service writes them) and `count / 2`
relationships into a private Neo4j, backs the whole database up to a
temporary file, then restores the file into a second, fresh private Neo4j
(`restore_store`: migrate, load, migrate). Prints both times, scaled linearly
to 100k memories, the file's size, and a baseline measured in the same run:
a bare scan of every node and relationship through the driver (what reading
the store costs anyway), so the backup's own cost reads as a ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import uuid
from pathlib import Path

from bench._harness import PASSWORD, bench_service, synthetic_memories
from memlattice.graph.backup.reads import StoreSnapshot, in_store_snapshot
from memlattice.graph.client import GraphClient
from memlattice.portability.backup import back_up
from memlattice.portability.restore import restore_store
from tests._live import private_neo4j

WRITE = "mutation($inputs: [MemoryInput!]!) { writeMemories(inputs: $inputs) { id } }"
EDGES = ("mutation($ns: String!, $inputs: [EdgeSpecInput!]!) {"
         " addEdges(namespace: $ns, inputs: $inputs) { id } }")


async def bare_scan(client: GraphClient) -> float:
    """The backup's own queries in one transaction, records fetched and dropped."""
    async def scan(snapshot: StoreSnapshot) -> None:
        async for _ in snapshot.nodes():
            pass
        async for _ in snapshot.relationships():
            pass

    started = time.perf_counter()
    await in_store_snapshot(client, scan)
    return time.perf_counter() - started


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--dimension", type=int, default=256)
    args = parser.parse_args()
    texts, vectors = synthetic_memories(args.count, args.dimension)
    ns = f"bench/backup-{uuid.uuid4().hex[:8]}"
    scale = 100_000 / args.count
    async with bench_service(dimension=args.dimension) as bench:
        ids: list[str] = []
        for i in range(0, args.count, 200):
            written = await bench.gql(WRITE, {"inputs": [
                {"namespace": ns, "content": text, "embedding": vector.tolist(),
                 "tags": [f"t{j % 7}"]}
                for j, (text, vector) in enumerate(zip(texts[i:i + 200],
                                                       vectors[i:i + 200]), start=i)]})
            ids += [m["id"] for m in written["writeMemories"]]
        for i in range(0, len(ids) - 1, 400):
            await bench.gql(EDGES, {"ns": ns, "inputs": [
                {"sourceId": ids[j], "targetId": ids[j + 1], "type": "RELATED"}
                for j in range(i, min(i + 400, len(ids) - 1), 2)]})
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "store.backup.gz"
            scanned = await bare_scan(bench.graph)
            started = time.perf_counter()
            report = await back_up(bench.graph, path)
            backed_up = time.perf_counter() - started
            size = path.stat().st_size
            with private_neo4j(PASSWORD, folder="bench-neo4j-restore", heap="2g",
                               pagecache="2g") as target:
                client = GraphClient.connect(target.uri, target.user, target.password, "neo4j")
                try:
                    started = time.perf_counter()
                    restored, _ = await restore_store(
                        client, path, dimension=args.dimension,
                        index=bench.settings.vector_index)
                    restore_s = time.perf_counter() - started
                finally:
                    await client.close()
    print(f"store: {args.count} memories, {report.nodes} nodes, {report.relationships}"
          f" relationships; file {size / 1e6:.1f} MB")
    print(f"bare scan (baseline): {scanned:.1f}s")
    print(f"backup: {backed_up:.1f}s ({backed_up / scanned:.1f}x the bare scan);"
          f" {backed_up * scale:.0f}s per 100k memories (linear from {args.count})")
    print(f"restore: {restore_s:.1f}s ({restored.nodes} nodes, {restored.relationships}"
          f" relationships); {restore_s * scale:.0f}s per 100k memories")


if __name__ == "__main__":
    asyncio.run(main())
