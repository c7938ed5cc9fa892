"""Apps of a test's own: the real service with settings the test chooses.

The session's `app_client` runs default settings; limits, timeouts and
introspection need their own configuration, so these tests start another
app (same Neo4j, migrations already applied) inside the test.
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
from asgi_lifespan import LifespanManager

from memlattice.core.settings import Settings
from memlattice.search.rerank import RerankerRegistry
from memlattice.server.app import create_app
from tests._live import Neo4jAddress
from tests._live import spawned_server as live_server


@asynccontextmanager
async def app_with(settings: Settings, rerankers: RerankerRegistry | None = None,
                   **overrides: Any) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client on a running app built from `settings` updated by `overrides`
    (`.app` the app, `.asgi` what to open a WebSocket on)."""
    # Limits and faults are not about keys: these apps admit every caller.
    overrides.setdefault("auth_mode", "keyless")
    configured = settings.model_copy(update=overrides)
    app = create_app(configured, rerankers=rerankers)
    async with LifespanManager(app, startup_timeout=300, shutdown_timeout=60) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test",
                                     timeout=60) as client:
            client.app = app  # type: ignore[attr-defined]
            client.asgi = manager.app  # type: ignore[attr-defined]  # for WebSockets
            yield client


@contextmanager
def spawned_server(settings: Settings, log_path: Path, **env: str
                   ) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`python -m tests.integration._server` on a free port against `settings`' Neo4j,
    ready (/readyz 200) when yielded; killed afterwards if still running."""
    neo4j = Neo4jAddress(settings.neo4j.uri or "", settings.neo4j.user,
                         settings.neo4j.password.get_secret_value())
    with live_server(["tests.integration._server"], neo4j, log_path,
                     dimension=settings.embedding.dimension, env=env,
                     ready_timeout_s=120) as served:
        yield served.process, served.base


@contextmanager
def two_servers(settings: Settings, logs: Path) -> Iterator[tuple[str, str]]:
    """Two service processes on the same Neo4j, sharing nothing else: their base URLs.

    Started side by side (each waits for its own /readyz), stopped afterwards."""
    stacks = [ExitStack(), ExitStack()]
    with ExitStack() as both, ThreadPoolExecutor(max_workers=2) as pool:
        for stack in stacks:
            both.enter_context(stack)
        started = [pool.submit(stack.enter_context, spawned_server(settings, logs / name))
                   for stack, name in zip(stacks, ("a.log", "b.log"), strict=True)]
        (_, a), (_, b) = (future.result() for future in started)
        yield a, b
