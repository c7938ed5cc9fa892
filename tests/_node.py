"""Node.js scripts of tests/node (third-party JavaScript clients) run from the tests.

`./dev test` installs their packages (`npm ci` in tests/node) and, when the
machine's Node is missing or too old, Node itself into the venv; without
either the tests fail with what to run, they do not skip.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

NODE_DIR = Path(__file__).resolve().parent / "node"
VENV_NODE = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "node"


def node_executable() -> str:
    found = shutil.which("node") or (str(VENV_NODE) if VENV_NODE.exists() else None)
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
