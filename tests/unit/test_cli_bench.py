"""`memlattice bench` finds the repository's bench/ modules and hands them their arguments."""

from __future__ import annotations

import subprocess
import sys


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memlattice.cli", *args], check=False,
                          capture_output=True, text=True, timeout=120)


def test_arguments_reach_the_benchmark() -> None:
    done = run_cli("bench", "ingest", "--help")
    assert done.returncode == 0, done.stderr
    assert "memlattice bench ingest" in done.stdout and "--count" in done.stdout


def test_unknown_benchmark_lists_the_choices() -> None:
    done = run_cli("bench", "nonsense")
    assert done.returncode == 2
    assert "filtered-recall" in done.stderr and "latency" in done.stderr
