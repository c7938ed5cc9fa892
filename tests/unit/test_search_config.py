"""Which settings a search runs with: namespace defaults or a preset, then the caller."""

from __future__ import annotations

import pytest

from memlattice.core.errors import ValidationError
from memlattice.core.model import ScoringMode, SearchMode
from memlattice.core.search_config import NamespaceSettings, Weights, resolve_config

NS = NamespaceSettings(backend=SearchMode.LEXICAL, weights=Weights(similarity=1, fulltext=0),
                       decay_half_life_days=3)


def test_namespace_defaults_apply_when_no_preset_is_named() -> None:
    config = resolve_config(None, NS, {})
    assert config.mode is SearchMode.LEXICAL and config.decay_half_life_days == 3
    assert config.weights.similarity == 1 and config.weights.fulltext == 0


def test_a_named_preset_replaces_the_namespace_defaults() -> None:
    config = resolve_config("precise", NS, {})
    assert config.mode is SearchMode.SEMANTIC and config.decay_half_life_days is None


def test_the_caller_has_the_last_word() -> None:
    config = resolve_config(None, NS, {"mode": SearchMode.HYBRID, "scoring": ScoringMode.RRF})
    assert config.mode is SearchMode.HYBRID and config.scoring is ScoringMode.RRF


def test_unknown_preset_and_bad_overrides_are_validation() -> None:
    with pytest.raises(ValidationError, match="unknown preset"):
        resolve_config("nope", None, {})
    with pytest.raises(ValidationError, match="limit"):
        resolve_config(None, None, {"limit": 0})


@pytest.mark.parametrize("overrides", [
    {"weights": {"similarity": 1e308, "fulltext": 1e308, "recency": 0, "popularity": 0}},
    {"weights": {"similarity": 1001, "fulltext": 0, "recency": 0, "popularity": 0}},
    {"weights": {"similarity": float("inf"), "fulltext": 0, "recency": 0, "popularity": 0}},
    {"decay_half_life_days": 1e308}, {"decay_half_life_days": 1e-320},
    {"min_score": float("inf")}, {"key_boost": 1e308},
])
def test_float_knobs_that_could_overflow_are_refused(overrides: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        resolve_config(None, None, overrides)


def test_the_extremes_allowed_still_score_finite() -> None:
    import math
    from datetime import UTC, datetime

    from memlattice.core.search_config import MAX_HALF_LIFE_DAYS, MAX_WEIGHT, MIN_HALF_LIFE_DAYS
    from memlattice.search.ranking import Candidate, base_scores

    top = {"similarity": MAX_WEIGHT, "fulltext": MAX_WEIGHT, "recency": MAX_WEIGHT,
           "popularity": MAX_WEIGHT}
    old, new = datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, tzinfo=UTC)
    candidates = [Candidate(id="a", similarity=1.0, fts=1e308, created_at=old,
                            access_count=2**62),
                  Candidate(id="b", similarity=0.0, fts=0.0, created_at=new)]
    for scoring in ScoringMode:
        for half_life in (MIN_HALF_LIFE_DAYS, MAX_HALF_LIFE_DAYS):
            config = resolve_config(None, None, {"scoring": scoring, "weights": top,
                                                 "decay_half_life_days": half_life})
            for now in (old, new):
                scores = base_scores(candidates, config, now=now, query="a")
                assert all(math.isfinite(s.score) for s in scores), (scoring, half_life, now)
