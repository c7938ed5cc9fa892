"""Spare Neo4j servers for the tests that need a whole database of their own.

Backup, restore and upgrade compare whole databases, so they cannot share the
suite's Neo4j (every test's namespaces live there). Two private servers
(tests._live.private_neo4j), started only when a test asks, serve them all;
each such test empties its database first (`tests.integration._stores.reset`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memlattice.core.settings import Settings
from tests._live import private_neo4j
from tests.conftest import Neo4jServer, make_settings

SPARE_PASSWORD = "memlattice-spare"


def _spare(folder: str) -> Iterator[Settings]:
    with private_neo4j(SPARE_PASSWORD, folder=folder, heap="512m", pagecache="128m") as address:
        yield make_settings(Neo4jServer(address.uri, address.user, address.password),
                            auth_mode="keyless")


@pytest.fixture(scope="session")
def spare_settings() -> Iterator[Settings]:
    """Settings (keyless, default embedder) on a private Neo4j of its own."""
    yield from _spare("test-neo4j-spare-a")


@pytest.fixture(scope="session")
def second_spare_settings() -> Iterator[Settings]:
    """Another private Neo4j: where a backup of the first is restored."""
    yield from _spare("test-neo4j-spare-b")
