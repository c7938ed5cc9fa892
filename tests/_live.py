"""A real uvicorn server in a background thread, for clients that need a socket.

The sync Python client cannot use an ASGI transport, the MCP streamable HTTP
transport and the explorer are tested over real HTTP, and the clients of
external services (OpenAI-compatible chat and rerank APIs) talk to fake
endpoints (tests._fake_endpoint): all of them run on this.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any, Literal

import uvicorn


@contextlib.contextmanager
def serve_in_thread(app: Any, *, lifespan: Literal["on", "off"] = "on",
                    startup_timeout: float = 300) -> Iterator[str]:
    """Serve `app` on a port the OS picks; yields its base URL.

    The socket is bound here and handed to uvicorn, so no other process can
    take the port between choosing and serving it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan=lifespan,
                                           access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                              name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the test server stopped during start-up")
        if time.monotonic() > deadline:
            raise TimeoutError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        sock.close()
