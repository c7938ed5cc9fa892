"""Search behaviour as one declarative config, with named presets.

A search is described by a `SearchConfig` (which candidates, how they are
scored, whether the graph is followed) rather than by flags threaded through
calls; callers start from a preset and override fields. Validation happens
here, so every layer (GraphQL, Python client, benchmarks) gets the same rules.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from memlattice.core.errors import ValidationError
from memlattice.core.model import Direction, EdgeType, ScoringMode, SearchMode, validated
from memlattice.core.names import check_name

# Every float knob is bounded, so no ranking arithmetic can reach inf or NaN:
# weights are relative (a weighted mean divides by their sum), so 1000 is as
# strong as any larger number; 1e308 summed to inf and inf/inf scored NaN.
MAX_WEIGHT = 1000.0
# A half-life beyond ~2,700 years is no decay at all; below a millisecond, all.
MIN_HALF_LIFE_DAYS = 1e-8
MAX_HALF_LIFE_DAYS = 1_000_000.0


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Weights(_Frozen):
    """Hybrid weights; each part is first normalised to [0, 1]."""

    similarity: float = Field(default=0.6, ge=0, le=MAX_WEIGHT)
    fulltext: float = Field(default=0.3, ge=0, le=MAX_WEIGHT)
    recency: float = Field(default=0.05, ge=0, le=MAX_WEIGHT)
    popularity: float = Field(default=0.05, ge=0, le=MAX_WEIGHT)

    @model_validator(mode="after")
    def _some_weight(self) -> Weights:
        if self.similarity + self.fulltext + self.recency + self.popularity <= 0:
            raise ValueError("at least one hybrid weight must be positive")
        return self


class ExpansionConfig(_Frozen):
    """Follow relationships from the candidates.

    Every candidate receives `share` of its best neighbour's score (discounted
    by `hop_discount` per extra hop): memories that sit next to strong matches
    rise, which is how a conversation's neighbouring turns help each other.
    Up to `max_expand` memories that were not candidates at all enter the
    results through that path, and say so.
    """

    max_expand: int = Field(default=0, ge=0, le=200)
    depth: int = Field(default=1, ge=1, le=3)
    types: tuple[EdgeType, ...] = (EdgeType.RELATED, EdgeType.SUPPORTS, EdgeType.DERIVED)
    direction: Direction = Direction.BOTH
    hop_discount: float = Field(default=0.5, gt=0, le=1)
    share: float = Field(default=0.5, ge=0, le=2)
    per_seed: int = Field(default=8, ge=1, le=100)

    @property
    def enabled(self) -> bool:
        return self.max_expand > 0 or self.share > 0


class SearchConfig(_Frozen):
    mode: SearchMode = SearchMode.HYBRID
    # Every candidate is scored on both signals and their z-scores are summed
    # (memlattice.search.fusion): unlike RRF, a signal that is weak for the query
    # cannot drag a strong one down.
    scoring: ScoringMode = ScoringMode.FUSION
    weights: Weights = Field(default_factory=Weights)
    rrf_k: int = Field(default=60, ge=1, le=1000)
    decay_half_life_days: float | None = Field(default=None, ge=MIN_HALF_LIFE_DAYS,
                                               le=MAX_HALF_LIFE_DAYS)
    key_boost: float = Field(default=0.1, ge=0, le=10)
    tag_boost: float = Field(default=0.05, ge=0, le=10)
    use_confidence: bool = True
    use_salience: bool = True
    mmr_lambda: float | None = Field(default=None, ge=0, le=1)
    expansion: ExpansionConfig | None = None
    # A memory's neighbours along NEXT (the turns around a conversation turn) up
    # to this many steps either way count as lexical fields of it, weighted
    # `context_decay ** steps` (memlattice.search.lexical.context_fields); 0 turns it off.
    context_hops: int = Field(default=3, ge=0, le=5)
    context_decay: float = Field(default=0.75, gt=0, le=1)
    # A memory's score is multiplied by 1 - question_discount x the share of its words
    # in questions (memlattice.search.information.asked_share): a question records
    # what someone wanted to know, not what is so. 0 turns it off.
    question_discount: float = Field(default=0.25, ge=0, le=1)
    # For a question that asks for a kind of answer (who: a name, where: a place,
    # when: a time, how many: a number), a memory holding nothing of that kind is
    # multiplied by 1 - answer_discount (memlattice.search.answer_types). 0: off.
    answer_discount: float = Field(default=0.2, ge=0, le=1)
    # For a question about the present, a later statement of the same source among
    # the first three hits goes before an earlier one whose score it reaches this
    # share of (memlattice.search.currency.later_of_a_source_first). 0, the default,
    # turns it off: it helped agents' notes and hurt chats (docs/recall.md).
    current_first_within: float = Field(default=0.0, ge=0, le=1)
    # The same, only for two statements that answer a typed question with different
    # values of the kind it asks for and name what it names
    # (memlattice.search.currency.competing_answers). 0, the default, turns it off:
    # 0.7 helped the development scenarios and hurt chats written blind
    # (docs/benchmarks.md, issue 27 round six).
    current_answer_within: float = Field(default=0.0, ge=0, le=1)
    min_score: float | None = None
    # Hits whose relevance (memlattice.search.relevance: evidence in [0, 1] that they
    # answer the query, the same in every mode) is below this are left out.
    min_relevance: float | None = Field(default=None, ge=0, le=1)
    limit: int = Field(default=10, ge=1, le=200)
    candidates: int | None = Field(default=None, ge=1, le=2000)
    reranker: str | None = Field(default=None, max_length=128)

    def candidate_count(self, default: int) -> int:
        """How many candidates each index returns: enough to fill the limit after
        filtering, MMR and expansion."""
        if self.candidates is not None:
            return self.candidates
        return max(default, self.limit * 5)


class NamespaceSettings(_Frozen):
    """Search defaults a namespace keeps (`configureNamespace`); the latest wins.

    A search starts from its preset, then these, then whatever it sets itself.
    """

    backend: SearchMode | None = None
    scoring: ScoringMode | None = None
    weights: Weights | None = None
    decay_half_life_days: float | None = Field(default=None, ge=MIN_HALF_LIFE_DAYS,
                                               le=MAX_HALF_LIFE_DAYS)
    rrf_k: int | None = Field(default=None, ge=1, le=1000)
    # The vector space searched (see memlattice.core.vector_spaces); changing it
    # re-embeds in the background. Omitted on a later configuration: kept.
    embedding_model: Annotated[str, AfterValidator(check_name)] | None = Field(
        default=None, min_length=1, max_length=200)
    embedding_dimension: int | None = Field(default=None, ge=1, le=4096)
    # Update candidates found on write (graph.updates) at least this confident are
    # confirmed at once: the older memory becomes SUPERSEDED. Off (None) by default.
    auto_supersede: float | None = Field(default=None, ge=0.5, le=1.0)

    @model_validator(mode="after")
    def _dimension_needs_model(self) -> NamespaceSettings:
        if self.embedding_dimension is not None and self.embedding_model is None:
            raise ValueError("embeddingDimension needs embeddingModel")
        return self

    def overrides(self) -> dict[str, object]:
        values = {"mode": self.backend, "scoring": self.scoring, "weights": self.weights,
                  "decay_half_life_days": self.decay_half_life_days, "rrf_k": self.rrf_k}
        return {k: v for k, v in values.items() if v is not None}


PRESETS: dict[str, SearchConfig] = {
    "default": SearchConfig(),
    "precise": SearchConfig(mode=SearchMode.SEMANTIC, scoring=ScoringMode.SIMILARITY),
    "keyword": SearchConfig(mode=SearchMode.LEXICAL, scoring=ScoringMode.SIMILARITY),
    "recent": SearchConfig(scoring=ScoringMode.HYBRID, decay_half_life_days=7,
                           weights=Weights(similarity=0.5, fulltext=0.2, recency=0.3,
                                           popularity=0.0)),
    # Turns lend each other score along RELATED; a wide pool gives neighbours scores.
    "conversation": SearchConfig(candidates=200, expansion=ExpansionConfig(
        max_expand=10, share=0.5, types=(EdgeType.RELATED,))),
    "diverse": SearchConfig(mmr_lambda=0.7),
}


def resolve_config(
    preset: str | None, namespace: NamespaceSettings | None, overrides: dict[str, Any]
) -> SearchConfig:
    """The config a search runs with: the namespace's defaults (or, when the caller
    names a preset, that preset instead), then every field the caller set."""
    if preset is not None and preset not in PRESETS:
        raise ValidationError(f"unknown preset {preset!r}; one of {', '.join(PRESETS)}",
                              field="preset")
    base = PRESETS[preset or "default"].model_dump()
    if namespace is not None and preset is None:
        base.update({k: v.model_dump() if isinstance(v, BaseModel) else v
                     for k, v in namespace.overrides().items()})
    return validated(SearchConfig, **{**base, **overrides})
