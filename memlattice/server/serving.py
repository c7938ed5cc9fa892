"""Serving an app with uvicorn the way production should: logs, drain, no surprises.

On SIGTERM (or Ctrl-C) uvicorn stops accepting connections, lets requests in
flight finish for up to `drain_s`, then runs the lifespan shutdown, which
flushes the access recorder and stops background work before the driver
closes. `memlattice serve` and embedding programs both go through here.

`run_workers` serves from several processes (uvicorn's workers on one
socket): each builds its own app from the environment (`app_from_environment`),
and nothing they need to agree on is kept in a process (docs/operating.md).
"""

from __future__ import annotations

import gc

from starlette.applications import Starlette

from memlattice.core.settings import Settings
from memlattice.server.observability.logs import configure_logging

DRAIN_S = 30
# Allocations between two young-generation collections (CPython's default is 700).
# A search allocates thousands of short-lived objects (rows, candidates, GraphQL
# results). With 32 requests in flight, each young collection walks what every one
# of them holds and promotes it, to be walked again by the older generations: at 700
# the collector cost a seventh of the server's CPU per search, at 5,000 next to
# nothing, and more saved nothing more (docs/benchmarks.md, "Garbage collection").
YOUNG_GC_THRESHOLD = 5_000


def settle_heap() -> None:
    """Make the garbage collector cheap for a long-running server, once its app is built.

    Everything alive now (modules, the GraphQL schema, settings) lives as long as the
    process: `gc.freeze` moves it out of the collector's sight, so no full collection
    walks it again, and such a collection no longer pauses every request in flight.
    Then young collections run less often. Reference counting still frees what
    requests leave behind at once; the collector only looks for cycles.
    Only the serving paths call this: a program that embeds the app (or a test)
    keeps its own collector settings.
    """
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_GC_THRESHOLD, older, oldest)


def run_server(app: Starlette, settings: Settings, *, drain_s: int = DRAIN_S) -> None:
    import uvicorn

    configure_logging(settings.log_format, settings.log_level)
    settle_heap()
    # Our middleware writes the (structured) access log, so uvicorn's is off.
    uvicorn.run(app, host=settings.host, port=settings.port, log_config=None,
                access_log=False, timeout_graceful_shutdown=drain_s)


def app_from_environment() -> Starlette:
    """The app of one worker process, from the environment's settings (uvicorn's factory)."""
    from memlattice.server.app import create_app

    settings = Settings()
    configure_logging(settings.log_format, settings.log_level)
    app = create_app(settings)
    settle_heap()
    return app


def run_workers(settings: Settings, workers: int, *, drain_s: int = DRAIN_S) -> None:
    """Serve from `workers` processes; settings come from the environment, as for one."""
    import uvicorn

    configure_logging(settings.log_format, settings.log_level)
    uvicorn.run("memlattice.server.serving:app_from_environment", factory=True,
                workers=workers, host=settings.host, port=settings.port, log_config=None,
                access_log=False, timeout_graceful_shutdown=drain_s)
