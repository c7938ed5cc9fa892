"""Apps of a test's own: the real service with settings the test chooses.

The session's `app_client` runs default settings; limits, timeouts and
introspection need their own configuration, so these tests start another
app (same Neo4j, migrations already applied) inside the test.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
from asgi_lifespan import LifespanManager

from memlattice.core.settings import Settings
from memlattice.search.rerank import RerankerRegistry
from memlattice.server.app import create_app

ROOT = Path(__file__).resolve().parents[2]


@asynccontextmanager
async def app_with(settings: Settings, rerankers: RerankerRegistry | None = None,
                   **overrides: Any) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client on a running app built from `settings` updated by `overrides`."""
    # Limits and faults are not about keys: these apps admit every caller.
    overrides.setdefault("auth_mode", "keyless")
    configured = settings.model_copy(update=overrides)
    app = create_app(configured, rerankers=rerankers)
    async with LifespanManager(app, startup_timeout=300, shutdown_timeout=60) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test",
                                     timeout=60) as client:
            client.app = app  # type: ignore[attr-defined]
            yield client


@contextmanager
def spawned_server(settings: Settings, log_path: Path, **env: str
                   ) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`python -m tests.integration._server` on a free port against `settings`' Neo4j,
    ready (/readyz 200) when yielded; killed afterwards if still running."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    environment = {
        **os.environ, "NEO4J_URI": settings.neo4j.uri or "", "NEO4J_USER": settings.neo4j.user,
        "NEO4J_PASSWORD": settings.neo4j.password.get_secret_value(),
        "MEMLATTICE_ENVIRONMENT": "test", "MEMLATTICE_AUTH_MODE": "keyless",
        "MEMLATTICE_PORT": str(port), "MEMLATTICE_EMBEDDING_PROVIDER": "none",
        "MEMLATTICE_EMBEDDING_DIMENSION": str(settings.embedding.dimension), **env,
    }
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "tests.integration._server"],
                                   cwd=ROOT, env=environment, stdout=log,
                                   stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if httpx.get(base + "/readyz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if process.poll() is not None:
                    raise RuntimeError(log_path.read_text())
                if time.monotonic() > deadline:
                    raise TimeoutError("the server did not become ready")
                time.sleep(0.3)
            yield process, base
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
