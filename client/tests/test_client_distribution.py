"""The client is a small distribution of its own: it imports only the standard
library and what client/pyproject.toml declares (httpx, pydantic, and httpx-ws
for live events), never the server; each framework adapter imports only its own
extra, and importing the client loads none of them; it asks for ranges, not
pins, so it fits into the caller's environment; and it ships the `py.typed` marker."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

CLIENT_ROOT = Path(__file__).resolve().parents[1]
PACKAGE = CLIENT_ROOT / "memlattice_client"
# Where a distribution's import name differs from its name.
IMPORT_NAMES = {"httpx-ws": "httpx_ws", "langchain-core": "langchain_core",
                "llama-index-core": "llama_index"}
# The framework adapters (memlattice_client/integrations/) and the extra each may import.
ADAPTER_EXTRAS = {"langgraph": "langgraph", "langchain": "langchain", "llamaindex": "llamaindex"}


def _project() -> dict[str, Any]:
    with (CLIENT_ROOT / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return match.group(0).lower()


def _runtime_requirements(*extras: str) -> list[str]:
    project = _project()["project"]
    return [*project["dependencies"],
            *(r for extra in ("events", *extras) for r in project["optional-dependencies"][extra])]


def _import_names(requirements: list[str]) -> set[str]:
    return {IMPORT_NAMES.get(name, name) for name in map(_name, requirements)}


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
    base = set(sys.stdlib_module_names) | {"memlattice_client"}
    sources = sorted(PACKAGE.rglob("*.py"))
    assert len(sources) > 5  # the package was found at all
    for source in sources:
        extra = ADAPTER_EXTRAS.get(source.stem) if source.parent.name == "integrations" else None
        allowed = base | _import_names(_runtime_requirements(*([extra] if extra else [])))
        foreign = _imported_top_levels(source) - allowed
        assert not foreign, f"{source.name} imports {foreign}, not declared in client/pyproject"


def test_importing_the_client_loads_no_framework() -> None:
    frameworks = sorted(_import_names(_runtime_requirements(*ADAPTER_EXTRAS.values()))
                        - _import_names(_runtime_requirements()))
    assert frameworks == ["langchain_core", "langgraph", "llama_index"]
    code = ("import sys, memlattice_client, memlattice_client.integrations;"
            f" print(sorted(m for m in {frameworks!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_dependencies_are_httpx_and_pydantic_as_ranges() -> None:
    project = _project()["project"]
    assert sorted(map(_name, project["dependencies"])) == ["httpx", "pydantic"]
    for requirement in _runtime_requirements(*ADAPTER_EXTRAS.values()):
        assert "==" not in requirement and "<" in requirement and ">=" in requirement, (
            f"{requirement}: give a range (a floor and the next major), not a pin")


def test_the_typed_marker_is_shipped() -> None:
    assert (PACKAGE / "py.typed").is_file()
    assert "py.typed" in _project()["tool"]["setuptools"]["package-data"]["memlattice_client"]


def test_the_package_says_the_distributions_version() -> None:
    import memlattice_client

    assert memlattice_client.__version__ == _project()["project"]["version"]
