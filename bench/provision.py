"""How long local Neo4j provisioning takes, cold and warm.

    python bench/provision.py            # cold (empty Maven repo and cache) then warm

Cold: a private, empty Maven local repository and jar cache, so every jar
comes from Maven Central, then a first start (store creation, password
set). Warm: the same cache, a second start of the same home. Each phase is
timed separately; nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from memlattice import neo4j_local
from memlattice.core.settings import LocalNeo4jSettings
from tests._live import free_port


def main() -> None:
    # Parsed before anything else so that `--help` prints help, never starts a download.
    argparse.ArgumentParser(description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    root = Path(tempfile.mkdtemp(prefix="memlattice-provision-"))
    os.environ["MAVEN_OPTS"] = f"-Dmaven.repo.local={root / 'm2'}"
    settings = LocalNeo4jSettings(cache_dir=root / "cache", home=root / "home",
                                  bolt_port=free_port())
    rows: list[tuple[str, float]] = []
    try:
        started = time.monotonic()
        neo4j_local.install(settings)
        rows.append(("cold install (Maven Central -> cache, javac launcher)",
                     time.monotonic() - started))
        started = time.monotonic()
        neo4j_local.start(settings, "memlattice-bench")
        rows.append(("first start (new store, password set)", time.monotonic() - started))
        started = time.monotonic()
        neo4j_local.stop(settings)
        rows.append(("stop (checkpoint, clean shutdown)", time.monotonic() - started))
        started = time.monotonic()
        neo4j_local.install(settings)
        neo4j_local.start(settings, "memlattice-bench")
        rows.append(("warm start (cached jars, existing store)", time.monotonic() - started))
    finally:
        neo4j_local.stop(settings)
        size = sum(f.stat().st_size for f in (root / "cache").rglob("*") if f.is_file())
        shutil.rmtree(root, ignore_errors=True)
    print(f"Neo4j {settings.version} on {neo4j_local.find_java()}")
    for label, seconds in rows:
        print(f"{label:<58} {seconds:6.1f} s")
    print(f"{'jar cache size':<58} {size / 2**20:6.0f} MiB")


if __name__ == "__main__":
    main()
