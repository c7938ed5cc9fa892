"""memlattice.core.rank_fusion: the orders the write path and the offers fuse."""

from __future__ import annotations

from memlattice.core.rank_fusion import order_by, reciprocal_rank_fusion


def test_order_by_leaves_out_the_unscored_and_breaks_ties_by_key() -> None:
    rows = [{"id": "b", "s": 0.5}, {"id": "a", "s": 0.5}, {"id": "c", "s": None},
            {"id": "d", "s": 0.9}]
    assert order_by(rows, lambda r: r["s"], lambda r: r["id"]) == ["d", "a", "b"]


def test_the_first_of_two_orders_is_the_one_both_put_high() -> None:
    rows = [{"id": "old statement", "v": 0.80, "t": 7.0},
            {"id": "nearest by vector only", "v": 0.81, "t": None},
            {"id": "nearest by words only", "v": None, "t": 9.0}]
    fused = reciprocal_rank_fusion([order_by(rows, lambda r: r["v"], lambda r: r["id"]),
                                    order_by(rows, lambda r: r["t"], lambda r: r["id"])])
    assert fused[0] == "old statement"
