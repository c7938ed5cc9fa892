"""schema.graphql is the checked-in SDL of the running schema, byte for byte, and what a
running server introspects."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from graphql import (
    GraphQLSchema,
    build_client_schema,
    build_schema,
    get_introspection_query,
    print_directive,
    print_type,
)
from graphql.type import is_introspection_type

from memlattice.resolvers.schema import schema

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schema.graphql"


def test_schema_file_matches_the_code() -> None:
    expected = schema.as_str() + "\n"
    actual = SCHEMA_FILE.read_text(encoding="utf-8")
    if actual != expected:
        diff = "".join(difflib.unified_diff(
            actual.splitlines(keepends=True), expected.splitlines(keepends=True),
            fromfile="schema.graphql", tofile="memlattice.resolvers.schema (code)", n=2))
        raise AssertionError(
            "schema.graphql is out of date with the code; regenerate it with\n"
            "    memlattice export-schema > schema.graphql\n\n" + diff[:4000]
        )


def test_schema_file_ends_with_one_newline() -> None:
    text = SCHEMA_FILE.read_text(encoding="utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n"), (
        "run `memlattice export-schema > schema.graphql`")


def test_export_schema_command_prints_the_file() -> None:
    """The command the failure message recommends really produces the file's content."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "memlattice.cli", "export-schema"],
        capture_output=True, text=True, timeout=60, cwd=SCHEMA_FILE.parent, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == schema.as_str() + "\n"


def _by_name(built: GraphQLSchema) -> dict[str, str]:
    """Each type and directive as SDL, by name: the order types are listed in is not part
    of a schema (introspection lists them as the server holds them, the file sorted)."""
    printed = {name: print_type(t) for name, t in built.type_map.items()
               if not is_introspection_type(t)}
    printed.update({f"@{d.name}": print_directive(d) for d in built.directives})
    return printed


async def test_schema_file_is_what_the_running_server_introspects(app_client: Any) -> None:
    """What a client tool sees (GraphiQL, graphql-codegen pointed at an endpoint, Apollo's
    tooling) is the introspection of the running server, not the code's printout: the
    file must say the same, descriptions, defaults and deprecations included."""
    query = get_introspection_query(descriptions=True, specified_by_url=True,
                                    directive_is_repeatable=True,
                                    input_value_deprecation=True)
    response = await app_client.post("/graphql", json={"query": query})
    assert response.status_code == 200, response.text
    body = response.json()
    assert not body.get("errors"), body["errors"]
    live = _by_name(build_client_schema(body["data"]))
    checked_in = _by_name(build_schema(SCHEMA_FILE.read_text(encoding="utf-8")))
    assert set(live) == set(checked_in), set(live) ^ set(checked_in)
    differing = [name for name in live if live[name] != checked_in[name]]
    assert not differing, "schema.graphql differs from the live schema in " + ", ".join(
        differing) + "; regenerate it with `memlattice export-schema > schema.graphql`"
