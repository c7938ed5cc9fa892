"""The small-first-pool rule: when a similarity-ranked search may stop at its first pool."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memlattice.core.model import ScoringMode, SearchMode
from memlattice.core.search_config import ExpansionConfig, SearchConfig
from memlattice.search.pool import factor_ceiling, first_pool, settled, similarity_bounded
from memlattice.search.ranking import Scored

PRECISE = SearchConfig(mode=SearchMode.SEMANTIC, scoring=ScoringMode.SIMILARITY)


def scored(*scores: float) -> list[Scored]:
    return [Scored(id=f"m{i:03}", score=s) for i, s in enumerate(scores)]


def test_only_similarity_ranked_semantic_searches_start_small() -> None:
    assert similarity_bounded(PRECISE)
    assert first_pool(PRECISE, 50) == 15
    for other in (
        SearchConfig(),  # hybrid mode, RRF
        PRECISE.model_copy(update={"scoring": ScoringMode.HYBRID}),
        PRECISE.model_copy(update={"mode": SearchMode.HYBRID}),
        PRECISE.model_copy(update={"mmr_lambda": 0.5}),
        PRECISE.model_copy(update={"reranker": "r"}),
        PRECISE.model_copy(update={"candidates": 30}),
        PRECISE.model_copy(update={"expansion": ExpansionConfig()}),
    ):
        assert not similarity_bounded(other)
        assert first_pool(other, 50) == other.candidate_count(50)


def test_first_pool_never_exceeds_the_full_pool() -> None:
    assert first_pool(PRECISE.model_copy(update={"limit": 1}), 50) == 10
    assert first_pool(PRECISE.model_copy(update={"limit": 7}), 50) == 11  # rounded up
    assert first_pool(PRECISE.model_copy(update={"limit": 100}), 50) == 150  # below the full 500


def test_a_smaller_share_of_the_index_asks_for_a_wider_first_pool() -> None:
    assert first_pool(PRECISE, 50, share=1.0) == 15
    assert first_pool(PRECISE, 50, share=0.5) == 30
    assert first_pool(PRECISE, 50, share=0.4) == 38  # rounded up
    assert first_pool(PRECISE, 50, share=0.25) == 50  # 60, capped at the full pool
    assert first_pool(PRECISE, 50, share=1e-6) == 50
    # Not known yet, or nonsense: the full pool.
    assert first_pool(PRECISE, 50, share=None) == 50
    assert first_pool(PRECISE, 50, share=0.0) == 50
    assert first_pool(PRECISE, 50, share=3.0) == 15


@given(st.floats(min_value=1e-9, max_value=1.0), st.floats(min_value=1e-9, max_value=1.0))
def test_the_first_pool_never_shrinks_as_the_share_does(a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert first_pool(PRECISE, 50, share=low) >= first_pool(PRECISE, 50, share=high)
    assert 15 <= first_pool(PRECISE, 50, share=low) <= 50


def test_boosts_raise_the_ceiling_only_with_query_words() -> None:
    assert factor_ceiling(PRECISE, None) == 1.0
    assert factor_ceiling(PRECISE, "  ,, ") == 1.0
    assert factor_ceiling(PRECISE, "paris trip") == (1 + PRECISE.key_boost) * (1 + PRECISE.tag_boost)


def test_settled_needs_a_strictly_better_limit_th_score() -> None:
    top = scored(0.9, 0.8, 0.7)
    assert settled(top, pool_floor=0.6, ceiling=1.0, limit=3, min_score=None)
    assert not settled(top, pool_floor=0.7, ceiling=1.0, limit=3, min_score=None)  # a tie
    assert not settled(top, pool_floor=0.6, ceiling=1.2, limit=3, min_score=None)
    assert not settled([], pool_floor=None, ceiling=1.0, limit=3, min_score=None)


def test_a_short_pool_settles_only_through_min_score() -> None:
    short = scored(0.9)
    assert not settled(short, pool_floor=0.5, ceiling=1.0, limit=3, min_score=None)
    assert settled(short, pool_floor=0.5, ceiling=1.0, limit=3, min_score=0.6)
    assert not settled(short, pool_floor=0.5, ceiling=1.0, limit=3, min_score=0.5)


@given(st.lists(st.floats(0, 1), min_size=1, max_size=60),
       st.lists(st.floats(0, 1), min_size=1, max_size=60),
       st.integers(1, 10), st.integers(1, 40))
def test_settled_pools_give_the_same_top_as_the_whole_set(
        similarities: list[float], factors: list[float], limit: int, pool: int) -> None:
    """Whenever `settled` says yes, ranking only the pool (the most similar `pool`
    memories) yields exactly the top `limit` of ranking every memory."""
    memories = [(f"m{i:03}", s, factors[i % len(factors)]) for i, s in enumerate(similarities)]
    by_similarity = sorted(memories, key=lambda m: (-m[1], m[0]))

    def rank(ms: list[tuple[str, float, float]]) -> list[Scored]:
        return sorted((Scored(id=i, score=s * f) for i, s, f in ms),
                      key=lambda x: (-x.score, x.id))

    head = by_similarity[:pool]
    if settled(rank(head), pool_floor=min(s for _, s, _ in head), ceiling=1.0, limit=limit,
               min_score=None):
        assert rank(head)[:limit] == rank(memories)[:limit]
