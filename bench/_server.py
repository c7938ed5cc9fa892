"""A real `memlattice serve` process for benchmarks that need a socket (load, fuzz).

The server runs exactly as in production (the CLI, uvicorn, JSON logs to a
file), against a private Neo4j (or `NEO4J_URI`), keyless, with client
vectors (`provider=none`) so figures measure the service and the database.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench._harness import PASSWORD, _free_port
from memlattice.core.settings import LocalNeo4jSettings, default_cache_dir

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Served:
    base: str
    process: subprocess.Popen[bytes]
    log: Path


@contextmanager
def served(*, dimension: int = 256, heap: str = "1g", pagecache: str = "512m",
           env: dict[str, str] | None = None) -> Iterator[Served]:
    """The service in its own process on a private Neo4j (or NEO4J_URI's); both are
    stopped however the benchmark ends, even while they are still starting."""
    local: LocalNeo4jSettings | None = None
    process: subprocess.Popen[bytes] | None = None
    uri = os.environ.get("NEO4J_URI")
    password = os.environ.get("NEO4J_PASSWORD", PASSWORD)
    try:
        if not uri:
            from memlattice import neo4j_local

            local = LocalNeo4jSettings(
                home=default_cache_dir() / "bench-neo4j" / uuid.uuid4().hex[:8],
                bolt_port=_free_port(), heap=heap, pagecache=pagecache)
            started = time.monotonic()
            neo4j_local.start(local, password)
            print(f"# private Neo4j {local.version} up in {time.monotonic() - started:.1f}s")
            uri = neo4j_local.bolt_uri(local)
        port = _free_port()
        log = Path(tempfile.mkdtemp(prefix="memlattice-bench-")) / "server.log"
        environment = {**os.environ, "NEO4J_URI": uri, "NEO4J_PASSWORD": password,
                       "MEMLATTICE_ENVIRONMENT": "test", "MEMLATTICE_AUTH_MODE": "keyless",
                       "MEMLATTICE_PORT": str(port), "MEMLATTICE_EMBEDDING_PROVIDER": "none",
                       "MEMLATTICE_EMBEDDING_DIMENSION": str(dimension),
                       "MEMLATTICE_LOG_LEVEL": "WARNING", **(env or {})}
        with log.open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "memlattice.cli", "serve", "--no-neo4j"], cwd=ROOT,
                env=environment, stdout=out, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 300
        while True:
            try:
                if httpx.get(base + "/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)
        yield Served(base, process, log)
    finally:
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if local is not None:
            from memlattice import neo4j_local

            neo4j_local.stop(local)
            shutil.rmtree(local.home, ignore_errors=True)
