"""Recall: a search from its request to its hits.

The steps, each in its own pure module where it is not I/O:

1. the query vector: the caller's, else the namespace's embedder's;
2. one recall round trip (graph.recall_query): both indexes' candidates, their
   NEXT neighbours, the entities each is about, graph expansion; beside it the
   BM25 statistics of the collection searched (memlattice.search.lexical_stats);
3. ranking (memlattice.search.ranking): BM25F, cosine, the entities the query
   names and the time it names, fused (memlattice.search.fusion,
   entity_signal, temporal_signal); a small first
   pool is widened when it cannot prove its answer (memlattice.search.pool);
4. the graph's support, a reranker, MMR, as configured;
5. each hit's relevance (memlattice.search.relevance), and `minRelevance`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memlattice.core.auth import Tenant
from memlattice.core.errors import ValidationError
from memlattice.core.lucene import query_any_terms
from memlattice.core.model import MemoryFilter, ScoringMode, SearchMode, Status, utcnow
from memlattice.core.search_config import SearchConfig
from memlattice.core.temporal_intent import temporal_intent
from memlattice.core.vector_checks import vector_problem
from memlattice.embeddings import check_dimension
from memlattice.graph.codec import Memory, memory_from_properties
from memlattice.graph.recall_rows import SearchResult
from memlattice.graph.updates.links import UpdateLink
from memlattice.search.currency import (
    asks_past,
    asks_present,
    competing_answers,
    later_of_a_source_first,
    prefer_current,
    states_asked_for,
)
from memlattice.search.entity_signal import entity_signal, named_entities
from memlattice.search.lexical import Bm25, Field, query_terms
from memlattice.search.pool import factor_ceiling, first_pool, settled, similarity_bounded
from memlattice.search.ranking import (
    Candidate,
    Neighbour,
    Scored,
    Step,
    apply_graph,
    base_scores,
    finish,
    mmr,
    successors_first,
)
from memlattice.search.relevance import coverage, relevance
from memlattice.search.temporal_signal import temporal_signal
from memlattice.services.outdating import (
    asked_about,
    asked_for_itself,
    current_states,
    outdating,
)
from memlattice.services.recall_candidates import (
    RANKED_PROPERTIES,
    candidate,
    lexical_fields,
    sources,
    timing,
)

if TYPE_CHECKING:
    from memlattice.services.memories import MemoryService


@dataclass(frozen=True)
class SearchRequest:
    filter: MemoryFilter
    query: str | None = None
    vector: tuple[float, ...] | None = None
    config: SearchConfig = field(default_factory=SearchConfig)
    now: datetime | None = None
    # Where the search says what the caller should know of how it ran (the API
    # returns them as `extensions.notes`), e.g. that a signal was missing.
    notes: list[str] = field(default_factory=list)
    # False for a person browsing (the explorer): what people read is not what
    # agents recall, so it must not raise the hits' popularity.
    record_access: bool = True
    # The properties the caller reads of each hit's memory (core.memory_fields
    # .properties_of a GraphQL selection); None: every one. A hit's other fields
    # then hold their defaults (the conflicts and `outdatedBy` are whole).
    memory_properties: frozenset[str] | None = None


@dataclass(frozen=True)
class SearchHit:
    """A memory with every part of its score, how relevant it is, and why it is here."""

    memory: Memory
    scored: Scored
    # Evidence that it answers the query, in [0, 1] (memlattice.search.relevance).
    relevance: float = 0.0
    rerank_score: float | None = None
    conflicts: tuple[Memory, ...] = ()
    # The memory that states a newer value of what this one states, and the link
    # (graph.updates): the hit is outdated.
    outdated_by: Memory | None = None
    update: UpdateLink | None = None


@dataclass(frozen=True)
class Ranking:
    """One recall round trip, ranked: the rows, their order, and what the hits'
    relevance is computed from (the query's BM25 and each candidate's fields)."""

    result: SearchResult
    scored: list[Scored]
    props: dict[str, Mapping[str, Any]]
    embeddings: dict[str, list[float]]
    bm25: Bm25 | None
    fields: dict[str, list[Field]]

    def relevance(self, id: str, similarity: float | None) -> float:
        found = self.fields.get(id)
        covered = coverage(self.bm25, found) if self.bm25 is not None and found else None
        return relevance(covered, similarity)


async def recall(service: MemoryService, request: SearchRequest, *,
                 tenant: Tenant) -> list[SearchHit]:
    """A search from its request to its hits: the query vector (the caller's, else
    the embedder's), one recall round trip (a second, wider one when a small first
    pool proves too small), ranking, the graph's support, reranking, MMR, and each
    hit's relevance; the hits' access is recorded."""
    config = request.config
    mode = config.mode
    # Time travel ranks (and applies expiry) as of then.
    now = request.now or request.filter.as_of or utcnow()
    # The namespace may search another model's space than the primary one.
    space = (await service.spaces.state(request.filter.namespace)).active if service.spaces else None
    embedder = service.spaces.embedders.get(space) if service.spaces else service.embedder
    dimension = space.dimension if space is not None else service.dimension
    vector = None
    if request.vector is not None:
        check_dimension(list(request.vector), dimension, what="query vector")
        problem = vector_problem(request.vector)
        if problem is not None:
            raise ValidationError(f"the query embedding {problem}", field="embedding")
        vector = [float(x) for x in request.vector]
    if (mode is not SearchMode.LEXICAL and vector is None and request.query
            and embedder is not None):
        (vector,) = await embedder.embed([request.query])
        check_dimension(vector, dimension, what="the embedding provider's vector")
    if mode is SearchMode.HYBRID and vector is None and request.query:
        request.notes.append(
            "lexical only: the search gave no `embedding` and the server has no embedding"
            " provider for this namespace, so the semantic signal is missing")
    if mode is SearchMode.SEMANTIC and vector is None:
        raise ValidationError(
            "semantic search needs `embedding`, or `query` with an embedding provider"
            " configured"
        )
    lucene = (query_any_terms(request.query)
              if request.query and mode is not SearchMode.SEMANTIC else None)
    if mode is SearchMode.LEXICAL and lucene is None:
        raise ValidationError("lexical search needs a `query` with at least one word")
    if vector is None and lucene is None:
        raise ValidationError("search needs a `query` or an `embedding`")
    expansion = config.expansion if config.expansion and config.expansion.enabled else None
    vector = vector if mode is not SearchMode.LEXICAL else None

    # Fusion weighs the entities a query names (memlattice.search.entity_signal) and
    # the time it names (memlattice.search.temporal_signal).
    entities = config.scoring is ScoringMode.FUSION and bool(request.query)
    intent = temporal_intent(request.query, now) if entities and request.query else None
    # A superseded memory that a confirmed update replaced is a candidate whatever the
    # statuses: it leads the search to its successor, as a candidate link's older
    # state does (memlattice.search.currency), and is shown only as asked below.
    statuses = request.filter.statuses
    leads = request.filter.as_of is None and Status.SUPERSEDED not in statuses

    async def ranked(pool: int, *, first_try: bool = False) -> Ranking:
        # The namespace's BM25 statistics (cached) are read beside the recall query.
        result, bm25 = await asyncio.gather(service.graph.search(
            request.filter, tenant=tenant, now=now, vector=vector, lucene=lucene,
            candidates=pool, expansion=expansion,
            with_embeddings=config.mmr_lambda is not None, needed=config.limit, space=space,
            first_try=first_try,
            context_hops=config.context_hops if lucene is not None else 0,
            cross_similarity=config.scoring is ScoringMode.FUSION,
            entities=entities, leads=leads,
            properties=(None if request.memory_properties is None
                        else RANKED_PROPERTIES | request.memory_properties),
        ), service.lexical.bm25(tenant.namespace, query_terms(request.query or ""),
                             request.filter.scope_keys)
            if lucene is not None else _no_bm25())
        props: dict[str, Mapping[str, Any]] = {}
        embeddings: dict[str, list[float]] = {}
        fields: dict[str, list[Field]] = {}
        lexical: dict[str, float] = {}
        candidates: list[Candidate] = []
        # Fusion scores every candidate on both signals: the vector side's on its
        # words too, the lexical side's on its cosine (read by the query).
        both = config.scoring is ScoringMode.FUSION
        about: dict[str, tuple[str, ...]] = {}
        for found, as_similarity in [(x, True) for x in result.semantic] + [
                (x, False) for x in result.lexical + result.adjacent]:
            id = found.id  # read from the row once: a hundred candidates a search
            props[id] = found.props
            about[id] = found.entities
            if found.embedding is not None:
                embeddings[id] = found.embedding
            fts = None
            if bm25 is not None:
                # A memory in both indexes' lists (and among the neighbours) is one text.
                if id not in fields:
                    fields[id] = lexical_fields(bm25, found.props, found.context, config)
                    lexical[id] = bm25.score_fields(fields[id])
                if both or not as_similarity:
                    fts = lexical[id]
            candidates.append(candidate(
                id, found.props, fts=fts,
                similarity=found.score if as_similarity else found.similarity if both else None))
        evidence = [signal for signal in (
            entity_signal(named_entities(request.query or "", about.values()), about),
            # Candidates' times are read only for a query that names one.
            temporal_signal(intent, {id: timing(p) for id, p in props.items()})
            if intent is not None and intent.named is not None else None,
        ) if signal is not None]
        scored = base_scores(candidates, config, now=now, query=request.query, evidence=evidence)
        return Ranking(result, scored, props, embeddings, bm25, fields)

    # Similarity-ranked searches try a small pool first (memlattice.search.pool), wider
    # as the part of the shared vector index their filter admits is smaller.
    share = service.shares.share(
        tenant, space, tenant.clip_scope_keys(request.filter.indexed_scope_keys())
    ) if similarity_bounded(config) else None
    pool = first_pool(config, service.candidates, share)
    full = config.candidate_count(service.candidates)
    ranking = await ranked(pool, first_try=pool < full)
    if pool < full and not settled(  # counting no lead: it may leave the list
            [s for s in ranking.scored if ranking.props[s.id].get("status") in statuses],
            pool_floor=min((x.score for x in ranking.result.semantic), default=None),
            ceiling=factor_ceiling(config, request.query), limit=config.limit,
            min_score=config.min_score):
        ranking = await ranked(full)
    result, scored, props, embeddings = (ranking.result, ranking.scored, ranking.props,
                                         ranking.embeddings)
    if expansion is not None:
        for reached in result.reached:
            props.setdefault(reached.id, reached.props)
            if reached.embedding is not None:
                embeddings.setdefault(reached.id, reached.embedding)
        scored = apply_graph(scored, [
            Neighbour(seed=r.seed, id=r.id,
                      path=tuple(Step(type=t, source=a, target=b) for t, a, b in r.path))
            for r in result.reached
        ], expansion)
    rerank_scores: dict[str, float] = {}
    if config.reranker is not None:
        scored, rerank_scores = await _rerank(service, config.reranker, request.query, scored,
                                                   props, config.limit)
    if config.mmr_lambda is not None:
        scored = mmr(scored, embeddings, config.mmr_lambda, config.limit)
    # What is true now first, or what held then for a question about the past
    # (memlattice.search.currency); the states enter with their properties.
    named = intent.named if intent is not None else None
    past = asks_past(request.query, named.end if named is not None else None, now)
    current = current_states(result.newer)
    if current:
        for states in result.newer.values():
            for state in states:
                props.setdefault(str(state.props["id"]), state.props)
        scored = prefer_current(scored, current, past=past,
                                asked=asked_about(result.newer, request.query),
                                lead=asked_for_itself(result.newer, request.query))
    # Without a link, what a source says again later holds now (not applied as of a
    # past time: there it cost the state valid then its place, docs/recall.md).
    if request.filter.as_of is None and request.query and asks_present(request.query):
        if config.current_first_within:
            scored = later_of_a_source_first(scored, sources(scored[:3], props),
                                             within=config.current_first_within)
        if config.current_answer_within:
            texts = {s.id: str(props[s.id].get("content") or "") for s in scored[:3]
                     if s.id in props}
            scored = later_of_a_source_first(
                scored, sources(scored[:3], props), within=config.current_answer_within,
                competes=competing_answers(request.query, texts))
    by_id = {s.id: s for s in scored}
    if leads:  # the leads' successors took their places; a past question keeps what held
        scored = states_asked_for(
            scored, {id: p.get("status") for id, p in props.items()},
            statuses=statuses,
            held_then=current if past and "statuses" not in request.filter.model_fields_set
            else ())
    # An update's states are in the order the question asked for; the other
    # superseded memories follow their successors.
    kept = successors_first(finish(scored, min_score=config.min_score, limit=len(scored)),
                            {id: p.get("supersededBy") for id, p in props.items()
                             if id not in current})
    hits: list[SearchHit] = []
    for s in kept:
        shown = ranking.relevance(s.id, s.similarity)
        if s.path and s.path[0].type == "UPDATES" and s.path[0].target in by_id:
            # A newer state the search reached through the memory it updates answers
            # what that one answered.
            older = by_id[s.path[0].target]
            shown = max(shown, ranking.relevance(older.id, older.similarity))
        if config.min_relevance is not None and shown < config.min_relevance:
            continue
        outdated_by, update = outdating(result.newer.get(s.id, ()))
        hits.append(SearchHit(memory=memory_from_properties(props[s.id]), scored=s,
                              relevance=shown, rerank_score=rerank_scores.get(s.id),
                              conflicts=tuple(result.conflicts.get(s.id, ())),
                              outdated_by=outdated_by, update=update))
        if len(hits) == config.limit:
            break
    if service.access is not None and request.record_access:
        service.access.record(request.filter.namespace, (h.memory.id for h in hits))
    return hits



async def _rerank(
    service: MemoryService, name: str, query: str | None, scored: list[Scored],
    props: Mapping[str, Mapping[str, Any]], limit: int,
) -> tuple[list[Scored], dict[str, float]]:
    """Let a registered reranker reorder the head of the list (3 x limit)."""
    if not query:
        raise ValidationError("a reranker needs the query text", field="query")
    reranker = service.rerankers.get(name)
    head, tail = scored[: limit * 3], scored[limit * 3:]
    scores = await reranker(query, [(s.id, str(props[s.id]["content"])) for s in head])
    by_id = {s.id: score for s, score in zip(head, scores)}
    head = sorted(head, key=lambda s: (-by_id[s.id], s.id))
    return head + tail, by_id


async def _no_bm25() -> None:
    return None
