"""Provisioning fails with a message naming what is missing."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from memlattice import neo4j_local
from memlattice.errors import ProvisioningError
from memlattice.settings import LocalNeo4jSettings


def test_java_21_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    java = neo4j_local.find_java()
    assert neo4j_local._java_major(java) is not None
    assert (neo4j_local._java_major(java) or 0) >= 21


def test_taken_port_is_named(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        settings = LocalNeo4jSettings(home=tmp_path / "home", cache_dir=tmp_path / "cache",
                                      bolt_port=port)
        with pytest.raises(ProvisioningError, match=f"port {port}") as caught:
            neo4j_local.start(settings, "memlattice-test")
    assert caught.value.details["missing"] == "port"


def test_missing_maven_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    settings = LocalNeo4jSettings(home=tmp_path / "home", cache_dir=tmp_path / "cache")
    with pytest.raises(ProvisioningError, match="Maven") as caught:
        neo4j_local.install(settings)
    assert caught.value.details["missing"] == "mvn"


def test_status_of_a_never_started_home(tmp_path: Path) -> None:
    settings = LocalNeo4jSettings(home=tmp_path / "nothing", bolt_port=1)
    status = neo4j_local.status(settings)
    assert not status.running and status.pid is None
    assert status.bolt_uri == "bolt://127.0.0.1:1"
