"""The CLI answers at once (issue 16, item 8): what `--help` imports, what a benchmark's
`--help` does, and that SIGTERM lets a benchmark stop what it started.

No timing is asserted (the machine is shared and slow); what makes the CLI slow is
measurable without a clock: the modules it imports, and the work it starts.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memlattice.cli.commands.bench import BENCHMARKS

HEAVY = ("strawberry", "neo4j", "numpy", "pydantic", "pydantic_settings", "rich", "starlette",
         "httpx", "memlattice.server", "memlattice.core.model")


def test_building_the_cli_imports_nothing_heavy() -> None:
    """`memlattice --help` builds the parser: that must load no driver, schema or model."""
    probe = ("import sys; from memlattice.cli import build_parser; build_parser()"
             f"; print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_a_runtime_without_an_llm_never_loads_openai() -> None:
    """Every command that opens the runtime, the server and the MCP server import these;
    `openai` (about a second of start-up) loads only once a facts model or the openai
    embedder is used."""
    probe = ("import sys, memlattice.server.app, memlattice.server.runtime, memlattice.mcp"
             "; print('openai' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "False", done.stdout


# What a command that only needs the database must not load: the GraphQL layer, the
# services and their write-side graph code (the migrations bring it), the embedders.
SERVICE = ("strawberry", "graphql", "httpx", "memlattice.server.runtime",
           "memlattice.services.memories", "memlattice.graph.migrations",
           "memlattice.embeddings", "memlattice.resolvers")


@pytest.mark.parametrize("command", [["keys", "list"], ["keys", "limits", "0" * 12,
                                                        "--rate", "5"]])
def test_a_keys_command_loads_the_driver_and_nothing_of_the_service(
        command: list[str]) -> None:
    """`memlattice keys limits` took 13-18 s on a loaded machine, about nine tenths of
    it importing: the settings loaded strawberry (for the CORS origins) and the command
    the whole service, to open a driver. Run where no Neo4j listens, it fails
    UNAVAILABLE, having loaded the settings, the driver and the key code only."""
    with socket.socket() as probe_port:
        probe_port.bind(("127.0.0.1", 0))
        port = probe_port.getsockname()[1]  # closed again: nothing listens there
    probe = textwrap.dedent(f"""\
        import sys
        from memlattice.cli import main
        try:
            main({command!r})
        except SystemExit as exit:
            print(exit.code)
        print(sorted(m for m in {SERVICE!r} if m in sys.modules))
        """)
    env = {**os.environ, "NEO4J_URI": f"bolt://127.0.0.1:{port}"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=True, env=env)
    assert done.stdout.split("\n")[:2] == ["2", "[]"], (done.stdout, done.stderr[-2000:])
    assert "cannot be reached" in done.stderr, done.stderr[-2000:]


def test_keys_choices_agree_with_the_model() -> None:
    """keys.py spells the scope and clearance names out so as not to import the model."""
    from memlattice.cli.commands import keys
    from memlattice.core.model import Scope, Sensitivity

    assert keys.SCOPES == [s.value for s in Scope]
    assert keys.CLEARANCES == [s.value for s in Sensitivity]


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_benchmark_help_prints_help_and_starts_nothing(name: str, tmp_path: Path) -> None:
    """`memlattice bench provision --help` used to start a 125 MB download."""
    env = {k: v for k, v in os.environ.items() if k != "NEO4J_URI"}
    env.update(TMPDIR=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"),
               MAVEN_OPTS=f"-Dmaven.repo.local={tmp_path / 'm2'}")
    done = subprocess.run([sys.executable, "-m", "memlattice.cli", "bench", name, "--help"],
                          capture_output=True, text=True, timeout=300, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage:"), done.stdout[:500]
    assert list(tmp_path.iterdir()) == [], "a benchmark's --help created files"


def test_sigterm_lets_a_benchmark_stop_what_it_started(tmp_path: Path) -> None:
    """A benchmark's `finally` (where it stops its private Neo4j) runs on SIGTERM too."""
    (tmp_path / "fake_bench.py").write_text(textwrap.dedent("""\
        import asyncio

        async def main() -> None:
            try:
                print("started", flush=True)
                await asyncio.sleep(3600)
            finally:
                print("stopped what it started", flush=True)
        """))
    runner = textwrap.dedent(f"""\
        import argparse, sys
        sys.path.insert(0, {str(tmp_path)!r})
        from memlattice.cli.commands import bench
        bench.BENCHMARKS["fake"] = "fake_bench"
        bench.cmd_bench(argparse.Namespace(name="fake", args=[]), None)
        """)
    process = subprocess.Popen([sys.executable, "-c", runner], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "started"
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "stopped what it started" in out, err
    assert process.returncode == 130 and "interrupted" in err, err


@pytest.mark.parametrize(("log_format", "json_lines"), [("json", True), ("text", False),
                                                        (None, False)])
def test_the_cli_logs_in_the_format_the_service_is_told_to(log_format: str | None,
                                                           json_lines: bool) -> None:
    """MEMLATTICE_LOG_FORMAT covers the CLI's own lines (the Neo4j start-up before
    `serve`); unset, a person at a terminal reads plain text."""
    probe = ("import logging; from memlattice.cli import configure_cli_logging;"
             " from memlattice.core.settings import Settings;"
             " configure_cli_logging(Settings());"
             " logging.getLogger('memlattice.neo4j_local').info('Neo4j is up')")
    env = {k: v for k, v in os.environ.items() if k != "MEMLATTICE_LOG_FORMAT"}
    if log_format:
        env["MEMLATTICE_LOG_FORMAT"] = log_format
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=True, env=env)
    (line,) = done.stderr.strip().splitlines()
    assert "Neo4j is up" in line
    assert line.startswith("{") is json_lines
    if json_lines:
        import json

        assert json.loads(line)["msg"] == "Neo4j is up"
