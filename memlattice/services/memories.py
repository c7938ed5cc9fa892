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

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memlattice.core.auth import Tenant
from memlattice.core.embedding_text import embedding_text
from memlattice.core.errors import MemlatticeError, ValidationError
from memlattice.core.judge_queue import WriterView
from memlattice.core.model import (
    MAX_BATCH,
    Direction,
    EdgeType,
    ForgetPredicate,
    MemoryFilter,
    MemoryInput,
    MemoryPatch,
    Scope,
    WriteEffect,
    utcnow,
)
from memlattice.core.records.payloads import TYPED_MEMORY_TYPES, reserved_type_message
from memlattice.core.search_config import NamespaceSettings, resolve_config
from memlattice.core.vector_spaces import VectorSpace
from memlattice.embeddings import Embedder, check_dimension
from memlattice.embeddings.memory_vectors import embed_memories
from memlattice.graph.codec import AuditEntry, Edge, Memory
from memlattice.graph.duplicates import DuplicateGraph, as_written
from memlattice.graph.history import MemoryVersion
from memlattice.graph.lexical_stats import LexicalStatsGraph
from memlattice.graph.memories import (
    MemoryGraph,
    NamespaceConfig,
    NamespaceConfigGraph,
    Page,
    PreparedMemory,
    Window,
    encode_cursor,
    window,
)
from memlattice.graph.namespace_listing import NamespaceListGraph
from memlattice.graph.session_keys import SessionKeys
from memlattice.graph.shares import IndexShareGraph
from memlattice.search.index_shares import IndexShares
from memlattice.search.lexical_stats import LexicalStatistics
from memlattice.search.rerank import RerankerRegistry
from memlattice.services.access import AccessRecorder
from memlattice.services.auto_supersede import announce_auto_superseded
from memlattice.services.change_events import ChangeEvents
from memlattice.services.events import EventBus
from memlattice.services.namespace_directory import NamespaceDirectory
from memlattice.services.namespaces import NamespaceDefaults
from memlattice.services.recall import SearchHit, SearchRequest, recall
from memlattice.services.spaces import EmbeddingReport, VectorSpaces
from memlattice.services.write_vectors import patched_vector, prepare

log = logging.getLogger(__name__)


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
    record_access: bool = True
    # What the caller reads of each hit's memory (SearchRequest.memory_properties).
    memory_properties: frozenset[str] | None = None


# A relationship to add: (source id, target id, type, metadata). The metadata is the
# caller's JSON value as sent; graph.edge_queries.edge_rows refuses one not an object.
EdgeSpec = tuple[str, str, EdgeType, object]


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
        self.directory = NamespaceDirectory(NamespaceListGraph(graph.client))
        self.shares = shares or IndexShares(IndexShareGraph(graph.client))
        self.rerankers = rerankers or RerankerRegistry()
        self.access = access
        self.embedder = embedder
        self.dimension = dimension
        self.candidates = candidates
        self.spaces = spaces
        # Told of each write's new memories once it has committed (the optional update
        # judge, memlattice.services.update_judge); they must not block or fail it.
        self.followers: list[Callable[[Sequence[Memory], Tenant, str], None]] = []
        # Whether a write marks its new memories for the update judge (in its own
        # transaction, graph.judge_queue): set when one follows the writes.
        self.judged = False

    # ------------------------------------------------------------ embeddings

    async def prepare(self, inputs: Sequence[MemoryInput]) -> list[PreparedMemory]:
        """Give each input its id, time, vector and event time (services.write_vectors)."""
        return await prepare(inputs, self.embedder, self.dimension)

    # ------------------------------------------------------------ use cases

    async def write(self, inputs: Sequence[MemoryInput], *, tenant: Tenant,
                    actor: str) -> list[Memory]:
        """Store the batch, one result per input: a write without an id whose content an
        active memory of its namespace and scope already holds reinforces that one and
        returns it with `duplicate_of` (unless it allows duplicates); a write with an id
        is stored under it, or is a retry answered unchanged, or CONFLICT (graph.explicit_ids);
        `written` says which. See memlattice.core.duplicates."""
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
        # The same content again reinforces the memory that holds it (graph.duplicates).
        outcomes = await DuplicateGraph(self.graph.client).create_or_reinforce(
            prepared, allow_duplicate=[m.allow_duplicate for m in inputs], tenant=tenant,
            actor=actor, auto_supersede=(auto := await self.auto_supersede(inputs[0].namespace)),
            judge=self.judge_view(tenant, actor))
        created = {o.memory.id: o.memory for o in outcomes if o.written is WriteEffect.CREATED}
        reinforced = list({o.memory.id: o.memory for o in outcomes
                           if o.written is WriteEffect.REINFORCED
                           and o.memory.id not in created}.values())
        await self.events.written(created.values(), actor)
        await announce_auto_superseded(self.graph.client, self.events, created.values(),
                                       auto=auto, tenant=tenant, actor=actor)
        if reinforced:
            await self.events.updated(reinforced, actor)
        await self.embed_side_spaces(inputs[0].namespace, list(created.values()))
        self.follow(list(created.values()), tenant, actor)
        return [as_written(o) for o in outcomes]

    async def ingest_session(
        self, memories: Sequence[PreparedMemory], *, session: str, turn_ids: list[str],
        speakers: Sequence[tuple[str, str] | None], namespace: str, tenant: Tenant,
        actor: str,
    ) -> tuple[list[Memory], list[Memory], SessionKeys]:
        """Write a session's new turns and link all of them (`MemoryGraph.ingest_session`):
        (every turn as stored, the turns this call wrote, which are announced, and the
        session's keys as re-derived in the same transaction)."""
        turns, written, keys = await self.graph.ingest_session(
            memories, session=session, turn_ids=turn_ids, speakers=speakers,
            namespace=namespace, tenant=tenant, actor=actor,
            auto_supersede=(auto := await self.auto_supersede(namespace)),
            judge=self.judge_view(tenant, actor))
        await self.events.written(written, actor)
        await announce_auto_superseded(self.graph.client, self.events, written, auto=auto,
                                       tenant=tenant, actor=actor)
        await self.embed_side_spaces(namespace, written)
        self.follow(written, tenant, actor)
        return turns, written, keys

    def follow(self, written: Sequence[Memory], tenant: Tenant, actor: str) -> None:
        """Tell the followers of the memories a committed write created."""
        if written:
            for follower in self.followers:
                follower(written, tenant, actor)

    def judge_view(self, tenant: Tenant, actor: str) -> WriterView | None:
        """What a write's mark for the update judge keeps of its writer (None: no judge)."""
        return WriterView.of(tenant, actor) if self.judged else None

    async def auto_supersede(self, namespace: str) -> float | None:
        """The namespace's threshold for confirming update candidates on write (cached)."""
        return (await self.namespaces.settings(namespace)).auto_supersede

    async def existing_ids(self, namespace: str, ids: list[str], *, tenant: Tenant) -> set[str]:
        return await self.graph.existing_ids(namespace, ids, tenant=tenant)

    async def embed_side_spaces(self, namespace: str, memories: Sequence[Memory]) -> None:
        """Keep the namespace's other vector spaces (see memlattice.services.spaces) current."""
        if self.spaces is not None:
            await self.spaces.embed_written(
                namespace, [(m.id, m.content, m.metadata) for m in memories])

    async def searched_vector(
        self, namespace: str, memory: MemoryInput, primary: Sequence[float] | None,
    ) -> tuple[VectorSpace | None, list[float]] | None:
        """`memory`'s vector in the space `search` would use for the namespace.

        The primary space (None) reuses `primary`, the vector it was prepared
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
            (vector,) = await embed_memories(
                embedder, [embedding_text(memory.content, memory.metadata)])
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
        embedding, model = await patched_vector(self.graph, self.embedder, self.dimension,
                                                tenant=tenant, id=id, patch=patch)
        updated = await self.graph.update(
            tenant=tenant, id=id, patch=patch, expected_version=expected_version,
            embedding=embedding, embedding_model=model, actor=actor, now=utcnow(),
        )
        await self.events.updated([updated], actor)
        if {"content", "metadata"} & patch.changes().keys():  # a turn's speaker is embedded
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

    async def page(self, flt: MemoryFilter, *, tenant: Tenant, first: int | None,
                   last: int | None, after: str | None, before: str | None,
                   max_size: int) -> Page:
        """A page of the filter's memories, newest first (as of `flt.as_of`, if given):
        the slice Relay's first/after or last/before ask for (graph.cursors.window,
        which refuses contradicting arguments with VALIDATION before any read)."""
        asked: Window = window(first=first, last=last, after=after, before=before,
                               max_size=max_size)
        return await self.graph.list(flt, tenant=tenant, now=flt.as_of or utcnow(),
                                     window=asked)

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
            now=asked.now, notes=asked.notes, record_access=asked.record_access,
            memory_properties=asked.memory_properties), tenant=tenant)

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
            embedding_model = settings.embedding_model
            if self.spaces is None:
                raise ValidationError("this server cannot re-embed namespaces",
                                      field="embeddingModel")
            dimension = settings.embedding_dimension or self.dimension
            settings = settings.model_copy(update={"embedding_dimension": dimension})
            await self.spaces.configure(namespace, embedding_model, dimension)
        return await self.namespaces.configure(namespace, settings, actor)

    async def embedding_status(self, *, tenant: Tenant) -> EmbeddingReport:
        if self.spaces is None:
            raise ValidationError("this server keeps no embedding spaces")
        return await self.spaces.report(tenant.namespace, tenant)

    async def search(self, request: SearchRequest, *, tenant: Tenant) -> list[SearchHit]:
        """Recall (memlattice.services.recall): candidates, ranking, relevance, hits."""
        return await recall(self, request, tenant=tenant)


def refuse_typed(inputs: Sequence[MemoryInput]) -> None:
    """Refuse a plain memory that claims a typed record's or a fact's `memoryType`.

    Such a memory would skip payload validation and carry no label, payload or
    subgraph, so every record query would misread it; writeRecord and storeFact
    are the only ways in. Checked before anything is embedded or written.
    """
    for i, m in enumerate(inputs):
        if m.memory_type in TYPED_MEMORY_TYPES:
            raise ValidationError(reserved_type_message(m.memory_type), field="memoryType",
                                  index=i)
