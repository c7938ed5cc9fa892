"""bench.reorder_offline: reorderings of a dump's present questions, scored as the bench does."""

from __future__ import annotations

from typing import Any

from bench.reorder_offline import figures, recency_prior, restatement_first


def hit(order: int, score: float, role: str, speaker: int = 0) -> dict[str, Any]:
    return {"order": order, "score": score, "role": role, "speaker": speaker,
            "outdated": False}


def row(hits: list[dict[str, Any]], *, present: bool = True, kind: str = "present",
        cosines: list[list[float]] | None = None) -> dict[str, Any]:
    return {"file": "dev", "kind": kind, "present": present, "past": False, "hits": hits,
            "cosines": cosines or [[1.0] * len(hits) for _ in hits]}


def test_figures_score_current_stale_and_keep() -> None:
    rows = [row([hit(1, 2.0, "stale"), hit(5, 1.0, "expected")]),
            row([hit(5, 2.0, "expected"), hit(1, 1.0, "stale")]),
            row([hit(3, 1.0, "other"), hit(2, 0.5, "expected")], kind="keep")]
    assert figures(rows) == {"current@1": 0.5, "stale-above": 0.5, "keep@3": 1.0}


def test_recency_prior_lifts_the_newer_of_close_hits_only_for_present_questions() -> None:
    close = [hit(1, 1.0, "stale"), hit(9, 0.95, "expected"), hit(4, 0.0, "other")]
    assert recency_prior(0.2)(row(close))["hits"][0]["role"] == "expected"
    assert recency_prior(0.0)(row(close))["hits"][0]["role"] == "stale"
    assert recency_prior(0.2)(row(close, present=False))["hits"][0]["role"] == "stale"


def test_restatement_needs_the_same_speaker_and_the_cosine() -> None:
    hits = [hit(1, 2.0, "stale"), hit(9, 1.0, "expected")]
    alike = [[1.0, 0.6], [0.6, 1.0]]
    assert restatement_first(0.5)(row(hits, cosines=alike))["hits"][0]["role"] == "expected"
    assert restatement_first(0.7)(row(hits, cosines=alike))["hits"][0]["role"] == "stale"
    other = [hit(1, 2.0, "stale"), hit(9, 1.0, "expected", speaker=1)]
    assert restatement_first(0.5)(row(other, cosines=alike))["hits"][0]["role"] == "stale"
    assert restatement_first(None)(row(hits, cosines=alike))["hits"][0]["role"] == "stale"
