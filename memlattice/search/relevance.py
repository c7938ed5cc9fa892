"""Relevance a person can read: how much evidence a hit holds that it answers
the query, in [0, 1], with the same meaning in every mode and for every query.

A hit's `score` orders one search's candidates: fusion standardises each
signal over the pool (memlattice.search.fusion), RRF counts ranks, so the
best candidate scores high even when nothing in the namespace matches, and
scores of two searches cannot be compared. Relevance does not look at the
other candidates. It is the stronger of two pieces of evidence:

- *coverage* (lexical): the share of the query's information, each term
  weighted by its idf, that the memory holds: a term in its own text counts
  whole, a term only in the turns around it (its NEXT context) counts as
  much as that context's field weight (memlattice.search.lexical). 1.0: every
  word the question is about is there; 0: none of them;
- *closeness* (semantic): the cosine of the memory's vector to the query's,
  below 0 counted as 0 (Neo4j reports cosines as (1 + cos) / 2 in [0, 1];
  that is undone here, so an unrelated text is near 0, not near 0.5).

So `minRelevance: 0.5` keeps what holds at least half of what was asked for
or is clearly close in meaning, whatever the mode; a search whose best hit
is below it answers "nothing relevant" (no hits), which keeps an agent's
prompt block empty rather than filled with the least bad ten.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from memlattice.search.lexical import Bm25, Field


def closeness(similarity: float | None) -> float:
    """A Neo4j cosine similarity ((1 + cos) / 2) back on the cosine's scale, clipped
    to [0, 1]; 0 without one."""
    if similarity is None:
        return 0.0
    return min(1.0, max(0.0, 2.0 * similarity - 1.0))


def coverage(bm25: Bm25, fields: Iterable[Field]) -> float:
    """The idf-weighted share of the query's terms the fields hold, each term
    counted with the largest weight (at most 1) of a field that holds it."""
    weights = {t: bm25.idf(t) for t in bm25.frequencies}
    total = sum(weights.values())
    if total <= 0.0:
        return 0.0
    held: dict[str, float] = {}
    for f in fields:
        for term, tf in f.counts.items():
            if tf > 0 and term in weights:
                held[term] = max(held.get(term, 0.0), min(1.0, f.weight))
    return sum(weights[t] * w for t, w in held.items()) / total


def relevance(coverage_: float | None, similarity: float | None) -> float:
    """The stronger of the lexical and the semantic evidence, in [0, 1]."""
    return max(min(1.0, max(0.0, coverage_ or 0.0)), closeness(similarity))
