"""A real HTTP endpoint on loopback, for tests of clients of external services
(OpenAI-compatible chat and rerank APIs)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from starlette.applications import Starlette
from starlette.routing import Route

from tests._live import serve_in_thread


@contextmanager
def serving(*routes: Route) -> Iterator[str]:
    """Serve `routes`; yields the base URL (`http://127.0.0.1:PORT`)."""
    with serve_in_thread(Starlette(routes=list(routes)), lifespan="off",
                         startup_timeout=10) as url:
        yield url
