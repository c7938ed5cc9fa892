"""Fetch the Neo4j jars through Maven and compile the launcher, once per version.

Layout under `LocalNeo4jSettings.cache_dir/<version>/`: `pom.xml`, `lib/*.jar`,
`launcher/MemlatticeNeo4j.class` and a `.complete` marker.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import shutil
import subprocess
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

from memlattice.core.errors import ProvisioningError
from memlattice.core.settings import LocalNeo4jSettings
from memlattice.neo4j_local.java import find_javac

# The package's logger: one name for everything the local server reports.
log = logging.getLogger("memlattice.neo4j_local")


LAUNCHER = "MemlatticeNeo4j"


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
        javac = find_javac()
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
        source = resources.files("memlattice.neo4j_local") / "launcher" / f"{LAUNCHER}.java"
        src_path = launcher / f"{LAUNCHER}.java"
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
