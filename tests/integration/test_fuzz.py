"""Schemathesis against the live endpoint: every generated operation gets a coded answer.

A real server process on the suite's Neo4j; a few examples per root field
keep this under a minute (`python -m bench.fuzz` runs hundreds). No 5xx, no
INTERNAL, and the server is still alive at the end. Malformed raw bodies
(`fuzz_bodies`) are refused with coded errors, never a 5xx; the catalogue of
writes that name ids (`fuzz_ids`) gets its documented answers.
"""

from __future__ import annotations

from pathlib import Path

from bench.fuzz import fuzz, fuzz_bodies, fuzz_ids
from memlattice.core.settings import Settings
from tests.integration._apps import spawned_server

EXAMPLES = 10
# Refused before anything runs, so cheap: more of them.
BODY_EXAMPLES = 60


def test_fuzzed_operations_never_fail_internally(settings: Settings, tmp_path: Path) -> None:
    with spawned_server(settings, tmp_path / "server.log") as (process, base):
        report = fuzz(base, examples=EXAMPLES, seed=5)
        bodies = fuzz_bodies(base, examples=BODY_EXAMPLES, seed=5)
        ids = fuzz_ids(base)
        assert process.poll() is None, "the server died under fuzzing"
    assert report.cases >= EXAMPLES * len(report.by_field) > 0
    assert report.answered > 0, "nothing got past validation"
    assert not report.failures, report.failures[:3]
    assert set(report.statuses) <= {200}, report.statuses
    assert bodies.cases == BODY_EXAMPLES and not bodies.failures, bodies.failures[:3]
    assert set(bodies.statuses) <= {200, 400, 405}, bodies.statuses
    # Writes that name ids: each gets its documented answer; refused ones write nothing.
    assert ids.cases > 0 and not ids.failures, ids.failures
    assert set(ids.statuses) == {200}, ids.statuses
