"""A real server process (drain and fuzz tests): the app, plus a reranker that takes 3 s.

Run as `python -m tests.integration._server`; settings come from the
environment like `memlattice serve`, and serving goes through the same
`run_server` (same uvicorn drain configuration).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from memlattice.core.settings import Settings
from memlattice.search.rerank import RerankerRegistry
from memlattice.server.app import create_app
from memlattice.server.serving import run_server

SLOW_S = 3.0


async def slow(query: str, documents: Sequence[tuple[str, str]]) -> list[float]:
    await asyncio.sleep(SLOW_S)
    return [1.0] * len(documents)


def main() -> None:
    settings = Settings()
    registry = RerankerRegistry()
    registry.register("slow", slow)
    run_server(create_app(settings, rerankers=registry), settings)


if __name__ == "__main__":
    main()
