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

from starlette.applications import Starlette

from memlattice.core.settings import Settings
from memlattice.server.observability.logs import configure_logging

DRAIN_S = 30


def run_server(app: Starlette, settings: Settings, *, drain_s: int = DRAIN_S) -> None:
    import uvicorn

    configure_logging(settings.log_format, settings.log_level)
    # Our middleware writes the (structured) access log, so uvicorn's is off.
    uvicorn.run(app, host=settings.host, port=settings.port, log_config=None,
                access_log=False, timeout_graceful_shutdown=drain_s)


def app_from_environment() -> Starlette:
    """The app of one worker process, from the environment's settings (uvicorn's factory)."""
    from memlattice.server.app import create_app

    settings = Settings()
    configure_logging(settings.log_format, settings.log_level)
    return create_app(settings)


def run_workers(settings: Settings, workers: int, *, drain_s: int = DRAIN_S) -> None:
    """Serve from `workers` processes; settings come from the environment, as for one."""
    import uvicorn

    configure_logging(settings.log_format, settings.log_level)
    uvicorn.run("memlattice.server.serving:app_from_environment", factory=True,
                workers=workers, host=settings.host, port=settings.port, log_config=None,
                access_log=False, timeout_graceful_shutdown=drain_s)
