"""Spare Neo4j servers: private ones (tests._live.private_neo4j_local) beside the suite's,
for the tests that stop, kill, empty or compare a whole database (the fixtures are in
tests/integration/conftest.py).

A Neo4j takes long to start, on a small machine most of all, so the spares a
session will ask for are started in the background by its first integration
test (`_spares_early` in tests/integration/conftest.py), while the tests before
the first that needs one run; every spare is killed at the end of the session
(tests._live.discard).
"""

from __future__ import annotations

import contextlib
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from memlattice.core.settings import LocalNeo4jSettings
from tests._live import private_neo4j_local

SPARE_PASSWORD = "memlattice-spare"
FIRST, SECOND = "test-neo4j-spare-a", "test-neo4j-spare-b"
# The fixture that hands out each spare, and the spare's folder.
SPARE_FIXTURES = (("spare_neo4j", FIRST), ("second_spare_settings", SECOND))


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
        # A start still under way (a session cut short) ends first, so that its server
        # is killed too; a stack closed before its server was entered would leave it.
        for _, started in self._started.values():
            started.exception()
        # Stopped side by side, as they were started; one that failed to start stops too.
        stops = [self._pool.submit(stack.close) for stack, _ in self._started.values()]
        try:
            for stop in stops:
                stop.result()
        finally:
            self._pool.shutdown()


def wanted(session: pytest.Session, fixture: str) -> bool:
    """Whether a test of this session uses `fixture`, directly or through another."""
    return any(fixture in getattr(item, "fixturenames", ()) for item in session.items)
