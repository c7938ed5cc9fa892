"""`neo4j-admin` for the locally provisioned server: the offline dump and load.

The Maven artifacts the project provisions (`org.neo4j:neo4j`) carry the
admin tool's classes too (`org.neo4j.cli.AdminTool`, with `database dump` and
`database load` from neo4j-dbms), only not its shell script. This runs it on
the same Java and jars as the server, with `NEO4J_HOME` and `NEO4J_CONF`
pointing at the instance, so `memlattice neo4j admin database dump neo4j
--to-path=DIR` is Neo4j's own offline dump of the local store (the server
must be stopped: neo4j-admin refuses a database in use).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence

from memlattice.core.settings import LocalNeo4jSettings
from memlattice.neo4j_local.java import find_java
from memlattice.neo4j_local.provisioning import install

ADMIN_TOOL = "org.neo4j.cli.AdminTool"


def admin_command(settings: LocalNeo4jSettings, arguments: Sequence[str]
                  ) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that run neo4j-admin on this instance."""
    root = install(settings)
    conf = settings.home / "conf"
    command = [str(find_java(settings.java)), "-cp", str(root / "lib" / "*"), ADMIN_TOOL,
               *arguments]
    return command, {**os.environ, "NEO4J_HOME": str(settings.home), "NEO4J_CONF": str(conf)}


def run_admin(settings: LocalNeo4jSettings, arguments: Sequence[str]) -> int:
    """Run neo4j-admin with the terminal's input and output; its exit status."""
    if not (settings.home / "conf" / "neo4j.conf").exists():
        raise FileNotFoundError(f"no Neo4j instance in {settings.home} yet: start it once"
                                " (`memlattice neo4j start`) so that its configuration exists")
    command, env = admin_command(settings, arguments)
    return subprocess.run(command, env=env, check=False).returncode
