"""Start, stop and inspect a local Neo4j server process.

Under the instance `home`: `conf/neo4j.conf`, `data/`, `logs/`, `run/neo4j.pid`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from memlattice.core.errors import ProvisioningError
from memlattice.core.settings import LocalNeo4jSettings
from memlattice.neo4j_local.java import find_java, simd_flags
from memlattice.neo4j_local.provisioning import LAUNCHER, install

# The package's logger: one name for everything the local server reports.
log = logging.getLogger("memlattice.neo4j_local")

# The flags the server distribution's own start script passes to the JVM.
_JVM_FLAGS = (
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
)


@dataclass(frozen=True)
class Neo4jStatus:
    running: bool
    pid: int | None
    bolt_uri: str
    version: str
    home: Path


def bolt_uri(settings: LocalNeo4jSettings) -> str:
    return f"bolt://127.0.0.1:{settings.bolt_port}"




# Servers this interpreter started, so they can be reaped (no zombies, no warnings).
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def _pid_file(settings: LocalNeo4jSettings) -> Path:
    # Not `neo4j.pid`: the server writes and deletes that one itself.
    return settings.home / "run" / "memlattice-neo4j.pid"


def _read_pid(settings: LocalNeo4jSettings) -> int | None:
    try:
        pid = int(_pid_file(settings).read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    child = _CHILDREN.get(pid)
    if child is not None and child.poll() is not None:
        del _CHILDREN[pid]
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    return pid


def _port_answers(port: int, timeout: float = 0.5) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _write_config(settings: LocalNeo4jSettings) -> Path:
    conf_dir = settings.home / "conf"
    conf_dir.mkdir(parents=True, exist_ok=True)
    (settings.home / "logs").mkdir(exist_ok=True)
    (settings.home / "run").mkdir(exist_ok=True)
    lines = [
        "# Written by memlattice at every start; edit LocalNeo4jSettings instead.",
        "server.default_listen_address=127.0.0.1",
        "server.default_advertised_address=127.0.0.1",
        f"server.bolt.listen_address=127.0.0.1:{settings.bolt_port}",
        f"server.bolt.advertised_address=127.0.0.1:{settings.bolt_port}",
        "server.http.enabled=false",
        "server.https.enabled=false",
        "dbms.security.auth_enabled=true",
        "dbms.usage_report.enabled=false",
        f"server.memory.heap.initial_size={settings.heap}",
        f"server.memory.heap.max_size={settings.heap}",
        f"server.memory.pagecache.size={settings.pagecache}",
        f"server.directories.data={settings.home / 'data'}",
        f"server.directories.logs={settings.home / 'logs'}",
        f"server.directories.run={settings.home / 'run'}",
    ]
    (conf_dir / "neo4j.conf").write_text("\n".join(lines) + "\n")
    return conf_dir


def status(settings: LocalNeo4jSettings) -> Neo4jStatus:
    pid = _read_pid(settings)
    return Neo4jStatus(
        running=pid is not None and _port_answers(settings.bolt_port),
        pid=pid,
        bolt_uri=bolt_uri(settings),
        version=settings.version,
        home=settings.home,
    )


def start(settings: LocalNeo4jSettings, password: str) -> Neo4jStatus:
    """Install if needed, start the server detached, wait for Bolt, set the password.

    Idempotent: a server already running from this home is left as it is.
    """
    current = status(settings)
    if current.running:
        return current
    if current.pid is None and _port_answers(settings.bolt_port):
        raise ProvisioningError(
            f"port {settings.bolt_port} on 127.0.0.1 is taken by another process; stop it or"
            " set MEMLATTICE_NEO4J_BOLT_PORT to a free port",
            missing="port",
        )
    java = find_java(settings.java)
    simd = simd_flags(java)
    root = install(settings)
    conf_dir = _write_config(settings)
    command = [
        str(java),
        *_JVM_FLAGS,
        *simd,
        "-cp",
        f"{root / 'launcher'}{os.pathsep}{root / 'lib' / '*'}",
        LAUNCHER,
        f"--home-dir={settings.home}",
        f"--config-dir={conf_dir}",
    ]
    log.info("starting Neo4j %s on %s with %s%s", settings.version, bolt_uri(settings), java,
             " (SIMD vector distances)" if simd else "")
    with (settings.home / "logs" / "console.log").open("ab") as console:
        process = subprocess.Popen(
            command, stdout=console, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, cwd=settings.home,
        )
    # Keep the handle: the server outlives this call, and `stop` reaps it.
    _CHILDREN[process.pid] = process
    _pid_file(settings).write_text(f"{process.pid}\n")
    _wait_for_bolt(settings, process)
    _ensure_password(settings, password)
    return status(settings)


def _wait_for_bolt(settings: LocalNeo4jSettings, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + settings.start_timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ProvisioningError(
                f"Neo4j exited with status {process.returncode} while starting;"
                f" last lines of its logs:\n{_log_tail(settings)}"
            )
        if _port_answers(settings.bolt_port):
            return
        time.sleep(0.25)
    raise ProvisioningError(
        f"Neo4j did not open Bolt on port {settings.bolt_port} within"
        f" {settings.start_timeout_s:.0f}s; last lines of its logs:\n{_log_tail(settings)}"
    )


def _log_tail(settings: LocalNeo4jSettings, lines: int = 20) -> str:
    chunks = []
    for name in ("console.log", "neo4j.log"):
        path = settings.home / "logs" / name
        if path.exists():
            chunks.extend(path.read_text(errors="replace").splitlines()[-lines:])
    return "\n".join(chunks)


def _ensure_password(settings: LocalNeo4jSettings, password: str) -> None:
    """A fresh server accepts neo4j/neo4j and demands a change; make that change once.

    The one driver outside `GraphClient` (and so outside graph.driver_calls' guard),
    on purpose: it is the synchronous driver, run before any service starts. Nothing
    cancels it midway (an asyncio cancellation cannot reach a blocking call; a Ctrl-C
    ends the process, whose sockets the OS closes), and each driver is closed by its
    `with`, so no socket outlives it."""
    from neo4j import GraphDatabase
    from neo4j.exceptions import AuthError, ClientError, ServiceUnavailable

    uri = bolt_uri(settings)
    deadline = time.monotonic() + 60
    while True:
        try:
            with GraphDatabase.driver(uri, auth=("neo4j", password)) as driver:
                driver.verify_connectivity()
                return
        except AuthError:
            break
        except ServiceUnavailable:
            if time.monotonic() > deadline:
                raise ProvisioningError(
                    f"Neo4j at {uri} accepts connections but never answered"
                ) from None
            time.sleep(0.5)
    try:
        with GraphDatabase.driver(uri, auth=("neo4j", "neo4j")) as driver:
            driver.execute_query(
                "ALTER CURRENT USER SET PASSWORD FROM $old TO $new",
                {"old": "neo4j", "new": password},
                database_="system",
            )
    except (AuthError, ClientError) as exc:
        raise ProvisioningError(
            f"the local Neo4j in {settings.home} has a password other than NEO4J_PASSWORD;"
            " set NEO4J_PASSWORD to it, or stop the server and remove that folder to start over"
        ) from exc


def stop(settings: LocalNeo4jSettings, timeout_s: float = 60.0) -> bool:
    """Stop the server gracefully (SIGTERM: Neo4j checkpoints and closes its stores)."""
    pid = _read_pid(settings)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    child = _CHILDREN.pop(pid, None)
    if child is not None:
        try:
            child.wait(timeout_s)
        except subprocess.TimeoutExpired:
            log.warning("Neo4j (pid %s) ignored SIGTERM for %.0fs; killing it", pid, timeout_s)
            child.kill()
            child.wait()
    else:
        deadline = time.monotonic() + timeout_s
        while _read_pid(settings) is not None:
            if time.monotonic() > deadline:
                log.warning("Neo4j (pid %s) ignored SIGTERM for %.0fs; killing it", pid,
                            timeout_s)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                break
            time.sleep(0.2)
    _pid_file(settings).unlink(missing_ok=True)
    return True
