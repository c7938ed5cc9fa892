"""What every benchmark shares: a real Neo4j, the real app, a GraphQL caller.

Benchmarks use a private Neo4j (provisioned like the tests', on a free port,
removed afterwards) unless `NEO4J_URI` is set, and the app configured for
client vectors of the benchmark's dimension (`provider=none`), so numbers
measure the service and the database, not an embedding model.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import time
import uuid
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
    LocalNeo4jSettings,
    Neo4jSettings,
    Settings,
    default_cache_dir,
)
from memlattice.graph.client import GraphClient
from memlattice.server.app import create_app

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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def bench_service(*, dimension: int, heap: str = "2g",
                        pagecache: str = "2g") -> AsyncIterator[Bench]:
    """The app on a private Neo4j (or NEO4J_URI's). The private server is stopped and
    removed however the benchmark ends: Ctrl-C, SIGTERM (`memlattice bench` turns it into
    KeyboardInterrupt), or an error, even one raised while it was still starting."""
    local: LocalNeo4jSettings | None = None
    graph: GraphClient | None = None
    try:
        if os.environ.get("NEO4J_URI"):
            neo4j = Neo4jSettings()
        else:
            from memlattice import neo4j_local

            local = LocalNeo4jSettings(
                home=default_cache_dir() / "bench-neo4j" / uuid.uuid4().hex[:8],
                bolt_port=_free_port(), heap=heap, pagecache=pagecache,
            )
            started = time.monotonic()
            neo4j_local.start(local, PASSWORD)
            print(f"# private Neo4j {local.version} up in {time.monotonic() - started:.1f}s")
            neo4j = Neo4jSettings(uri=neo4j_local.bolt_uri(local), password=PASSWORD)
        # Keyless: the figures are of the service and the database, not of key checks.
        settings = Settings(environment="test", neo4j=neo4j, auth_mode="keyless",
                            embedding=EmbeddingSettings(provider="none", dimension=dimension))
        app = create_app(settings)
        graph = GraphClient.connect(neo4j.uri or "", neo4j.user,
                                    neo4j.password.get_secret_value(), neo4j.database)
        async with LifespanManager(app, startup_timeout=600, shutdown_timeout=120) as manager:
            transport = httpx.ASGITransport(app=manager.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://bench",
                                         timeout=600) as http:
                yield Bench(http=http, settings=settings, graph=graph, app=app)
    finally:
        if graph is not None:
            await graph.close()
        if local is not None:
            from memlattice import neo4j_local

            neo4j_local.stop(local)
            shutil.rmtree(local.home, ignore_errors=True)


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
