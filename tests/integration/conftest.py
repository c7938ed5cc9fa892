"""Spare Neo4j servers for the tests that need a whole database of their own.

Backup, restore and upgrade compare whole databases, so they cannot share the
suite's Neo4j (every test's namespaces live there). Two private servers
(tests._live.private_neo4j_local), started only when a test asks, serve them
all; each such test empties its database first (`tests.integration._stores.reset`).

A Neo4j takes long to start and to stop, on a small machine most of all: when
the session holds a test that needs both spares (the backup), the first one
asked for starts the other beside it, and both stop together at the end of
the session.

Two service processes on the suite's Neo4j (`two_processes`) serve the tests of
causal bookmarks and of the shared event log alike: both write only to
namespaces of their own, and a process of the service serves many clients.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from memlattice import neo4j_local
from memlattice.core.settings import LocalNeo4jSettings, Settings
from tests._live import private_neo4j_local
from tests.conftest import Neo4jServer, make_settings
from tests.integration._apps import two_servers

SPARE_PASSWORD = "memlattice-spare"
FIRST, SECOND = "test-neo4j-spare-a", "test-neo4j-spare-b"


class Spares:
    """Private Neo4j servers by folder, each started once, in a thread of its own."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="spare-neo4j")
        self._started: dict[str, tuple[contextlib.ExitStack, Future[LocalNeo4jSettings]]] = {}

    def start(self, folder: str) -> None:
        if folder in self._started:
            return
        stack = contextlib.ExitStack()

        def up() -> LocalNeo4jSettings:
            return stack.enter_context(private_neo4j_local(
                SPARE_PASSWORD, folder=folder, heap="512m", pagecache="128m"))

        self._started[folder] = (stack, self._pool.submit(up))

    def get(self, folder: str) -> LocalNeo4jSettings:
        self.start(folder)
        return self._started[folder][1].result()

    def close(self) -> None:
        # Stopped side by side, as they were started; one that failed to start stops too.
        stops = [self._pool.submit(stack.close) for stack, _ in self._started.values()]
        try:
            for stop in stops:
                stop.result()
        finally:
            self._pool.shutdown()


def _wanted(session: pytest.Session, fixture: str) -> bool:
    return any(fixture in getattr(item, "fixturenames", ()) for item in session.items)


@pytest.fixture(scope="session")
def _spares() -> Iterator[Spares]:
    spares = Spares()
    try:
        yield spares
    finally:
        spares.close()


def _settings(local: LocalNeo4jSettings) -> Settings:
    return make_settings(Neo4jServer(neo4j_local.bolt_uri(local), "neo4j", SPARE_PASSWORD),
                         auth_mode="keyless")


@pytest.fixture(scope="session")
def spare_neo4j(_spares: Spares, request: pytest.FixtureRequest) -> LocalNeo4jSettings:
    """The first private Neo4j, as `memlattice.neo4j_local` knows it."""
    if _wanted(request.session, "second_spare_settings"):
        _spares.start(SECOND)  # starts beside this one; the backup test needs both
    return _spares.get(FIRST)


@pytest.fixture(scope="session")
def spare_settings(spare_neo4j: LocalNeo4jSettings) -> Settings:
    """Settings (keyless, default embedder) on a private Neo4j of its own."""
    return _settings(spare_neo4j)


@pytest.fixture(scope="session")
def second_spare_settings(_spares: Spares, request: pytest.FixtureRequest) -> Settings:
    """Another private Neo4j: where a backup of the first is restored."""
    if _wanted(request.session, "spare_neo4j"):
        _spares.start(FIRST)
    return _settings(_spares.get(SECOND))


@pytest.fixture(scope="session")
def two_processes(settings: Settings, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[tuple[str, str]]:
    """Two service processes (tests.integration._server) on the suite's Neo4j, sharing
    nothing else: their base URLs. Started once for the session."""
    with two_servers(settings, tmp_path_factory.mktemp("two-processes")) as urls:
        yield urls
