"""bench.knowledge_update's scoring (bench/_update_scoring.py) and its scenario files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench._update_scoring import (
    LinkCounts,
    Tally,
    closure,
    replaced_by,
    scenario_problems,
    score_question,
)

SCENARIOS = Path(__file__).resolve().parents[2] / "bench" / "knowledge_updates"
CHAIN = [("b", "a"), ("c", "b")]  # a -> b -> c


def test_a_chain_replaces_every_earlier_state() -> None:
    assert replaced_by(CHAIN, "c") == {"a", "b"}
    assert replaced_by(CHAIN, "a") == set()
    assert closure(CHAIN) == {("b", "a"), ("c", "b"), ("c", "a")}


def test_present_questions_score_current_and_stale_above() -> None:
    current = score_question("present", ["c", "a", "x"], ["c"], {"a", "b"})
    assert current.hit and not current.stale_above
    stale = score_question("present", ["x", "b", "c"], ["c"], {"a", "b"})
    assert not stale.hit and stale.stale_above
    missing = score_question("present", ["a", "x"], ["c"], {"a", "b"})
    assert missing.stale_above  # the stale one returned, the current one not
    neither = score_question("present", ["x", "y"], ["c"], {"a", "b"})
    assert not neither.hit and not neither.stale_above


def test_past_asof_and_keep_questions() -> None:
    assert score_question("past", ["x", "y", "a"], ["a"]).hit
    assert not score_question("past", ["x", "y", "z", "a"], ["a"]).hit
    assert score_question("asof", ["b", "a"], ["b"]).hit
    assert not score_question("asof", ["a", "b"], ["b"]).hit
    assert score_question("keep", ["x", "k"], ["k"]).hit
    assert not score_question("keep", ["x", "k"], ["k"], outdated=["k"]).hit
    with pytest.raises(ValueError):
        score_question("future", [], ["a"])


def test_links_count_skipping_pairs_as_correct_but_not_for_recall() -> None:
    counts = LinkCounts()
    assert counts.precision is None and counts.recall is None
    counts.add([("c", "a"), ("b", "a"), ("x", "a")], CHAIN)
    assert counts.precision == pytest.approx(2 / 3)
    assert counts.recall == pytest.approx(1 / 2)
    counts.add([("q", "p")], [])  # a link in a negative scenario is wrong
    assert counts.precision == pytest.approx(2 / 4)
    assert counts.recall == pytest.approx(1 / 2)


def test_tally_rates_by_kind() -> None:
    tally = Tally([score_question("present", ["c"], ["c"], {"a"}),
                   score_question("present", ["a", "c"], ["c"], {"a"}),
                   score_question("past", ["a"], ["a"])])
    assert tally.rate("present") == 0.5 and tally.stale_above() == 0.5
    assert tally.rate("past") == 1.0 and tally.rate("asof") is None


def test_inconsistent_truth_is_reported() -> None:
    scenario = {"id": "s", "sessions": [{"id": "1", "at": "2026-01-01T00:00:00+00:00",
                                         "turns": [["m1", "A", "x"], ["m2", "A", "y"]]}],
                "updates": [{"older": "m2", "newer": "m1"}],
                "questions": [{"kind": "present", "q": "now?", "expect": "m2"},
                              {"kind": "asof", "q": "then?", "expect": "m1",
                               "asOf": "2025-12-31T00:00:00+00:00"}]}
    problems = scenario_problems(scenario)
    assert len(problems) == 3  # update not later, present answer replaced, asOf too early


@pytest.mark.parametrize("name", ["dev", "holdout", "unseen", "fresh", "sealed", "sealed2",
                                  "sealed3", "sealed4", "sealed5", "sealed6"])
def test_shipped_scenarios_are_sound(name: str) -> None:
    scenarios = json.loads((SCENARIOS / f"{name}.json").read_text())["scenarios"]
    assert len(scenarios) >= 24
    assert [p for s in scenarios for p in scenario_problems(s)] == []


def test_stale_hits_must_be_marked_outdated() -> None:
    marked = score_question("present", ["c", "a"], ["c"], {"a", "b"}, outdated=["a"])
    unmarked = score_question("present", ["c", "a"], ["c"], {"a", "b"})
    absent = score_question("present", ["c", "x"], ["c"], {"a", "b"})
    assert marked.stale_marked is True and unmarked.stale_marked is False
    assert absent.stale_marked is None
    assert Tally([marked, unmarked, absent]).stale_marked() == 0.5
