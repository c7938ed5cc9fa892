"""Schemathesis against the live endpoint: every generated operation gets a coded answer.

A real server process on the suite's Neo4j; a few examples per root field
keep this under a minute (`python -m bench.fuzz` runs hundreds). No 5xx, no
INTERNAL, and the server is still alive at the end.
"""

from __future__ import annotations

from pathlib import Path

from bench.fuzz import fuzz
from memlattice.settings import Settings
from tests.integration._apps import spawned_server

EXAMPLES = 10


def test_fuzzed_operations_never_fail_internally(settings: Settings, tmp_path: Path) -> None:
    with spawned_server(settings, tmp_path / "server.log") as (process, base):
        report = fuzz(base, examples=EXAMPLES, seed=5)
        assert process.poll() is None, "the server died under fuzzing"
    assert report.cases >= EXAMPLES * len(report.by_field) > 0
    assert report.answered > 0, "nothing got past validation"
    assert not report.failures, report.failures[:3]
    assert set(report.statuses) <= {200}, report.statuses
