"""Export and import throughput, and the exporter's memory use, on one namespace.

    python -m bench.transfer [--count 20000] [--dimension 384]

Writes `count` memories (client vectors) and `count / 2` relationships,
exports the namespace to a temporary file (records/s, file size, peak Python
memory while exporting), then imports the file into a new namespace with
remapped ids (records/s, vectors reused). Memory use should stay flat as the
count grows: the exporter holds one page at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path

from bench._harness import bench_service, synthetic_memories
from memlattice.graph.transfer import TransferGraph
from memlattice.portability.exporter import export_namespace
from memlattice.portability.importer import import_export

WRITE = "mutation($inputs: [MemoryInput!]!) { writeMemories(inputs: $inputs) { id } }"
EDGES = ("mutation($ns: String!, $inputs: [EdgeSpecInput!]!) {"
         " addEdges(namespace: $ns, inputs: $inputs) { id } }")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--dimension", type=int, default=384)
    args = parser.parse_args()
    texts, vectors = synthetic_memories(args.count, args.dimension)
    source = f"bench/transfer-{uuid.uuid4().hex[:8]}"
    async with bench_service(dimension=args.dimension) as bench:
        ids: list[str] = []
        for i in range(0, args.count, 1000):
            written = await bench.gql(WRITE, {"inputs": [
                {"namespace": source, "content": text, "embedding": vector.tolist(),
                 "tags": [f"t{j % 7}"]}
                for j, (text, vector) in enumerate(zip(texts[i:i + 1000],
                                                       vectors[i:i + 1000]), start=i)]})
            ids += [m["id"] for m in written["writeMemories"]]
        for i in range(0, len(ids) - 1, 2000):
            await bench.gql(EDGES, {"ns": source, "inputs": [
                {"sourceId": ids[j], "targetId": ids[j + 1], "type": "RELATED"}
                for j in range(i, min(i + 2000, len(ids) - 1), 2)]})
        graph = TransferGraph(bench.graph)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "export.jsonl"
            started = time.perf_counter()
            with path.open("w", encoding="utf-8") as sink:
                counts = await export_namespace(graph, source, sink)
            exported = time.perf_counter() - started
            # Again under tracemalloc (which slows Python down) for the memory peak only.
            tracemalloc.start()
            with path.open("w", encoding="utf-8") as sink:
                await export_namespace(graph, source, sink)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            records = sum(counts.values())
            size = path.stat().st_size

            started = time.perf_counter()
            report = await import_export(graph, path, embedder=None, dimension=args.dimension,
                                         namespace=f"{source}-copy", remap_ids=True)
            imported = time.perf_counter() - started
        print(f"records: {counts} ({records} lines, {size / 1e6:.1f} MB)")
        print(f"export: {exported:.1f}s, {records / exported:.0f} records/s,"
              f" peak Python memory {peak / 1e6:.1f} MB")
        print(f"import (validate + write, remapped ids): {imported:.1f}s,"
              f" {records / imported:.0f} records/s; {report.counts}")


if __name__ == "__main__":
    asyncio.run(main())
