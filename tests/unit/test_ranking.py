"""Fusion is deterministic and mode-aware."""

from __future__ import annotations

from memlattice.model import SearchMode
from memlattice.ranking import RRF_K, Candidate, fuse


def test_rrf_rewards_agreement_between_lists() -> None:
    semantic = [Candidate("a", 0.9), Candidate("b", 0.8), Candidate("c", 0.1)]
    lexical = [Candidate("b", 7.0), Candidate("d", 3.0)]
    fused = fuse(semantic, lexical, SearchMode.HYBRID)
    assert [f.id for f in fused][:1] == ["b"]
    b = fused[0]
    assert b.score == 1 / (RRF_K + 2) + 1 / (RRF_K + 1)
    assert (b.similarity, b.fts, b.similarity_rank, b.fts_rank) == (0.8, 7.0, 2, 1)


def test_single_mode_uses_its_own_scores_and_ignores_the_other_list() -> None:
    semantic = [Candidate("a", 0.5)]
    lexical = [Candidate("z", 9.0)]
    assert [(f.id, f.score) for f in fuse(semantic, lexical, SearchMode.SEMANTIC)] == [("a", 0.5)]
    assert [(f.id, f.score) for f in fuse(semantic, lexical, SearchMode.LEXICAL)] == [("z", 9.0)]


def test_ties_break_by_id_whatever_the_input_order() -> None:
    one = fuse([Candidate("b", 0.5), Candidate("a", 0.5)], [], SearchMode.SEMANTIC)
    two = fuse([Candidate("a", 0.5), Candidate("b", 0.5)], [], SearchMode.SEMANTIC)
    assert [f.id for f in one] == [f.id for f in two] == ["a", "b"]


def test_duplicates_keep_their_best_score() -> None:
    fused = fuse([Candidate("a", 0.2), Candidate("a", 0.7)], [], SearchMode.SEMANTIC)
    assert [(f.id, f.score) for f in fused] == [("a", 0.7)]
