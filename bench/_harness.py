"""What every benchmark shares: a real Neo4j, the real app, a GraphQL caller.

Benchmarks use a private Neo4j (provisioned like the tests', on a free port,
removed afterwards) unless `NEO4J_URI` is set, and the app configured for
client vectors of the benchmark's dimension (`provider=none`), so numbers
measure the service and the database, not an embedding model.
"""

from __future__ import annotations

import contextlib
import os
import statistics
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from asgi_lifespan import LifespanManager
from starlette.applications import Starlette

from memlattice.core.settings import (
    EmbeddingSettings,
    FactsLLMSettings,
    Neo4jSettings,
    Settings,
)
from memlattice.graph.client import GraphClient
from memlattice.server.app import create_app
from tests._live import private_neo4j

SHARED_BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"
PASSWORD = "memlattice-bench"


class GraphQLError(RuntimeError):
    pass


@dataclass
class Bench:
    http: httpx.AsyncClient
    settings: Settings
    graph: GraphClient
    app: Starlette

    async def gql(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await self.http.post("/graphql", json={"query": query,
                                                          "variables": variables or {}})
        body: dict[str, Any] = response.json()
        if body.get("errors"):
            raise GraphQLError(body["errors"][0]["message"])
        data: dict[str, Any] = body["data"]
        return data


@asynccontextmanager
async def bench_service(*, dimension: int, heap: str = "2g", pagecache: str = "2g",
                        embedding: EmbeddingSettings | None = None,
                        facts_llm: FactsLLMSettings | None = None) -> AsyncIterator[Bench]:
    """The app over a private Neo4j; `embedding`: a server-side embedder in place of
    client vectors of `dimension` (bench.knowledge_update, bench.locomo --server-embedder);
    `facts_llm`: the write-side LLM (bench.update_judge), else as the environment says."""
    async with contextlib.AsyncExitStack() as stack:
        if os.environ.get("NEO4J_URI"):
            neo4j = Neo4jSettings()
        else:
            address = stack.enter_context(private_neo4j(PASSWORD, folder="bench-neo4j",
                                                        heap=heap, pagecache=pagecache))
            neo4j = Neo4jSettings(uri=address.uri, password=address.password)
        # Keyless: the figures are of the service and the database, not of key checks.
        settings = Settings(environment="test", neo4j=neo4j, auth_mode="keyless",
                            embedding=embedding or EmbeddingSettings(provider="none",
                                                                     dimension=dimension),
                            facts_llm=facts_llm or FactsLLMSettings())
        app = create_app(settings)
        graph = GraphClient.connect(neo4j.uri or "", neo4j.user,
                                    neo4j.password.get_secret_value(), neo4j.database)
        stack.push_async_callback(graph.close)
        manager = await stack.enter_async_context(
            LifespanManager(app, startup_timeout=600, shutdown_timeout=120))
        transport = httpx.ASGITransport(app=manager.app)
        http = await stack.enter_async_context(
            httpx.AsyncClient(transport=transport, base_url="http://bench", timeout=600))
        yield Bench(http=http, settings=settings, graph=graph, app=app)


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary(values: Sequence[float]) -> str:
    return (f"p50 {percentile(values, 50) * 1000:7.2f} ms  p95 {percentile(values, 95) * 1000:7.2f}"
            f" ms  mean {statistics.fmean(values) * 1000:7.2f} ms  n={len(values)}")


WORDS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "kettle", "garden", "lisbon", "porto", "paris", "berlin", "coffee", "tea", "music", "guitar", "piano", "running", "hiking", "swimming", "book", "novel", "poem", "meeting", "project", "deadline", "budget", "invoice", "travel", "flight", "hotel", "dinner", "lunch", "breakfast", "birthday", "gift", "doctor", "dentist", "school", "teacher", "exam", "holiday", "summer", "winter", "spring", "autumn", "rain", "snow", "sunny", "dog", "cat", "bird", "fish", "car", "bike", "train", "bus", "plane", "ship", "river", "mountain", "lake", "forest", "beach", "city"]


def synthetic_memories(count: int, dimension: int, *, seed: int = 7, start: int = 0,
                       noise: float = 0.5) -> tuple[list[str], np.ndarray]:  # noqa: F821
    """Reproducible texts and unit vectors around 64 topic centres.

    `noise` is the per-dimension spread around a centre (centres have unit
    per-dimension scale): 0.5 keeps topics apart the way text embeddings
    cluster; 1.5 makes vectors nearly uniform on the sphere, the hardest case
    for any approximate index.
    """
    import numpy as np

    rng = np.random.default_rng(seed + start)
    centres = np.random.default_rng(seed).normal(size=(64, dimension))
    labels = rng.integers(0, len(centres), size=count)
    vectors = centres[labels] + rng.normal(scale=noise, size=(count, dimension))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [" ".join(rng.choice(WORDS, size=12)) for _ in range(count)]
    return texts, vectors.astype(np.float32)


def text_like_memories(count: int, *, seed: int = 7, start: int = 0, spread: float = 1.0,
                       source: Path | None = None) -> tuple[list[str], np.ndarray]:  # noqa: F821
    """Reproducible texts and 384-d unit vectors shaped like real sentence embeddings.

    Each vector is a real MiniLM embedding of a LoCoMo turn (the anchor) plus
    noise drawn with the covariance of all those embeddings, scaled by
    `spread`: neighbourhoods around real sentences, with the uneven spectrum
    (a few strong directions, a long weak tail) that text embeddings have and
    isotropic noise (`synthetic_memories`) lacks. That spectrum is what an
    approximate index exploits, so recall here is the one to expect on text.
    """
    import numpy as np

    anchors = np.load(source or SHARED_BENCH / "locomo-dev" / "memories.minilm.npy")
    anchors = anchors.astype(np.float64)
    centred = anchors - anchors.mean(axis=0)
    _, spectrum, basis = np.linalg.svd(centred, full_matrices=False)
    scale = spectrum / np.sqrt(len(anchors))
    rng = np.random.default_rng(seed + start)
    picks = rng.integers(0, len(anchors), size=count)
    noise = (rng.normal(size=(count, len(scale))) * scale) @ basis
    vectors = anchors[picks] + spread * noise
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [" ".join(rng.choice(WORDS, size=12)) for _ in range(count)]
    return texts, vectors.astype(np.float32)
