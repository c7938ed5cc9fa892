"""schema.graphql is the checked-in SDL of the running schema, byte for byte."""

from __future__ import annotations

import difflib
from pathlib import Path

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
