"""Pure ranking: turn candidates from the indexes into one explained order.

No I/O here, so the service and the benchmarks rank with the same code and
the rules are unit-tested on their own. The pipeline, in order:

1. base score per candidate, by scoring mode:
   - similarity: the index score of the chosen list (cosine, or BM25 for lexical);
   - rrf: reciprocal-rank fusion of the vector and fulltext ranks, which needs no
     calibration between cosine and BM25 (unrelated scales);
   - hybrid: a weighted mean of similarity, max-normalised BM25, recency and
     popularity, each in [0, 1];
   - fusion (the default): the sum of each signal's z-score over the
     candidates, rescaled to [0, 1] (memlattice.search.fusion); every candidate
     carries both signals, so a weak one cannot drag a strong one down; when
     the query names entities the candidates are about, how many of them each
     is about is a third signal (memlattice.search.entity_signal), and when it
     names a time, whether each lies in it is another
     (memlattice.search.temporal_signal);
   recency `0.5 ** (age / half_life)` and popularity (log access count) also
   act as gentle factors in the two rank modes when their weights are set;
2. small multiplicative boosts for an exact key or tag match, then confidence
   and salience as factors;
3. graph support: each memory gains `share` x its best neighbour's score
   (discounted per extra hop); memories reached only through the graph may
   enter, up to `max_expand`, carrying their path;
4. optional MMR for diversity; minScore and limit.

Equal inputs give equal order: every sort breaks ties by id.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache

from memlattice.core.lucene import words
from memlattice.core.model import ScoringMode, SearchMode
from memlattice.core.search_config import ExpansionConfig, SearchConfig
from memlattice.search.answer_types import answers_nothing_asked, asked_kinds
from memlattice.search.fusion import fuse_z

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class Candidate:
    """What ranking needs to know of one memory."""

    id: str
    similarity: float | None = None
    fts: float | None = None
    created_at: datetime | None = None
    access_count: int = 0
    confidence: float = 1.0
    salience: float | None = None
    key: str | None = None
    tags: tuple[str, ...] = ()
    embedding: Sequence[float] | None = None
    # The share of its words in questions (memlattice.search.information.asked_share).
    asked: float = 0.0
    # The kinds of answer it holds (memlattice.search.answer_types.held_kinds).
    held: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Step:
    type: str
    source: str
    target: str


@dataclass(frozen=True)
class Neighbour:
    """`id` is reachable from candidate `seed` along `path` (len(path) hops)."""

    seed: str
    id: str
    path: tuple[Step, ...]


@dataclass(frozen=True)
class Scored:
    id: str
    score: float
    similarity: float | None = None
    fts: float | None = None
    recency: float | None = None
    popularity: float | None = None
    graph: float = 0.0
    boost: float = 1.0
    similarity_rank: int | None = None
    fts_rank: int | None = None
    expanded: bool = False
    path: tuple[Step, ...] = field(default_factory=tuple)


def recency(created_at: datetime | None, now: datetime, half_life_days: float) -> float:
    """`0.5 ** (age / half_life)`; a memory from the future counts as brand new."""
    if created_at is None:
        return 0.0
    age_days = max(0.0, (now - created_at).total_seconds() / SECONDS_PER_DAY)
    return float(0.5 ** (age_days / half_life_days))


def popularity(count: int, max_count: int) -> float:
    if max_count <= 0 or count <= 0:
        return 0.0
    return math.log1p(count) / math.log1p(max_count)


def _ranks(values: Mapping[str, float | None]) -> dict[str, int]:
    present = sorted(((v, k) for k, v in values.items() if v is not None),
                     key=lambda x: (-x[0], x[1]))
    return {k: i + 1 for i, (_, k) in enumerate(present)}


@lru_cache(maxsize=16_384)
def _word_set(text: str) -> frozenset[str]:
    """The words of a key or tag (the same few recur in every search)."""
    return frozenset(words(text))


@lru_cache(maxsize=16_384)
def _tag_words(tags: tuple[str, ...]) -> frozenset[str]:
    """Every word of a memory's tags, as one set: a query word in any tag is one
    `isdisjoint` test instead of a set built per tag and candidate."""
    return frozenset().union(*(_word_set(t) for t in tags))


def _boost(c: Candidate, query_words: frozenset[str], config: SearchConfig) -> float:
    boost = 1.0
    if not query_words:
        return boost
    if c.key and _word_set(c.key) <= query_words:
        boost *= 1.0 + config.key_boost
    if c.tags and not query_words.isdisjoint(_tag_words(c.tags)):
        boost *= 1.0 + config.tag_boost
    return boost


def base_scores(
    candidates: Iterable[Candidate], config: SearchConfig, *, now: datetime, query: str | None,
    evidence: Sequence[Mapping[str, float | None]] = (),
) -> list[Scored]:
    """Each candidate's score by the config's scoring mode, best first. `evidence`:
    more signals of fusion besides cosine and BM25, each per candidate id, such as
    the entities the query names that a candidate is about
    (memlattice.search.entity_signal) and whether it lies in the time the query
    names (memlattice.search.temporal_signal)."""
    by_id: dict[str, Candidate] = {}
    for c in candidates:
        prior = by_id.get(c.id)
        if prior is None:
            by_id[c.id] = c
        else:  # the same memory from both indexes: keep both scores
            by_id[c.id] = replace(
                prior,
                similarity=_max(prior.similarity, c.similarity),
                fts=_max(prior.fts, c.fts),
                embedding=prior.embedding or c.embedding,
            )
    mode = config.mode
    sims = {k: (c.similarity if mode is not SearchMode.LEXICAL else None) for k, c in by_id.items()}
    ftss = {k: (c.fts if mode is not SearchMode.SEMANTIC else None) for k, c in by_id.items()}
    sim_rank, fts_rank = _ranks(sims), _ranks(ftss)
    max_fts = max((v for v in ftss.values() if v is not None), default=0.0)
    fused: dict[str, float] = {}
    if config.scoring is ScoringMode.FUSION:
        signals: list[Mapping[str, float | None]] = [
            signal for signal, used in ((sims, mode is not SearchMode.LEXICAL),
                                        (ftss, mode is not SearchMode.SEMANTIC)) if used]
        signals.extend(evidence)
        fused = fuse_z(signals, [k for k in by_id if sims[k] is not None or ftss[k] is not None])
    max_access = max((c.access_count for c in by_id.values()), default=0)
    half_life = config.decay_half_life_days
    w = config.weights
    query_words = frozenset(words(query)) if query else frozenset()
    asked_for = asked_kinds(query) if config.answer_discount else frozenset()

    scored: list[Scored] = []
    for id, c in by_id.items():
        s, f = sims[id], ftss[id]
        if s is None and f is None:
            continue
        rec = recency(c.created_at, now, half_life) if half_life else None
        pop = popularity(c.access_count, max_access)
        if config.scoring is ScoringMode.SIMILARITY:
            base = (s if mode is not SearchMode.LEXICAL else f) or 0.0
        elif config.scoring is ScoringMode.FUSION:
            base = fused[id]
        elif config.scoring is ScoringMode.RRF:
            base = sum(1.0 / (config.rrf_k + r) for r in (sim_rank.get(id), fts_rank.get(id)) if r)
        else:
            parts = [(w.similarity, s or 0.0), (w.fulltext, (f or 0.0) / max_fts if max_fts else 0.0),
                     (w.popularity, pop)]
            if rec is not None:
                parts.append((w.recency, rec))
            total = sum(weight for weight, _ in parts)
            base = sum(weight * value for weight, value in parts) / total if total else 0.0
        if config.scoring is not ScoringMode.HYBRID and rec is not None:
            # The rank modes take recency only when a half-life is asked for.
            base *= (1 - min(w.recency, 1.0)) + min(w.recency, 1.0) * rec
        boost = _boost(c, query_words, config)
        factor = boost
        if config.use_confidence:
            factor *= c.confidence
        if config.use_salience and c.salience is not None:
            factor *= c.salience
        factor *= 1.0 - config.question_discount * c.asked
        if answers_nothing_asked(asked_for, c.held):
            factor *= 1.0 - config.answer_discount
        scored.append(Scored(
            id=id, score=base * factor, similarity=c.similarity, fts=c.fts, recency=rec,
            popularity=pop, boost=boost, similarity_rank=sim_rank.get(id),
            fts_rank=fts_rank.get(id),
        ))
    return sorted(scored, key=lambda x: (-x.score, x.id))


def _max(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def apply_graph(
    scored: Sequence[Scored], neighbours: Iterable[Neighbour], expansion: ExpansionConfig,
) -> list[Scored]:
    """Give each memory a share of its best neighbour's score; admit up to
    `max_expand` memories that only the graph reached."""
    base = {s.id: s.score for s in scored}
    best: dict[str, tuple[float, Neighbour]] = {}
    for n in neighbours:
        seed_score = base.get(n.seed)
        if seed_score is None or n.id == n.seed or not n.path:
            continue
        support = seed_score * expansion.hop_discount ** (len(n.path) - 1)
        current = best.get(n.id)
        if current is None or (support, n.seed) > (current[0], current[1].seed):
            best[n.id] = (support, n)
    out = []
    for s in scored:
        kept = best.get(s.id)
        graph = expansion.share * kept[0] if kept else 0.0
        out.append(replace(s, score=s.score + graph, graph=graph))
    entrants = sorted(
        ((support * expansion.share, n) for id, (support, n) in best.items() if id not in base),
        key=lambda x: (-x[0], x[1].id),
    )
    for graph, n in entrants[: expansion.max_expand]:
        out.append(Scored(id=n.id, score=graph, graph=graph, expanded=True, path=n.path))
    return sorted(out, key=lambda x: (-x.score, x.id))


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def mmr(
    scored: Sequence[Scored], embeddings: Mapping[str, Sequence[float]], lambda_: float,
    limit: int,
) -> list[Scored]:
    """Maximal marginal relevance: trade relevance for novelty, greedily."""
    if not scored:
        return []
    top = max(s.score for s in scored) or 1.0
    remaining = list(scored)
    chosen: list[Scored] = []

    def gain(s: Scored) -> float:
        e = embeddings.get(s.id)
        redundancy = max((_cosine(e, embeddings[c.id]) for c in chosen
                          if e is not None and c.id in embeddings), default=0.0)
        return lambda_ * s.score / top - (1 - lambda_) * redundancy

    while remaining and len(chosen) < limit:
        best = min(remaining, key=lambda s: (-gain(s), s.id))  # ties: smaller id
        chosen.append(best)
        remaining.remove(best)
    return chosen


def successors_first(scored: Sequence[Scored],
                     successor: Mapping[str, str | None]) -> list[Scored]:
    """The order with every superseded memory below its successor when both are
    there: a search that asks for superseded memories too (statuses) must not
    rank an old claim above the one that replaced it. The successor moves up to
    just before the first memory it supersedes (directly or along a chain);
    everything else keeps its place. `successor`: a memory's `supersededBy`."""
    order = [s.id for s in scored]
    by_id = {s.id: s for s in scored}
    for _ in range(len(order)):  # a chain of n versions settles in at most n passes
        moved = False
        for i, id in enumerate(order):
            newer = successor.get(id)
            if newer is not None and newer in by_id and order.index(newer) > i:
                order.remove(newer)
                order.insert(i, newer)
                moved = True
                break
        if not moved:
            break
    return [by_id[id] for id in order]


def finish(scored: Sequence[Scored], *, min_score: float | None, limit: int) -> list[Scored]:
    kept = [s for s in scored if min_score is None or s.score >= min_score]
    return list(kept[:limit])
