"""A real `memlattice serve` process for benchmarks that need a socket (load, fuzz).

The server runs exactly as in production (the CLI, uvicorn, JSON logs to a
file), against a private Neo4j (or `NEO4J_URI`), keyless, with client
vectors (`provider=none`) so figures measure the service and the database.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench._harness import PASSWORD
from tests._live import Neo4jAddress, SpawnedServer, private_neo4j, spawned_server


@dataclass(frozen=True)
class Served:
    """What a benchmark gets: the spawned server (`.base`, `.process`, `.log`) and
    the Neo4j it serves from (for a bare-driver baseline against the same data)."""

    server: SpawnedServer
    neo4j_uri: str
    neo4j_password: str

    @property
    def base(self) -> str:
        return self.server.base

    @property
    def process(self) -> subprocess.Popen[bytes]:
        return self.server.process

    @property
    def log(self) -> Path:
        return self.server.log


@contextmanager
def bench_neo4j(*, heap: str = "1g", pagecache: str = "512m") -> Iterator[Neo4jAddress]:
    """`NEO4J_URI` when set, else a private Neo4j for the benchmark's lifetime."""
    uri = os.environ.get("NEO4J_URI")
    if uri:
        yield Neo4jAddress(uri, os.environ.get("NEO4J_USER", "neo4j"),
                           os.environ.get("NEO4J_PASSWORD", PASSWORD))
        return
    with private_neo4j(PASSWORD, folder="bench-neo4j", heap=heap, pagecache=pagecache) as neo4j:
        yield neo4j


@contextmanager
def served_on(neo4j: Neo4jAddress, *, dimension: int = 256, workers: int = 1,
              env: dict[str, str] | None = None) -> Iterator[Served]:
    """`memlattice serve` against `neo4j`, from `workers` processes (`--workers`, uvicorn's
    workers on one socket) when more than one; ready when yielded (a worker accepts
    connections only once its lifespan has started), stopped with a minute to drain."""
    log = Path(tempfile.mkdtemp(prefix="memlattice-bench-")) / "server.log"
    command = ["memlattice.cli", "serve", "--no-neo4j",
               *(["--workers", str(workers)] if workers > 1 else [])]
    with spawned_server(command, neo4j, log, dimension=dimension,
                        env={"MEMLATTICE_LOG_LEVEL": "WARNING", **(env or {})},
                        stop_grace_s=60) as server:
        yield Served(server, neo4j.uri, neo4j.password)


@contextmanager
def served(*, dimension: int = 256, heap: str = "1g", pagecache: str = "512m",
           env: dict[str, str] | None = None) -> Iterator[Served]:
    """`memlattice serve` (the CLI, uvicorn, JSON logs to a file) on a free port, against
    `NEO4J_URI` or a private Neo4j; ready when yielded (`served_on`)."""
    with ExitStack() as stack:
        neo4j = stack.enter_context(bench_neo4j(heap=heap, pagecache=pagecache))
        yield stack.enter_context(served_on(neo4j, dimension=dimension, env=env))
