"""memlattice.search.fusion: z-score fusion of signals over a candidate pool."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from memlattice.core.rank_fusion import reciprocal_rank_fusion
from memlattice.search.fusion import (
    completed,
    fuse_z,
    typical_best,
    zscores,
)


def test_zscores_standardise_and_flat_signals_say_nothing() -> None:
    z = zscores({"a": 1.0, "b": 2.0, "c": 3.0})
    assert math.isclose(z["b"], 0.0) and math.isclose(z["a"], -z["c"])
    assert zscores({"a": 5.0, "b": 5.0}) == {"a": 0.0, "b": 0.0}
    assert zscores({}) == {}


def test_missing_values_take_the_lowest_seen() -> None:
    assert completed({"a": 0.9, "b": None}, ["a", "b", "c"]) == {"a": 0.9, "b": 0.9, "c": 0.9}
    assert completed({"a": 0.9, "b": 0.2}, ["a", "b", "c"])["c"] == 0.2


def test_a_signal_with_a_clear_winner_outweighs_a_flat_noisy_one() -> None:
    ids = ["hit", "x", "y", "z"]
    strong = {"hit": 10.0, "x": 1.0, "y": 1.0, "z": 1.0}      # one clear lexical match
    weak = {"hit": 0.50, "x": 0.52, "y": 0.51, "z": 0.49}     # cosine that barely varies
    fused = fuse_z([strong, weak], ids)
    assert max(fused, key=lambda k: fused[k]) == "hit"


def test_fused_scores_are_the_normal_cdf_of_the_scaled_z_sum() -> None:
    fused = fuse_z([{"a": 3.0, "b": 1.0, "c": 2.0}], ["a", "b", "c"])
    z = math.sqrt(1.5) / typical_best(3)  # (3 - 2) / population std of (1, 2, 3)
    assert math.isclose(fused["a"], 0.5 * math.erfc(-z / math.sqrt(2)))
    assert math.isclose(fused["c"], 0.5) and math.isclose(fused["a"] + fused["b"], 1.0)
    assert fuse_z([{"a": 1.0, "b": 1.0}], ["a", "b"]) == {"a": 0.5, "b": 0.5}
    assert fuse_z([], []) == {}


@given(st.dictionaries(st.sampled_from("abcdefgh"), st.floats(-1e6, 1e6), min_size=1),
       st.dictionaries(st.sampled_from("abcdefgh"), st.floats(0, 1), min_size=1))
def test_fused_scores_are_finite_and_bounded(a: dict[str, float], b: dict[str, float]) -> None:
    ids = sorted(set(a) | set(b))
    fused = fuse_z([dict(a), dict(b)], ids)
    assert set(fused) == set(ids)
    assert all(0.0 <= v <= 1.0 and math.isfinite(v) for v in fused.values())


def test_the_top_of_a_large_pool_keeps_its_spread() -> None:
    """Three signals that agree on a clear winner and a clear second of 100
    candidates: both used to read 1.0000; now they read below 1 and apart."""
    ids = [f"m{i:03}" for i in range(100)]
    signal = {k: float(i % 7) / 10 for i, k in enumerate(ids)}
    signal.update({"m000": 2.0, "m001": 1.6})  # z about 5.8 and 4.4
    fused = fuse_z([signal, signal, signal], ids)
    assert 0.99 < fused["m001"] < fused["m000"] < 0.9996  # were 1.0 and 0.99999999999998
    assert fused["m000"] - fused["m001"] > 0.005
    assert typical_best(1) == 1.0 and math.isclose(typical_best(100), math.sqrt(2 * math.log(100)))


def test_reciprocal_rank_fusion_rewards_agreement_and_keeps_ties_in_order() -> None:
    # "b" is second in both lists, "a" first in one only: agreement wins.
    assert reciprocal_rank_fusion([["a", "b", "c"], ["d", "b", "e"]])[0] == "b"
    # Equal sums keep the order of first appearance.
    assert reciprocal_rank_fusion([["x", "y"], ["y", "x"]]) == ["x", "y"]
    assert reciprocal_rank_fusion([["only"], []]) == ["only"]
    assert reciprocal_rank_fusion([]) == []
