"""The benchmark's retrieval figures and its leave-one-conversation-out choice."""

from __future__ import annotations

import math

import pytest

from bench.retrieval_metrics import leave_one_out, score


def test_figures_of_a_ranked_list() -> None:
    s = score(["x", "a", "y", "b", "z", "w"], frozenset({"a", "b", "c"}), k=10)
    assert s.recall == pytest.approx(2 / 3)
    assert s.hit == 1.0
    assert s.precision5 == pytest.approx(2 / 5)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert s.ndcg == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / ideal)


def test_ndcg_rewards_evidence_higher_in_the_list() -> None:
    evidence = frozenset({"a"})
    first, third = score(["a", "x", "y"], evidence, 10), score(["x", "y", "a"], evidence, 10)
    assert first.recall == third.recall == 1.0
    assert first.ndcg == 1.0 > third.ndcg


def test_only_the_top_k_count() -> None:
    s = score(["x", "y", "a"], frozenset({"a"}), k=2)
    assert (s.recall, s.hit, s.ndcg) == (0.0, 0.0, 0.0)


def test_a_question_without_evidence_is_refused() -> None:
    with pytest.raises(ValueError):
        score(["a"], frozenset(), 10)


def test_leave_one_out_chooses_on_the_other_groups() -> None:
    # "wide" wins on g1 alone by far; without g1 "narrow" wins, so g1 is scored on narrow.
    by_value = {
        "narrow": {"g1": [0.1], "g2": [0.8], "g3": [0.8]},
        "wide": {"g1": [1.0], "g2": [0.5], "g3": [0.6]},
    }
    held = {h.group: h for h in leave_one_out(by_value)}
    assert held["g1"].chosen == "narrow" and held["g1"].score == pytest.approx(0.1)
    # Without g2: narrow 0.45, wide 0.8 -> wide, scored 0.5 on g2.
    assert held["g2"].chosen == "wide" and held["g2"].score == pytest.approx(0.5)
    assert held["g3"].chosen == "wide"
