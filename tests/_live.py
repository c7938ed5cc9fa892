"""Live servers on real sockets, for the tests and the benchmarks alike.

- `serve_in_thread`: an ASGI app on uvicorn in a background thread. The sync
  Python client cannot use an ASGI transport, the MCP streamable HTTP transport
  and the explorer are tested over real HTTP, and the clients of external
  services (OpenAI-compatible chat and rerank APIs) talk to fake endpoints
  (tests._fake_endpoint): all of them run on this.
- `spawned_server`: a server in a process of its own (`memlattice serve` for the
  benchmarks, `tests.integration._server` for the drain and fuzz tests), ready
  when yielded, stopped afterwards.
- `private_neo4j`: a Neo4j provisioned by the project on a free port and its
  own folder, removed afterwards, for a machine without `NEO4J_URI`.

One copy of each, so "ready", "stopped" and "a free port" mean the same thing
wherever a live server is needed (`bench/` imports this module from the
repository root, as `memlattice bench` runs it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import httpx
import uvicorn

if TYPE_CHECKING:
    from memlattice.core.settings import LocalNeo4jSettings

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A port nothing listens on right now (another process may take it before use)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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


@dataclass(frozen=True)
class Neo4jAddress:
    uri: str
    user: str
    password: str


@dataclass(frozen=True)
class SpawnedServer:
    process: subprocess.Popen[bytes]
    base: str
    log: Path


def wait_until_ready(base: str, process: subprocess.Popen[bytes], log: Path, *,
                     timeout_s: float) -> None:
    """Poll `/readyz` until it answers 200 (migrations applied, runtime open); raise
    with the server's log when the process ends first or the time runs out."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if httpx.get(base + "/readyz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if process.poll() is not None:
            raise RuntimeError(f"the server stopped during start-up:\n{log.read_text()[-3000:]}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"the server did not become ready in {timeout_s:g}s:\n"
                               f"{log.read_text()[-3000:]}")
        time.sleep(0.3)


def stop_process(process: subprocess.Popen[bytes], *, grace_s: float) -> None:
    """SIGTERM and up to `grace_s` to drain, then SIGKILL; `grace_s=0` kills at once."""
    if process.poll() is None:
        if grace_s > 0:
            process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(grace_s)
        if process.poll() is None:
            process.kill()
    process.wait()


@contextlib.contextmanager
def spawned_server(module: Sequence[str], neo4j: Neo4jAddress, log: Path, *, dimension: int,
                   env: Mapping[str, str] | None = None, ready_timeout_s: float = 300,
                   stop_grace_s: float = 0) -> Iterator[SpawnedServer]:
    """`python -m <module...>` on a free port against `neo4j`, keyless, with client
    vectors of `dimension` (`provider=none`), its output in `log`; yielded once ready
    (`wait_until_ready`), stopped afterwards (`stop_process`). `env` wins over these."""
    port = free_port()
    environment = {
        **os.environ, "NEO4J_URI": neo4j.uri, "NEO4J_USER": neo4j.user,
        "NEO4J_PASSWORD": neo4j.password, "MEMLATTICE_ENVIRONMENT": "test",
        "MEMLATTICE_AUTH_MODE": "keyless", "MEMLATTICE_PORT": str(port),
        "MEMLATTICE_EMBEDDING_PROVIDER": "none",
        "MEMLATTICE_EMBEDDING_DIMENSION": str(dimension), **(env or {}),
    }
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", *module], cwd=ROOT, env=environment,
                                   stdout=out, stderr=subprocess.STDOUT)
    served = SpawnedServer(process, f"http://127.0.0.1:{port}", log)
    try:
        wait_until_ready(served.base, process, log, timeout_s=ready_timeout_s)
        yield served
    finally:
        stop_process(process, grace_s=stop_grace_s)


@contextlib.contextmanager
def private_neo4j_local(password: str, *, folder: str, heap: str | None = None,
                        pagecache: str | None = None) -> Iterator[LocalNeo4jSettings]:
    """`private_neo4j`, yielding its `LocalNeo4jSettings` (home, port) for a test that
    stops, kills and restarts it through `memlattice.neo4j_local`."""
    from memlattice import neo4j_local
    from memlattice.core.settings import LocalNeo4jSettings, default_cache_dir

    sizes = {k: v for k, v in (("heap", heap), ("pagecache", pagecache)) if v is not None}
    local = LocalNeo4jSettings(home=default_cache_dir() / folder / uuid.uuid4().hex[:8],
                               bolt_port=free_port(), **sizes)
    started = time.monotonic()
    try:  # a start that fails half-way (Bolt never opened) leaves no server behind either
        neo4j_local.start(local, password)
        print(f"# private Neo4j {local.version} up in {time.monotonic() - started:.1f}s")
        yield local
    finally:
        discard(local)


def discard(local: LocalNeo4jSettings) -> None:
    """Kill a private Neo4j and remove its folder. Nothing in it is kept, so a graceful
    stop (a checkpoint of a store about to be deleted) would only cost seconds."""
    from memlattice import neo4j_local

    pid = neo4j_local.status(local).pid
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):  # gone already, when another one started it
        neo4j_local.stop(local)  # reaps it, when this interpreter started it
    shutil.rmtree(local.home, ignore_errors=True)


@contextlib.contextmanager
def private_neo4j(password: str, *, folder: str, heap: str | None = None,
                  pagecache: str | None = None) -> Iterator[Neo4jAddress]:
    """A Neo4j of the project's own provisioning under `<cache>/<folder>/<random>`, on a
    free port; killed and its folder removed afterwards (`discard`)."""
    from memlattice import neo4j_local

    with private_neo4j_local(password, folder=folder, heap=heap, pagecache=pagecache) as local:
        yield Neo4jAddress(neo4j_local.bolt_uri(local), "neo4j", password)
