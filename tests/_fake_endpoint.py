"""A real HTTP endpoint on loopback, for tests of clients of external services
(OpenAI-compatible chat and rerank APIs): uvicorn serving a Starlette app in a
thread, on a port the OS picks."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Route


@contextmanager
def serving(*routes: Route) -> Iterator[str]:
    """Serve `routes`; yields the base URL (`http://127.0.0.1:PORT`)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=list(routes)), log_level="warning",
                                           lifespan="off", ws="none", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
