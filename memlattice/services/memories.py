"""Use cases that combine the graph with embeddings: what resolvers call.

Resolvers validate and authorise; the graph speaks Cypher; this layer holds
the few decisions between them: which id and time a write gets, where its
vector comes from (the client's, else the embedder's, cached), how search
candidates are fused and cut, and which events a committed change announces
(memlattice.services.change_events). Every plain memory write goes through here
(records and facts through KnowledgeService, announced the same way); the reads
the resolvers need are passed through unchanged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memlattice.core.auth import Tenant
from memlattice.core.errors import MemlatticeError, ValidationError
from memlattice.core.lucene import any_terms
from memlattice.core.model import (
    MAX_BATCH,
    Direction,
    EdgeType,
    ForgetPredicate,
    MemoryFilter,
    MemoryInput,
    MemoryPatch,
    Scope,
    ScoringMode,
    SearchMode,
    utcnow,
)
from memlattice.core.records.payloads import TYPED_MEMORY_TYPES
from memlattice.core.search_config import NamespaceSettings, SearchConfig, resolve_config
from memlattice.core.vector_checks import vector_problem
from memlattice.core.vector_spaces import VectorSpace
from memlattice.embeddings import Embedder, check_dimension
from memlattice.graph.codec import AuditEntry, Edge, Memory, memory_from_properties, to_datetime
from memlattice.graph.history import MemoryVersion
from memlattice.graph.lexical_stats import LexicalStatsGraph
from memlattice.graph.memories import (
    MemoryGraph,
    NamespaceConfig,
    NamespaceConfigGraph,
    Page,
    PreparedMemory,
    SearchResult,
    encode_cursor,
    new_id,
)
from memlattice.graph.shares import IndexShareGraph
from memlattice.search.entity_signal import entity_signal, named_entities
from memlattice.search.index_shares import IndexShares
from memlattice.search.lexical import Bm25, document_text, query_terms
from memlattice.search.lexical_stats import LexicalStatistics
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
)
from memlattice.search.rerank import RerankerRegistry
from memlattice.services.access import AccessRecorder
from memlattice.services.change_events import ChangeEvents
from memlattice.services.events import EventBus
from memlattice.services.namespaces import NamespaceDefaults
from memlattice.services.spaces import EmbeddingReport, VectorSpaces

log = logging.getLogger(__name__)


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


@dataclass(frozen=True)
class SearchHit:
    """A memory with every part of its score, and why it is here."""

    memory: Memory
    scored: Scored
    rerank_score: float | None = None
    conflicts: tuple[Memory, ...] = ()


@dataclass(frozen=True)
class SearchQuery:
    """A search as the API asks for it: the options the caller set, over the
    namespace's defaults (or the named preset), and the scope levels it named."""

    filter: MemoryFilter
    query: str | None = None
    vector: tuple[float, ...] | None = None
    preset: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    scopes: tuple[Scope, ...] = ()
    now: datetime | None = None
    notes: list[str] = field(default_factory=list)


# A relationship to add: (source id, target id, type, metadata).
EdgeSpec = tuple[str, str, EdgeType, Mapping[str, Any]]


class MemoryService:
    def __init__(
        self, graph: MemoryGraph, embedder: Embedder | None, *, dimension: int,
        candidates: int = 50, access: AccessRecorder | None = None,
        rerankers: RerankerRegistry | None = None,
        namespaces: NamespaceDefaults | None = None, spaces: VectorSpaces | None = None,
        shares: IndexShares | None = None, lexical: LexicalStatistics | None = None,
        events: EventBus | None = None,
    ) -> None:
        self.graph = graph
        # Committed writes are announced here (nothing is, without a bus).
        self.events = ChangeEvents(graph.client, events)
        self.lexical = lexical or LexicalStatistics(LexicalStatsGraph(graph.client))
        self.namespaces = namespaces or NamespaceDefaults(NamespaceConfigGraph(graph.client))
        self.shares = shares or IndexShares(IndexShareGraph(graph.client))
        self.rerankers = rerankers or RerankerRegistry()
        self.access = access
        self.embedder = embedder
        self.dimension = dimension
        self.candidates = candidates
        self.spaces = spaces

    # ------------------------------------------------------------ embeddings

    def _client_vector(self, vector: Sequence[float] | None, what: str) -> list[float] | None:
        """A client's vector as the list the driver sends; the input model has
        already made its values finite floats."""
        if vector is None:
            return None
        check_dimension(vector, self.dimension, what=what)
        return list(vector)

    async def _embed(self, texts: list[str]) -> list[list[float]]:
        assert self.embedder is not None
        vectors = await self.embedder.embed(texts)
        for vector in vectors:
            check_dimension(vector, self.dimension, what="the embedding provider's vector")
        return vectors

    async def prepare(self, inputs: Sequence[MemoryInput]) -> list[PreparedMemory]:
        """Give each input its id, time and vector; texts without a vector are embedded
        together in one provider call."""
        now = utcnow()
        vectors: list[list[float] | None] = [
            self._client_vector(m.embedding, f"embedding of memory {i}")
            for i, m in enumerate(inputs)
        ]
        models: list[str | None] = [m.embedding_model or "client" if m.embedding else None
                                    for m in inputs]
        missing = [i for i, v in enumerate(vectors) if v is None]
        if missing and self.embedder is not None:
            embedded = await self._embed([inputs[i].content for i in missing])
            for i, vector in zip(missing, embedded):
                vectors[i] = vector
                models[i] = self.embedder.model
        return [
            PreparedMemory(input=m, id=m.id or new_id(), now=m.now or now,
                           embedding=vectors[i], embedding_model=models[i])
            for i, m in enumerate(inputs)
        ]

    # ------------------------------------------------------------ use cases

    async def write(self, inputs: Sequence[MemoryInput], *, tenant: Tenant,
                    actor: str) -> list[Memory]:
        if not inputs:
            raise ValidationError("writeMemories needs at least one memory")
        if len(inputs) > MAX_BATCH:
            raise ValidationError(f"at most {MAX_BATCH} memories per batch")
        namespaces = {m.namespace for m in inputs}
        if len(namespaces) != 1:
            raise ValidationError("every memory of one batch must share a namespace")
        refuse_typed(inputs)
        for m in inputs:  # before embedding: a refused write costs no provider call
            tenant.check_record(namespace=m.namespace, scope=m.scope, sensitivity=m.sensitivity)
        prepared = await self.prepare(inputs)
        written = await self.graph.create(prepared, tenant=tenant, actor=actor)
        await self.events.written(written, actor)
        await self.embed_side_spaces(inputs[0].namespace, written)
        return written

    async def ingest_session(
        self, memories: Sequence[PreparedMemory], *, session: str, turn_ids: list[str],
        speakers: Sequence[tuple[str, str] | None], namespace: str, tenant: Tenant,
        actor: str,
    ) -> tuple[list[Memory], list[Memory]]:
        """Write a session's new turns and link all of them (`MemoryGraph.ingest_session`):
        (every turn as stored, the turns this call wrote, which are announced)."""
        turns, written = await self.graph.ingest_session(
            memories, session=session, turn_ids=turn_ids, speakers=speakers,
            namespace=namespace, tenant=tenant, actor=actor)
        await self.events.written(written, actor)
        await self.embed_side_spaces(namespace, written)
        return turns, written

    async def existing_ids(self, namespace: str, ids: list[str], *, tenant: Tenant) -> set[str]:
        return await self.graph.existing_ids(namespace, ids, tenant=tenant)

    async def embed_side_spaces(self, namespace: str, memories: Sequence[Memory]) -> None:
        """Keep the namespace's other vector spaces (see memlattice.services.spaces) current."""
        if self.spaces is not None:
            await self.spaces.embed_written(namespace, [(m.id, m.content) for m in memories])

    async def searched_vector(
        self, namespace: str, text: str, primary: Sequence[float] | None,
    ) -> tuple[VectorSpace | None, list[float]] | None:
        """`text`'s vector in the space `search` would use for the namespace.

        The primary space (None) reuses `primary`, the vector the text was prepared
        with; an active side space embeds it with that space's model (cached, so the
        side-space write that follows costs nothing more). None when there is no
        vector to be had: no primary one, or the side space's model unavailable now,
        which a caller that only looks for neighbours can live with.
        """
        space = (await self.spaces.state(namespace)).active if self.spaces else None
        if space is None or self.spaces is None:
            return (None, [float(x) for x in primary]) if primary else None
        embedder = self.spaces.embedders.get(space)
        if embedder is None:
            return None
        try:
            (vector,) = await embedder.embed([text])
            check_dimension(vector, space.dimension, what=f"{space.model}'s vector")
        except MemlatticeError as exc:
            log.warning("no %s vector for a neighbour look-up in %s (%s)", space.key,
                        namespace, exc.code)
            return None
        return space, vector

    async def update(
        self, *, tenant: Tenant, id: str, patch: MemoryPatch, expected_version: int | None,
        actor: str,
    ) -> Memory:
        changes = patch.changes()
        embedding = self._client_vector(patch.embedding, "embedding")
        model = (patch.embedding_model or "client") if embedding else None
        if embedding is None and "content" in changes and self.embedder is not None:
            embedding = (await self._embed([patch.content or ""]))[0]
            model = self.embedder.model
        updated = await self.graph.update(
            tenant=tenant, id=id, patch=patch, expected_version=expected_version,
            embedding=embedding, embedding_model=model, actor=actor, now=utcnow(),
        )
        await self.events.updated([updated], actor)
        if "content" in changes:
            await self.embed_side_spaces(tenant.namespace, [updated])
        return updated

    async def supersede(
        self, *, tenant: Tenant, id: str, successor: MemoryInput, expected_version: int | None,
        actor: str,
    ) -> tuple[Memory, Memory]:
        refuse_typed([successor])
        (prepared,) = await self.prepare([successor])
        previous, current = await self.graph.supersede(
            tenant=tenant, id=id, successor=prepared,
            expected_version=expected_version, actor=actor,
        )
        await self.events.replaced(current, [previous], actor)
        await self.embed_side_spaces(successor.namespace, [current])
        return previous, current

    async def forget(self, *, tenant: Tenant, predicate: ForgetPredicate,
                     actor: str) -> list[str]:
        """Tombstone every memory matching the predicate; the ids forgotten."""
        now = utcnow()
        ids = await self.graph.forget(tenant=tenant, predicate=predicate, actor=actor, now=now)
        await self.events.forgotten_ids(tenant.namespace, ids, actor, at=now)
        return ids

    async def delete(self, *, tenant: Tenant, id: str, actor: str) -> None:
        """Erase a memory and its relationships for good."""
        now = utcnow()
        before = await self.events.before_delete(tenant.namespace, id)
        await self.graph.delete(tenant=tenant, id=id, actor=actor, now=now)
        await self.events.deleted(before, actor, at=now)

    async def add_edges(self, *, tenant: Tenant, edges: Sequence[EdgeSpec],
                        actor: str) -> list[Edge]:
        """Relate pairs of memories, atomically: all of them or none."""
        now = utcnow()
        made = await self.graph.add_edges(tenant=tenant, edges=edges, actor=actor, now=now)
        await self.events.edges_added(tenant.namespace, made, actor, at=now)
        return made

    async def delete_edge(self, *, tenant: Tenant, edge_id: str, actor: str) -> None:
        now = utcnow()
        before = await self.events.before_edge_delete(tenant.namespace, edge_id)
        await self.graph.delete_edge(tenant=tenant, edge_id=edge_id, actor=actor, now=now)
        await self.events.edge_deleted(tenant.namespace, before, actor, at=now)

    # ------------------------------------------------------------ reads

    async def get(self, *, tenant: Tenant, id: str, as_of: datetime | None = None) -> Memory:
        return await self.graph.get(tenant=tenant, id=id, now=utcnow(), as_of=as_of)

    async def history(self, *, tenant: Tenant, id: str, limit: int) -> list[MemoryVersion]:
        return await self.graph.history(tenant=tenant, id=id, now=utcnow(), limit=limit)

    async def page(self, flt: MemoryFilter, *, tenant: Tenant, first: int,
                   after: str | None) -> Page:
        """A page of the filter's memories, newest first (as of `flt.as_of`, if given)."""
        return await self.graph.list(flt, tenant=tenant, now=flt.as_of or utcnow(),
                                     first=first, after=after)

    @staticmethod
    def cursor(memory: Memory) -> str:
        """The cursor `page` continues after `memory` from."""
        return encode_cursor(memory)

    async def edges(self, *, tenant: Tenant, id: str, types: Sequence[EdgeType],
                    direction: Direction) -> list[Edge]:
        return await self.graph.edges(tenant=tenant, id=id, types=types, direction=direction,
                                      now=utcnow())

    async def audit_trail(self, *, tenant: Tenant, id: str) -> list[AuditEntry]:
        return await self.graph.audit_trail(tenant=tenant, id=id)

    async def embeddings(self, *, tenant: Tenant, ids: Sequence[str]) -> dict[str, list[float]]:
        return await self.graph.embeddings(tenant=tenant, ids=ids)

    async def configured_search(self, asked: SearchQuery, *, tenant: Tenant) -> list[SearchHit]:
        """`search` as the API asks for it: every scope level named must be within the
        key's maximum, and the namespace's defaults fill the options left unset."""
        for scope in asked.scopes:
            tenant.check_scope(scope)  # asking for a level above the key's maximum
        defaults = await self.namespaces.settings(asked.filter.namespace)
        config = resolve_config(asked.preset, defaults, dict(asked.options))
        return await self.search(SearchRequest(
            filter=asked.filter, query=asked.query, vector=asked.vector, config=config,
            now=asked.now, notes=asked.notes), tenant=tenant)

    async def configure_namespace(self, settings: NamespaceSettings, *, tenant: Tenant,
                                  actor: str) -> NamespaceConfig:
        """Store a namespace's defaults; a new embedding model starts a background
        re-embed (checked first, so a model the provider cannot serve is refused)."""
        namespace = tenant.namespace
        if settings.embedding_model is None:
            current = await self.namespaces.settings(namespace)
            settings = settings.model_copy(update={
                "embedding_model": current.embedding_model,
                "embedding_dimension": current.embedding_dimension})
        else:
            if self.spaces is None:
                raise ValidationError("this server cannot re-embed namespaces",
                                      field="embeddingModel")
            dimension = settings.embedding_dimension or self.dimension
            settings = settings.model_copy(update={"embedding_dimension": dimension})
            await self.spaces.configure(namespace, settings.embedding_model, dimension)
        return await self.namespaces.configure(namespace, settings, actor)

    async def embedding_status(self, *, tenant: Tenant) -> EmbeddingReport:
        if self.spaces is None:
            raise ValidationError("this server keeps no embedding spaces")
        return await self.spaces.report(tenant.namespace, tenant)

    async def search(self, request: SearchRequest, *, tenant: Tenant) -> list[SearchHit]:
        config = request.config
        mode = config.mode
        # Time travel ranks (and applies expiry) as of then.
        now = request.now or request.filter.as_of or utcnow()
        # The namespace may search another model's space than the primary one.
        space = (await self.spaces.state(request.filter.namespace)).active if self.spaces else None
        embedder = self.spaces.embedders.get(space) if self.spaces else self.embedder
        dimension = space.dimension if space is not None else self.dimension
        vector = None
        if request.vector is not None:
            check_dimension(list(request.vector), dimension, what="query vector")
            problem = vector_problem(request.vector)
            if problem is not None:
                raise ValidationError(f"the query vector {problem}", field="vector")
            vector = [float(x) for x in request.vector]
        if (mode is not SearchMode.LEXICAL and vector is None and request.query
                and embedder is not None):
            (vector,) = await embedder.embed([request.query])
            check_dimension(vector, dimension, what="the embedding provider's vector")
        if mode is SearchMode.HYBRID and vector is None and request.query:
            request.notes.append(
                "lexical only: the search gave no `vector` and the server has no embedding"
                " provider for this namespace, so the semantic signal is missing")
        if mode is SearchMode.SEMANTIC and vector is None:
            raise ValidationError(
                "semantic search needs `vector`, or `query` with an embedding provider configured"
            )
        lucene = (any_terms(request.query)
                  if request.query and mode is not SearchMode.SEMANTIC else None)
        if mode is SearchMode.LEXICAL and lucene is None:
            raise ValidationError("lexical search needs a `query` with at least one word")
        if vector is None and lucene is None:
            raise ValidationError("search needs a `query` or a `vector`")
        expansion = config.expansion if config.expansion and config.expansion.enabled else None
        vector = vector if mode is not SearchMode.LEXICAL else None

        # Fusion weighs the entities a query names (memlattice.search.entity_signal).
        entities = config.scoring is ScoringMode.FUSION and bool(request.query)

        async def ranked(pool: int, *, first_try: bool = False) -> tuple[
                SearchResult, list[Scored], dict[str, Mapping[str, Any]], dict[str, list[float]]]:
            # The namespace's BM25 statistics (cached) are read beside the recall query.
            result, bm25 = await asyncio.gather(self.graph.search(
                request.filter, tenant=tenant, now=now, vector=vector, lucene=lucene,
                candidates=pool, expansion=expansion,
                with_embeddings=config.mmr_lambda is not None, needed=config.limit, space=space,
                first_try=first_try,
                context_hops=config.context_hops if lucene is not None else 0,
                cross_similarity=config.scoring is ScoringMode.FUSION,
                entities=entities,
            ), self.lexical.bm25(tenant.namespace, query_terms(request.query or ""),
                                 request.filter.scope_keys)
                if lucene is not None else _no_bm25())
            props: dict[str, Mapping[str, Any]] = {}
            embeddings: dict[str, list[float]] = {}
            candidates: list[Candidate] = []
            # Fusion scores every candidate on both signals: the vector side's on its
            # words too, the lexical side's on its cosine (read by the query).
            both = config.scoring is ScoringMode.FUSION
            for found, as_similarity in [(x, True) for x in result.semantic] + [
                    (x, False) for x in result.lexical + result.adjacent]:
                props[found.id] = found.props
                if found.embedding is not None:
                    embeddings[found.id] = found.embedding
                fts = None
                if bm25 is not None and (both or not as_similarity):
                    fts = lexical_score(bm25, found.props, found.context, config)
                candidates.append(_candidate(
                    found.props, fts=fts,
                    similarity=found.score if as_similarity else found.similarity if both else None))
            about = {x.id: x.entities for x in result.semantic + result.lexical + result.adjacent}
            signal = entity_signal(named_entities(request.query or "", about.values()), about)
            return (result, base_scores(candidates, config, now=now, query=request.query,
                                        entity=signal), props, embeddings)

        # Similarity-ranked searches try a small pool first (memlattice.search.pool), wider
        # as the part of the shared vector index their filter admits is smaller.
        share = self.shares.share(
            tenant, space, tenant.clip_scope_keys(request.filter.indexed_scope_keys())
        ) if similarity_bounded(config) else None
        pool = first_pool(config, self.candidates, share)
        full = config.candidate_count(self.candidates)
        result, scored, props, embeddings = await ranked(pool, first_try=pool < full)
        if pool < full and not settled(
                scored, pool_floor=min((x.score for x in result.semantic), default=None),
                ceiling=factor_ceiling(config, request.query), limit=config.limit,
                min_score=config.min_score):
            result, scored, props, embeddings = await ranked(full)
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
            scored, rerank_scores = await self._rerank(config.reranker, request.query, scored,
                                                       props, config.limit)
        if config.mmr_lambda is not None:
            scored = mmr(scored, embeddings, config.mmr_lambda, config.limit)
        final = finish(scored, min_score=config.min_score, limit=config.limit)
        hits = [
            SearchHit(memory=memory_from_properties(props[s.id]), scored=s,
                      rerank_score=rerank_scores.get(s.id),
                      conflicts=tuple(result.conflicts.get(s.id, ())))
            for s in final
        ]
        if self.access is not None:
            self.access.record(request.filter.namespace, (h.memory.id for h in hits))
        return hits

    async def _rerank(
        self, name: str, query: str | None, scored: list[Scored],
        props: Mapping[str, Mapping[str, Any]], limit: int,
    ) -> tuple[list[Scored], dict[str, float]]:
        """Let a registered reranker reorder the head of the list (3 x limit)."""
        if not query:
            raise ValidationError("a reranker needs the query text", field="query")
        reranker = self.rerankers.get(name)
        head, tail = scored[: limit * 3], scored[limit * 3:]
        scores = await reranker(query, [(s.id, str(props[s.id]["content"])) for s in head])
        by_id = {s.id: score for s, score in zip(head, scores)}
        head = sorted(head, key=lambda s: (-by_id[s.id], s.id))
        return head + tail, by_id


def refuse_typed(inputs: Sequence[MemoryInput]) -> None:
    """Refuse a plain memory that claims a typed record's or a fact's `memoryType`.

    Such a memory would skip payload validation and carry no label, payload or
    subgraph, so every record query would misread it; writeRecord and storeFact
    are the only ways in. Checked before anything is embedded or written.
    """
    for i, m in enumerate(inputs):
        if m.memory_type in TYPED_MEMORY_TYPES:
            writer = "storeFact" if m.memory_type == "fact" else "writeRecord"
            raise ValidationError(
                f"memoryType {m.memory_type!r} belongs to typed records and facts, whose"
                f" payload must be validated: write it with {writer} (writeRecord for"
                " episodic, working, semantic, competence and plan_graph records, storeFact"
                " for facts)", field="memoryType", index=i)


async def _no_bm25() -> None:
    return None


def lexical_score(bm25: Bm25, props: Mapping[str, Any], context: Sequence[tuple[int, str]],
                  config: SearchConfig) -> float:
    """A candidate's BM25F with its namespace's statistics (memlattice.search.lexical), in
    place of the fulltext index's score, which counts every tenant's memories:
    its own text, and the turns around it when it has some (`context`)."""
    text = document_text(str(props.get("content") or ""), props.get("summary"), props.get("key"),
                         props.get("tags") or ())
    return bm25.score_fields([bm25.field([text]), *bm25.context_fields(
        context, hops=config.context_hops, decay=config.context_decay)])


def _candidate(props: Mapping[str, Any], *, similarity: float | None,
               fts: float | None) -> Candidate:
    return Candidate(
        id=str(props["id"]), similarity=similarity, fts=fts,
        created_at=to_datetime(props.get("createdAt")),
        access_count=int(props.get("accessCount") or 0),
        confidence=float(props.get("confidence", 1.0)), salience=props.get("salience"),
        key=props.get("key"), tags=tuple(props.get("tags") or ()),
    )
