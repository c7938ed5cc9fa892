"""Relevance: evidence in [0, 1] that a hit answers the query (pure)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from memlattice.search.lexical import Bm25, NamespaceStats, query_terms
from memlattice.search.relevance import closeness, coverage, relevance


def bm25_for(words: dict[str, int], documents: int = 100) -> Bm25:
    """BM25 for a query of `words` (word -> its document frequency)."""
    frequencies = {term: words[word] for term, word in
                   ((t, w) for w in words for t in query_terms(w))}
    return Bm25(NamespaceStats(documents=documents, mean_length=10.0), frequencies)


def test_coverage_is_the_idf_weighted_share_of_query_terms_held() -> None:
    bm25 = bm25_for({"pottery": 2, "melanie": 50})
    name, craft = (next(iter(query_terms(w))) for w in ("melanie", "pottery"))
    both = bm25.field(["Melanie loves pottery"])
    only_name = bm25.field(["Melanie went out"])
    assert coverage(bm25, [both]) == 1.0
    share = bm25.idf(name) / (bm25.idf(name) + bm25.idf(craft))
    assert math.isclose(coverage(bm25, [only_name]), share)
    # The rare word carries more of the question than the common name.
    assert coverage(bm25, [bm25.field(["pottery class"])]) > 0.5 > share
    assert coverage(bm25, [bm25.field(["nothing here"])]) == 0.0


def test_a_term_only_in_the_context_counts_at_the_context_weight() -> None:
    bm25 = bm25_for({"pottery": 2})
    context = bm25.field(["we talked about pottery"], weight=0.5)
    assert coverage(bm25, [bm25.field(["yes, that one"]), context]) == 0.5


def test_a_query_without_terms_has_no_lexical_evidence() -> None:
    assert coverage(bm25_for({}), [bm25_for({}).field(["anything"])]) == 0.0


def test_closeness_undoes_neo4j_cosine_normalisation() -> None:
    assert closeness(None) == 0.0
    assert closeness(0.5) == 0.0  # cos 0: unrelated
    assert closeness(0.3) == 0.0  # negative cosines are no evidence
    assert math.isclose(closeness(0.9), 0.8)
    assert closeness(1.0) == 1.0


@given(st.one_of(st.none(), st.floats(-5, 5)), st.one_of(st.none(), st.floats(-5, 5)))
def test_relevance_is_in_the_unit_interval(covered: float | None, sim: float | None) -> None:
    value = relevance(covered, sim)
    assert 0.0 <= value <= 1.0


def test_relevance_is_the_stronger_evidence() -> None:
    assert relevance(0.25, 0.9) == max(0.25, closeness(0.9))
    assert relevance(1.0, None) == 1.0
    assert relevance(None, None) == 0.0
