"""A real server process (drain and fuzz tests): the app, plus a slow reranker.

Run as `python -m tests.integration._server`; settings come from the
environment like `memlattice serve`, and serving goes through the same
`run_server` (same uvicorn drain configuration).

With `MEMLATTICE_TEST_GATE` naming a directory, the `slow` reranker creates
`started` there when a search reaches it and holds the search until the test
creates `release`: a test can act while a request is certainly in flight,
however slow the machine. Without it the reranker just takes 3 s.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path

from memlattice.core.settings import Settings
from memlattice.search.rerank import RerankerRegistry
from memlattice.server.app import create_app
from memlattice.server.serving import run_server

SLOW_S = 3.0


async def slow(query: str, documents: Sequence[tuple[str, str]]) -> list[float]:
    gate = os.environ.get("MEMLATTICE_TEST_GATE")
    if gate:
        (Path(gate) / "started").touch()
        while not (Path(gate) / "release").exists():
            await asyncio.sleep(0.05)
    else:
        await asyncio.sleep(SLOW_S)
    return [1.0] * len(documents)


def main() -> None:
    settings = Settings()
    registry = RerankerRegistry()
    registry.register("slow", slow)
    run_server(create_app(settings, rerankers=registry), settings)


if __name__ == "__main__":
    main()
