"""Search latency through GraphQL beside the bare vector-index query.

    python -m bench.latency [--sizes 10000,100000] [--queries 300] [--vectors base64|json]

For each size, memories (384-d client vectors, synthetic text) are loaded into
one namespace; then the same query vectors go, interleaved, to
  - bare:     the driver running `SEARCH ... VECTOR INDEX ... LIMIT 10` itself,
  - bare-hyb: the driver running that vector query and the fulltext query
              (the same words as hybrid's, fenced to the namespace in the index
              as the service does) in one statement, 10 rows each,
  - bare-pool: the same two queries with the pools the default search ranks
              (50 vector candidates; the fulltext index asked for 200 and 50
              kept), to tell what the pools cost from what the service adds,
  - hyb-cypher: the Cypher the hybrid search itself sent for this query
              (captured from the app's driver, bench._bare) replayed through the
              driver: the database's part of hybrid, so that what is left is the
              service's own (ranking, rows, GraphQL, HTTP),
  - semantic: GraphQL `search` in SEMANTIC mode (HTTP handling, validation,
              filters, scoring, explanations, access counting included),
  - hybrid:   GraphQL `search` with query text too, the default search,
  - hyb-whole: the same search selecting every stored field of each memory:
              what every search cost before the candidates carried only what
              ranking and the selection read (graph.projections.project_memory).
p50/p95 are printed with the ratio to the bare vector query of the same run,
and hybrid's p50 against bare-hyb's, its own floor (and against bare-pool's
and its own Cypher's).
Query vectors travel as the `Vector` scalar's base64 float32 by default (what
a client sending its own vectors should use: formatting 384 floats as JSON
text costs the client more than the server's whole GraphQL layer);
`--vectors json` sends JSON arrays.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from bench._bare import Capturer, replay, tap
from bench._harness import bench_service, percentile, synthetic_memories
from bench.ingest import encode
from memlattice.core.lucene import any_terms
from memlattice.core.memory_fields import READ_FIELDS, camel_case
from memlattice.graph.codec import search_token
from memlattice.server.app import runtime_of

WRITE = "mutation($inputs: [MemoryInput!]!) { writeMemories(inputs: $inputs) { id } }"
SEARCH = """query($input: SearchInput!) {
  search(input: $input) { score similarityScore ftsScore memory { id content } } }"""
SEARCH_WHOLE = SEARCH.replace("memory { id content }", "memory { " + " ".join(
    camel_case(f.name) for f in READ_FIELDS if f.property) + " }")
BARE = (
    "CYPHER 25 MATCH (m:Memory) SEARCH m IN (VECTOR INDEX memory_embedding FOR $vector"
    " WHERE m.namespace = $namespace LIMIT 10) SCORE AS score"
    " RETURN m.id AS id, m.content AS content, score"
)
BARE_HYBRID = (
    "CYPHER 25\n"
    "CALL () { MATCH (m:Memory) SEARCH m IN (VECTOR INDEX memory_embedding FOR $vector"
    " WHERE m.namespace = $namespace LIMIT 10) SCORE AS score"
    " RETURN collect({id: m.id, content: m.content, score: score}) AS semantic }\n"
    "CALL () { CALL db.index.fulltext.queryNodes('memory_fulltext', $lucene, {limit: 10})"
    " YIELD node AS m, score"
    " RETURN collect({id: m.id, content: m.content, score: score}) AS lexical }\n"
    "RETURN semantic, lexical"
)

# The pools of the default search: SearchConfig.candidate_count (max(50, 5 x limit))
# from each index, the fulltext index asked for four times that (graph.recall_query).
BARE_POOL = (BARE_HYBRID.replace("LIMIT 10)", "LIMIT 50)")
             .replace("{limit: 10}) YIELD node AS m, score",
                      "{limit: 200}) YIELD node AS m, score WITH m, score LIMIT 50"))


def fenced(text: str, namespace: str) -> str:
    """The hybrid search's words as the service sends them to the fulltext index."""
    return f"({any_terms(text)}) AND nsToken:{search_token(namespace)}"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--vectors", choices=("base64", "json"), default="base64")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    async with bench_service(dimension=args.dimension, heap="2g", pagecache="3g") as bench:
        tap(runtime_of(bench.app).client.driver)
        capture = Capturer(bench.http)
        loaded = 0
        namespace = "bench/latency"
        print(f"# query vectors sent as {args.vectors}")
        print(f"{'size':>8} {'path':<9} {'p50 ms':>8} {'p95 ms':>8} {'p50 x bare':>11}")
        hybrid_ratios: list[str] = []
        for size in sizes:
            started = time.perf_counter()
            while loaded < size:
                count = min(1000, size - loaded)
                texts, vectors = synthetic_memories(count, args.dimension, start=loaded)
                await bench.gql(WRITE, {"inputs": [
                    {"namespace": namespace, "content": t, "embedding": v.tolist()}
                    for t, v in zip(texts, vectors)]})
                loaded += count
            await bench.graph.write(("CALL db.awaitIndexes(600)", {}))
            print(f"# {size} memories loaded in {time.perf_counter() - started:.1f}s")
            # Fresh samples around the stored topics, as real queries land near memories.
            q_texts, q_vectors = synthetic_memories(args.queries, args.dimension, start=10**9)
            timings: dict[str, list[float]] = {"bare": [], "bare-hyb": [], "bare-pool": [],
                                               "hyb-cypher": [], "semantic": [], "hybrid": [],
                                               "hyb-whole": []}
            for i, (text, vector) in enumerate(zip(q_texts, q_vectors)):
                v = vector.tolist()
                sent = encode(vector, args.vectors)
                words = " ".join(text.split()[:4])
                hybrid = {"input": {"filter": {"namespace": namespace}, "embedding": sent,
                                    "query": words, "limit": 10}}
                # What this hybrid search sends, caches warm (its recall statement).
                cypher = await capture.capture({"query": SEARCH, "variables": hybrid})
                runs = [
                    # Each call runs in this iteration only (awaited below), so the
                    # loop's current values are the ones they read.
                    ("bare", lambda: bench.graph.read((BARE, {
                        "vector": v, "namespace": namespace}))),  # noqa: B023
                    ("bare-hyb", lambda: bench.graph.read((BARE_HYBRID, {
                        "vector": v, "namespace": namespace,  # noqa: B023
                        "lucene": fenced(words, namespace)}))),  # noqa: B023
                    ("bare-pool", lambda: bench.graph.read((BARE_POOL, {
                        "vector": v, "namespace": namespace,  # noqa: B023
                        "lucene": fenced(words, namespace)}))),  # noqa: B023
                    ("hyb-cypher", lambda: replay(
                        bench.graph.driver, bench.graph.database, cypher,  # noqa: B023
                        fresh_ids=False)),
                    ("semantic", lambda: bench.gql(SEARCH, {"input": {
                        "filter": {"namespace": namespace}, "embedding": sent,  # noqa: B023
                        "mode": "SEMANTIC", "scoring": "SIMILARITY", "limit": 10}})),
                    ("hybrid", lambda: bench.gql(SEARCH, hybrid)),  # noqa: B023
                    ("hyb-whole", lambda: bench.gql(SEARCH_WHOLE, hybrid)),  # noqa: B023
                ]
                for name, call in runs[i % len(runs):] + runs[:i % len(runs)]:
                    started = time.perf_counter()
                    await call()
                    if i >= 20:  # the first queries warm caches and plans
                        timings[name].append(time.perf_counter() - started)
            bare50 = percentile(timings["bare"], 50)
            for name, values in timings.items():
                p50, p95 = percentile(values, 50), percentile(values, 95)
                print(f"{size:>8} {name:<9} {p50 * 1000:>8.2f} {p95 * 1000:>8.2f}"
                      f" {p50 / bare50:>11.2f}")
            hybrid_ratios.append(
                f"{size}: hybrid p50 {percentile(timings['hybrid'], 50) * 1000:.2f} ms ="
                f" {percentile(timings['hybrid'], 50) / percentile(timings['bare-hyb'], 50):.2f}"
                " x bare vector + fulltext,"
                f" {percentile(timings['hybrid'], 50) / percentile(timings['bare-pool'], 50):.2f}"
                " x the same with the default's pools; its own Cypher"
                f" {percentile(timings['hyb-cypher'], 50) * 1000:.2f} ms ="
                f" {percentile(timings['hyb-cypher'], 50) / percentile(timings['bare-hyb'], 50):.2f}"
                " x bare vector + fulltext; selecting every memory field"
                f" {percentile(timings['hyb-whole'], 50) * 1000:.2f} ms ="
                f" {percentile(timings['hyb-whole'], 50) / percentile(timings['hybrid'], 50):.2f}"
                " x hybrid")
        for line in hybrid_ratios:
            print(f"# {line}")


if __name__ == "__main__":
    asyncio.run(main())
