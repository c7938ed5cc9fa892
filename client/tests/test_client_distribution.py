"""The client is a small distribution of its own: it imports only the standard
library and what client/pyproject.toml declares (httpx, pydantic, and httpx-ws
for live events), never the server; it asks for ranges, not pins, so it fits
into the caller's environment; and it ships the `py.typed` marker."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

CLIENT_ROOT = Path(__file__).resolve().parents[1]
PACKAGE = CLIENT_ROOT / "memlattice_client"
# Where a distribution's import name differs from its name.
IMPORT_NAMES = {"httpx-ws": "httpx_ws"}


def _project() -> dict[str, Any]:
    with (CLIENT_ROOT / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return match.group(0).lower()


def _runtime_requirements() -> list[str]:
    project = _project()["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["events"]]


def _imported_top_levels(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_package_imports_only_the_standard_library_and_declared_dependencies() -> None:
    declared = {IMPORT_NAMES.get(name, name)
                for name in map(_name, _runtime_requirements())}
    allowed = set(sys.stdlib_module_names) | declared | {"memlattice_client"}
    sources = sorted(PACKAGE.glob("*.py"))
    assert len(sources) > 5  # the package was found at all
    for source in sources:
        foreign = _imported_top_levels(source) - allowed
        assert not foreign, f"{source.name} imports {foreign}, not declared in client/pyproject"


def test_dependencies_are_httpx_and_pydantic_as_ranges() -> None:
    project = _project()["project"]
    assert sorted(map(_name, project["dependencies"])) == ["httpx", "pydantic"]
    for requirement in _runtime_requirements():
        assert "==" not in requirement and "<" in requirement and ">=" in requirement, (
            f"{requirement}: give a range (a floor and the next major), not a pin")


def test_the_typed_marker_is_shipped() -> None:
    assert (PACKAGE / "py.typed").is_file()
    assert "py.typed" in _project()["tool"]["setuptools"]["package-data"]["memlattice_client"]
