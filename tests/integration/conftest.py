"""Spare Neo4j servers for the tests that need a whole database of their own.

Backup, restore and upgrade compare whole databases, so they cannot share the
suite's Neo4j (every test's namespaces live there); the fault tests stop and
kill theirs. Two private servers (tests._spares) serve them all; each such test
empties its database first (`tests.integration._stores.reset`). The first
integration test of a session starts, in the background, those that its tests
will ask for (`_spares_early`): not earlier, so that their start-up never
competes with the browser tests (tests/e2e) for the CPU.

Two service processes on the suite's Neo4j (`two_processes`) serve the tests of
causal bookmarks and of the shared event log alike: both write only to
namespaces of their own, and a process of the service serves many clients.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from memlattice import neo4j_local
from memlattice.core.settings import LocalNeo4jSettings, Settings
from tests._spares import FIRST, SECOND, SPARE_FIXTURES, SPARE_PASSWORD, Spares, wanted
from tests.conftest import Neo4jServer, make_settings
from tests.integration._apps import two_servers


@pytest.fixture(scope="session")
def _spares() -> Iterator[Spares]:
    """The spare Neo4j servers (tests._spares), killed at the end of the session."""
    spares = Spares()
    try:
        yield spares
    finally:
        spares.close()


@pytest.fixture(scope="session", autouse=True)
def _spares_early(request: pytest.FixtureRequest) -> None:
    """Start the spares this session's tests will ask for now, in the background, so
    that they are up by the time the first of those tests runs. The suite's own
    Neo4j comes first; if it cannot start, the tests that use it say so, not this."""
    folders = [folder for fixture, folder in SPARE_FIXTURES if wanted(request.session, fixture)]
    if not folders:
        return
    if wanted(request.session, "neo4j_server"):
        with contextlib.suppress(Exception):
            request.getfixturevalue("neo4j_server")
    spares: Spares = request.getfixturevalue("_spares")
    for folder in folders:
        spares.start(folder)


def _settings(local: LocalNeo4jSettings) -> Settings:
    return make_settings(Neo4jServer(neo4j_local.bolt_uri(local), "neo4j", SPARE_PASSWORD),
                         auth_mode="keyless")


@pytest.fixture(scope="session")
def spare_neo4j(_spares: Spares) -> LocalNeo4jSettings:
    """The first private Neo4j, as `memlattice.neo4j_local` knows it."""
    return _spares.get(FIRST)


@pytest.fixture(scope="session")
def spare_settings(spare_neo4j: LocalNeo4jSettings) -> Settings:
    """Settings (keyless, default embedder) on a private Neo4j of its own."""
    return _settings(spare_neo4j)


@pytest.fixture(scope="session")
def second_spare_settings(_spares: Spares) -> Settings:
    """Another private Neo4j: where a backup of the first is restored."""
    return _settings(_spares.get(SECOND))


@pytest.fixture(scope="session")
def two_processes(settings: Settings, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[tuple[str, str]]:
    """Two service processes (tests.integration._server) on the suite's Neo4j, sharing
    nothing else: their base URLs. Started once for the session."""
    with two_servers(settings, tmp_path_factory.mktemp("two-processes")) as urls:
        yield urls
