"""The package's layers, as folders, import only downwards.

A module may import its own layer and the layers below it, never one above:
the graph never reaches for a service, a service never for the GraphQL layer.
Read from the source with `ast` (imports under TYPE_CHECKING count too), so a
violation fails here before it becomes an import cycle somewhere else.
"""

from __future__ import annotations

import ast
from pathlib import Path

import memlattice

PACKAGE = Path(memlattice.__file__).resolve().parent

# Lower numbers are lower layers; folders of one number are peers.
LAYERS: dict[str, int] = {
    "core": 0,
    "graph": 1, "embeddings": 1, "neo4j_local": 1,
    "search": 2,
    "services": 3,
    "portability": 4,
    "resolvers": 5,
    "server": 6,
    "cli": 7, "mcp": 7,
}


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "memlattice" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in LAYERS else None


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (graph/ and resolvers/ are linked in)."""
    found: dict[str, Path] = {}
    for layer in LAYERS:
        root = PACKAGE / layer
        for path in sorted(root.rglob("*.py")):
            relative = path.relative_to(PACKAGE).with_suffix("")
            name = ".".join(("memlattice", *relative.parts))
            found[name.removesuffix(".__init__")] = path
    return found


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_every_package_folder_has_a_layer() -> None:
    folders = {p.name for p in PACKAGE.iterdir()
               if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(LAYERS)


def test_layers_import_only_downwards() -> None:
    violations = []
    for name, path in modules().items():
        own = layer_of(name)
        assert own is not None
        for target in imported(path):
            other = layer_of(target)
            if other is not None and LAYERS[other] > LAYERS[own]:
                violations.append(f"{name} ({own}) imports {target} ({other})")
    assert not violations, "\n".join(sorted(violations))


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("from memlattice.server.app import create_app\n")
    assert {"memlattice.server.app", "memlattice.server.app.create_app"} <= imported(source)
    assert LAYERS[layer_of("memlattice.server.app") or ""] > LAYERS["graph"]
