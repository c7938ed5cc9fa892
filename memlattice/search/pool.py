"""How many candidates a search asks the vector index for, and when that was enough.

The index's cost grows with the pool it is asked for (the graph walk explores
`pool x search expansion factor` neighbours), and every candidate is then read,
sent and scored. A wide pool is needed when ranking can lift a memory from far
down the similarity order (recency, popularity, fulltext, graph support,
diversity, a reranker). When a search ranks by similarity alone, though, a
candidate's score is its similarity times factors that never exceed a known
ceiling (confidence and salience are at most 1, boosts only apply to query
words), so a small first pool settles the order whenever its `limit`-th score
beats the best any memory outside the pool could reach. Only when that proof
fails does the search run again with the full pool.

The vector index is shared by every namespace, and a search's filter (its
namespace and scope buckets) makes the approximate search look for its pool
among the neighbours of everything else too. Lucene also splits `k` between
the index's segments by their size, not by how many of a segment's documents
pass the filter, so memories that sit in a few segments (typically: written
after the others') get too small a share of the walk. So the first pool is
divided by the share of the index the filter admits
(memlattice.search.index_shares), never beyond the full pool. Measured with text-like
384-d vectors, recall@10 against exact search:
  - a namespace of 100k in a 400k index (25%, written last): 0.974 -> 0.994
    over the whole namespace, 0.989 -> 0.998 over half of it;
  - one user holding the last-written 30% of a 100k namespace: 0.982 -> 0.995;
  - a namespace that is the whole index keeps its 15-wide pool: 0.995.

Pure functions, no I/O: the service decides with them and they are unit-tested.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from memlattice.core.lucene import words
from memlattice.core.model import ScoringMode, SearchMode
from memlattice.core.search_config import SearchConfig
from memlattice.search.ranking import Scored

# The first pool is this many times the limit (rounded up): a few extra candidates
# absorb low-confidence, low-salience or (in a first try, see
# graph.recall_query) inactive memories near the top without a second query.
# The index walks `pool x its search expansion factor` neighbours, so the pool
# also sets the approximate search's recall: 1.5x kept recall@10 against exact
# search at 0.995 on 100k text-like vectors (2x: 0.996, 1.2x: 0.991) and costs
# 0.5 ms less than 2x at 100k memories.
FIRST_POOL_FACTOR = 1.5
MIN_FIRST_POOL = 10


def similarity_bounded(config: SearchConfig) -> bool:
    """Whether every score is a candidate's similarity times a bounded factor."""
    expanding = config.expansion is not None and config.expansion.enabled
    return (config.mode is SearchMode.SEMANTIC and config.scoring is ScoringMode.SIMILARITY
            and not expanding and config.mmr_lambda is None and config.reranker is None
            and config.candidates is None)


def first_pool(config: SearchConfig, default: int, share: float | None = 1.0) -> int:
    """The pool to ask for first: the full one, or a small one that is usually enough.

    `share` is the fraction of the vector index the searched namespace holds;
    `None` (not known yet) is treated as small, so the full pool is asked for.
    """
    full = config.candidate_count(default)
    if not similarity_bounded(config) or share is None or share <= 0.0:
        return full
    small = max(math.ceil(FIRST_POOL_FACTOR * config.limit), MIN_FIRST_POOL)
    # A tiny tolerance keeps a share of exactly 1/2 from rounding 30.000000004 up to 31.
    return min(full, math.ceil(small / min(share, 1.0) - 1e-9))


def factor_ceiling(config: SearchConfig, query: str | None) -> float:
    """The largest factor a similarity can be multiplied by (see ranking.base_scores):
    confidence, salience and the recency factor are at most 1; the key and tag
    boosts apply only when the query has words."""
    if query and words(query):
        return (1.0 + config.key_boost) * (1.0 + config.tag_boost)
    return 1.0


def settled(scored: Sequence[Scored], *, pool_floor: float | None, ceiling: float,
            limit: int, min_score: float | None) -> bool:
    """Whether no memory outside the pool could enter the top `limit`.

    `pool_floor` is the lowest similarity in the pool: whatever the index did
    not return is no more similar than that, so it scores at most
    `pool_floor * ceiling`. Ties are broken by id, so only a strictly higher
    `limit`-th score proves the order.
    """
    if pool_floor is None:
        return False
    bound = pool_floor * ceiling
    if len(scored) < limit:
        # Only min_score can prove that nothing more belongs in the answer.
        return min_score is not None and bound < min_score
    return scored[limit - 1].score > bound
