"""Which settings a search runs with: namespace defaults or a preset, then the caller."""

from __future__ import annotations

import pytest

from memlattice.errors import ValidationError
from memlattice.model import ScoringMode, SearchMode
from memlattice.search_config import NamespaceSettings, Weights, resolve_config

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
