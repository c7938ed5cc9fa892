"""Ranking rules, one at a time, on hand-made candidates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlattice.core.lucene import words
from memlattice.core.model import ScoringMode, SearchMode
from memlattice.core.search_config import ExpansionConfig, SearchConfig, Weights
from memlattice.search.ranking import (
    Candidate,
    Neighbour,
    Scored,
    Step,
    apply_graph,
    base_scores,
    finish,
    mmr,
    popularity,
    recency,
    successors_first,
)

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _ids(scored: list) -> list[str]:  # type: ignore[type-arg]
    return [s.id for s in scored]


def test_rrf_rewards_agreement_between_lists() -> None:
    cands = [Candidate("a", similarity=0.9), Candidate("b", similarity=0.8),
             Candidate("b", fts=7.0), Candidate("d", fts=3.0)]
    scored = base_scores(cands, SearchConfig(scoring=ScoringMode.RRF), now=NOW, query=None)
    assert _ids(scored)[0] == "b"
    b = scored[0]
    assert b.score == pytest.approx(1 / 62 + 1 / 61)
    assert (b.similarity, b.fts, b.similarity_rank, b.fts_rank) == (0.8, 7.0, 2, 1)


def test_fusion_is_the_default_and_sums_z_scores_of_both_signals() -> None:
    # Every candidate carries both signals (the service scores each on both).
    cands = [Candidate("a", similarity=0.90, fts=0.0), Candidate("b", similarity=0.80, fts=9.0),
             Candidate("c", similarity=0.85, fts=1.0), Candidate("d", similarity=0.70, fts=0.5)]
    scored = base_scores(cands, SearchConfig(), now=NOW, query=None)
    assert _ids(scored) == ["b", "a", "c", "d"]
    assert all(0.0 < s.score < 1.0 for s in scored)


def test_fusion_of_one_signal_keeps_its_order() -> None:
    cands = [Candidate("a", fts=2.0), Candidate("b", fts=6.0), Candidate("c", fts=4.0)]
    lexical = SearchConfig(mode=SearchMode.LEXICAL)
    assert _ids(base_scores(cands, lexical, now=NOW, query=None)) == ["b", "c", "a"]


def test_similarity_mode_uses_the_chosen_list_only() -> None:
    cands = [Candidate("a", similarity=0.5), Candidate("z", fts=9.0)]
    semantic = SearchConfig(mode=SearchMode.SEMANTIC, scoring=ScoringMode.SIMILARITY)
    lexical = SearchConfig(mode=SearchMode.LEXICAL, scoring=ScoringMode.SIMILARITY)
    assert [(s.id, s.score) for s in base_scores(cands, semantic, now=NOW, query=None)] == [
        ("a", 0.5)]
    assert [(s.id, s.score) for s in base_scores(cands, lexical, now=NOW, query=None)] == [
        ("z", 9.0)]


def test_recency_halves_every_half_life() -> None:
    assert recency(NOW - timedelta(days=10), NOW, 10) == pytest.approx(0.5)
    assert recency(NOW - timedelta(days=20), NOW, 10) == pytest.approx(0.25)
    assert recency(NOW + timedelta(days=1), NOW, 10) == 1.0


def test_hybrid_weights_let_recency_win_a_tie() -> None:
    config = SearchConfig(scoring=ScoringMode.HYBRID, decay_half_life_days=1,
                          weights=Weights(similarity=1, fulltext=0, recency=1, popularity=0))
    old = Candidate("old", similarity=0.8, created_at=NOW - timedelta(days=30))
    new = Candidate("new", similarity=0.8, created_at=NOW)
    scored = base_scores([old, new], config, now=NOW, query=None)
    assert _ids(scored) == ["new", "old"]
    assert scored[0].recency == 1.0 and scored[0].score == pytest.approx(0.9)


def test_popularity_is_log_scaled_within_the_candidates() -> None:
    assert popularity(0, 10) == 0.0
    assert popularity(10, 10) == 1.0
    assert 0 < popularity(3, 10) < 1


def test_key_and_tag_boosts_and_confidence_factor() -> None:
    config = SearchConfig(mode=SearchMode.SEMANTIC, scoring=ScoringMode.SIMILARITY)
    plain = Candidate("a", similarity=0.5)
    keyed = Candidate("b", similarity=0.5, key="favourite colour")
    tagged = Candidate("c", similarity=0.5, tags=("colour",))
    doubtful = Candidate("d", similarity=0.5, confidence=0.5)
    scored = {s.id: s for s in base_scores([plain, keyed, tagged, doubtful], config, now=NOW,
                                           query="what is my favourite colour")}
    assert scored["b"].score == pytest.approx(0.5 * 1.1)
    assert scored["c"].score == pytest.approx(0.5 * 1.05)
    assert scored["d"].score == pytest.approx(0.25)
    assert scored["a"].boost == 1.0


_WORDS = st.sampled_from(["colour", "blue", "Lisbon", "river", "x", "!!", "to-do", "1984"])


@given(tags=st.lists(st.lists(_WORDS, max_size=3).map(" ".join), max_size=4),
       query=st.lists(_WORDS, max_size=4).map(" ".join))
def test_a_query_word_in_any_tag_boosts_once(tags: list[str], query: str) -> None:
    config = SearchConfig(mode=SearchMode.SEMANTIC, scoring=ScoringMode.SIMILARITY)
    (scored,) = base_scores([Candidate("a", similarity=0.5, tags=tuple(tags))], config,
                            now=NOW, query=query)
    in_a_tag = any(set(words(t)) & set(words(query)) for t in tags)
    assert scored.boost == pytest.approx(1.05 if in_a_tag else 1.0)


def test_the_second_tag_boosts_and_a_tag_without_words_does_not() -> None:
    config = SearchConfig(mode=SearchMode.SEMANTIC, scoring=ScoringMode.SIMILARITY)
    scored = {s.id: s for s in base_scores(
        [Candidate("a", similarity=0.5, tags=("travel", "river walks")),
         Candidate("b", similarity=0.5, tags=("!!", "--"))],
        config, now=NOW, query="the river")}
    assert scored["a"].boost == pytest.approx(1.05)
    assert scored["b"].boost == 1.0


def test_ties_break_by_id_whatever_the_input_order() -> None:
    config = SearchConfig(mode=SearchMode.SEMANTIC, scoring=ScoringMode.SIMILARITY)
    one = base_scores([Candidate("b", similarity=0.5), Candidate("a", similarity=0.5)], config,
                      now=NOW, query=None)
    two = base_scores([Candidate("a", similarity=0.5), Candidate("b", similarity=0.5)], config,
                      now=NOW, query=None)
    assert _ids(one) == _ids(two) == ["a", "b"]


def test_graph_support_lifts_neighbours_and_admits_entrants_with_their_path() -> None:
    config = SearchConfig(mode=SearchMode.SEMANTIC, scoring=ScoringMode.SIMILARITY)
    scored = base_scores([Candidate("a", similarity=0.9), Candidate("b", similarity=0.5),
                          Candidate("c", similarity=0.55)], config, now=NOW, query=None)
    step_ab = Step("RELATED", "a", "b")
    step_ax = Step("RELATED", "x", "a")
    neighbours = [Neighbour("a", "b", (step_ab,)), Neighbour("a", "x", (step_ax,)),
                  Neighbour("b", "a", (step_ab,)),
                  Neighbour("a", "y", (step_ab, Step("RELATED", "b", "y")))]
    expansion = ExpansionConfig(max_expand=1, share=0.5, hop_discount=0.5)
    out = {s.id: s for s in apply_graph(scored, neighbours, expansion)}
    assert out["b"].score == pytest.approx(0.5 + 0.45)
    assert out["a"].graph == pytest.approx(0.25)
    assert out["c"].graph == 0.0
    assert "x" in out and out["x"].expanded and out["x"].path == (step_ax,)
    assert "y" not in out  # max_expand=1 admits only the best entrant


def test_mmr_prefers_novelty_when_lambda_is_low() -> None:
    config = SearchConfig(mode=SearchMode.SEMANTIC, scoring=ScoringMode.SIMILARITY)
    scored = base_scores([Candidate("a", similarity=0.9), Candidate("a2", similarity=0.89),
                          Candidate("b", similarity=0.7)], config, now=NOW, query=None)
    vectors = {"a": [1.0, 0.0], "a2": [1.0, 0.01], "b": [0.0, 1.0]}
    assert _ids(mmr(scored, vectors, 1.0, 3)) == ["a", "a2", "b"]
    assert _ids(mmr(scored, vectors, 0.3, 3))[:2] == ["a", "b"]


def test_finish_applies_min_score_then_limit() -> None:
    config = SearchConfig(mode=SearchMode.SEMANTIC, scoring=ScoringMode.SIMILARITY)
    scored = base_scores([Candidate(str(i), similarity=i / 10) for i in range(10)], config,
                         now=NOW, query=None)
    assert _ids(finish(scored, min_score=0.45, limit=3)) == ["9", "8", "7"]
    assert _ids(finish(scored, min_score=0.75, limit=5)) == ["9", "8"]


def test_the_entity_signal_lifts_the_candidates_about_a_named_entity() -> None:
    config = SearchConfig(scoring=ScoringMode.FUSION)
    pool = [Candidate(id=name, similarity=0.7, fts=2.0) for name in ("a", "b", "c")]
    plain = base_scores(pool, config, now=NOW, query="what did melanie paint")
    assert [s.id for s in plain] == ["a", "b", "c"]  # ties: by id
    named = base_scores(pool, config, now=NOW, query="what did melanie paint",
                        evidence=[{"a": 0.0, "b": 0.0, "c": 1.0}])
    assert named[0].id == "c"


def test_a_superseded_memory_never_ranks_above_its_successor() -> None:
    scored = [Scored(id=i, score=s) for i, s in (("v1", 0.9), ("x", 0.8), ("v2", 0.5),
                                                 ("v3", 0.4), ("y", 0.3))]
    chain = {"v1": "v2", "v2": "v3", "v3": None, "x": None, "y": None}
    assert [s.id for s in successors_first(scored, chain)] == ["v3", "v2", "v1", "x", "y"]
    # A successor outside the hits, or already above, changes nothing.
    assert [s.id for s in successors_first(scored, {"x": "gone", "v3": "v1"})] == [
        "v1", "x", "v2", "v3", "y"]
