"""The memory graph's operations: what the service asks of Neo4j.

Each public method is one business operation and, wherever the logic allows, one
round trip. Read-check-write operations (update, supersede) run in one managed
transaction that first takes the node's write lock, so exactly one of two racing
writers wins. Statements: graph.queries, graph.edge_queries; rules a change must
pass: graph.refusals; decoding a recall: graph.recall_rows.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction

from memlattice.core.auth import Tenant
from memlattice.core.errors import Conflict, NotFound, ValidationError
from memlattice.core.event_time import event_ranges
from memlattice.core.judge_queue import WriterView
from memlattice.core.lucene import all_terms
from memlattice.core.model import (
    Direction,
    EdgeType,
    ForgetPredicate,
    MemoryFilter,
    MemoryPatch,
    Status,
    camel,
    utcnow,
)
from memlattice.core.search_config import ExpansionConfig
from memlattice.core.vector_spaces import VectorSpace
from memlattice.graph import conversations, edge_queries, queries, recall_query
from memlattice.graph.audit_queries import audit_trail
from memlattice.graph.client import GraphClient, run
from memlattice.graph.codec import (
    META_PREFIX,
    AuditEntry,
    Edge,
    Memory,
    audit_from_properties,
    canonical_json,
    edge_from_record,
    exists,
    memory_from_properties,
    memory_properties,
    meta_properties,
    patch_properties,
)
from memlattice.graph.cursors import Page, Window, encode_cursor, page_of, window
from memlattice.graph.embedding_cache import EmbeddingCacheGraph
from memlattice.graph.entities import mention_rows
from memlattice.graph.explicit_ids import refuse_repeated_ids
from memlattice.graph.history import MemoryVersion, read_history
from memlattice.graph.memory_filters import fenced
from memlattice.graph.namespace_configs import NamespaceConfig, NamespaceConfigGraph
from memlattice.graph.prepared_memory import (
    PreparedMemory,
    creation_rows,
    new_id,
    written_properties,
)
from memlattice.graph.recall_rows import SearchResult, search_result
from memlattice.graph.refusals import (
    check_version,
    refuse_episodic,
    refuse_supersedes_cycle,
    refuse_typed_supersede,
    refuse_typed_text,
)
from memlattice.graph.session_keys import SessionKeys, refresh_keys, refresh_sessions_of
from memlattice.graph.updates.store import detect_in, written_of

# What the service layer imported from here before the split, still importable.
__all__ = ["EmbeddingCacheGraph", "MemoryGraph", "NamespaceConfig", "NamespaceConfigGraph",
           "Page", "PreparedMemory", "SearchResult", "Window", "encode_cursor", "new_id",
           "window"]


class MemoryGraph:
    """Memories, their relationships and audit trail, in one Neo4j database."""

    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def create(
        self, memories: Sequence[PreparedMemory], *, tenant: Tenant, actor: str
    ) -> list[Memory]:
        """Create a batch atomically: all of it or, on any conflict, none of it."""
        for m in memories:
            tenant.check_record(namespace=m.input.namespace, scope=m.input.scope,
                                sensitivity=m.input.sensitivity)
        ids = [m.id for m in memories]
        refuse_repeated_ids(ids)
        written = written_properties(memories)
        try:
            await self.client.write(
                queries.create_memories(creation_rows(written), tenant=tenant, actor=actor)
            )
        except Conflict as exc:
            raise Conflict(
                "a memory with one of these ids already exists; ids are unique", ids=ids[:20]
            ) from exc
        # What was written is exactly `props`: no need to read it back.
        return [memory_from_properties(props) for props in written]

    async def existing_ids(self, namespace: str, ids: list[str], *, tenant: Tenant) -> set[str]:
        """Which of `ids` the namespace already holds."""
        tenant.require_write()
        records = await self.client.read(conversations.existing(namespace, ids))
        return {str(r["id"]) for r in records}

    async def ingest_session(
        self, memories: Sequence[PreparedMemory], *, session: str, turn_ids: list[str],
        speakers: Sequence[tuple[str, str] | None], namespace: str, tenant: Tenant,
        actor: str, auto_supersede: float | None = None, judge: WriterView | None = None,
    ) -> tuple[list[Memory], list[Memory], SessionKeys]:
        """Write the turns the namespace does not hold yet (marked for the update judge
        with `judge`), join every turn of `turn_ids` (in order) to its session, its
        neighbours and its speaker, and re-derive the session's keys (graph.session_keys),
        in one transaction: (every turn as stored, the turns this call wrote, the keys)."""
        for m in memories:
            tenant.check_record(namespace=m.input.namespace, scope=m.input.scope,
                                sensitivity=m.input.sensitivity)
        times = {m.id: m.now for m in memories}
        now = max(times.values(), default=None) or utcnow()

        async def work(tx: AsyncManagedTransaction
                       ) -> tuple[list[Memory], list[Memory], SessionKeys]:
            known = {str(r["id"]) for r in await run(tx, conversations.existing(
                namespace, turn_ids))}
            fresh = [m for m in memories if m.id not in known]
            written = [memory_from_properties(p) for p in await self._create_in(tx, fresh, actor,
                                                                             tenant)]
            await detect_in(tx, written_of(fresh), tenant=tenant, now=now,
                            auto_supersede=auto_supersede, actor=actor, judge=judge)
            await run(tx, conversations.link_session(
                namespace=namespace, session=session, now=utcnow(), turns=[
                    {"id": id, "at": times.get(id, now),
                     "speakerKey": speaker[0] if speaker else None,
                     "speakerName": speaker[1] if speaker else None}
                    for id, speaker in zip(turn_ids, speakers)]))
            keys = await refresh_keys(tx, tenant=tenant, session=session, now=utcnow())
            rows = await run(tx, conversations.turns(tenant=tenant, ids=turn_ids))
            by_id = {str(r["m"]["id"]): memory_from_properties(r["m"]) for r in rows}
            return [by_id[i] for i in turn_ids if i in by_id], written, keys

        return await self.client.transaction(work)

    async def _create_in(self, tx: AsyncManagedTransaction, memories: Sequence[PreparedMemory],
                         actor: str, tenant: Tenant) -> list[dict[str, Any]]:
        """`create`'s write, inside a caller's transaction; the properties written."""
        written = written_properties(memories)
        if written:
            await run(tx, queries.create_memories(creation_rows(written), tenant=tenant,
                                                  actor=actor))
        return written

    async def update(
        self, *, tenant: Tenant, id: str, patch: MemoryPatch, expected_version: int | None,
        embedding: list[float] | None, embedding_model: str | None, actor: str, now: datetime,
    ) -> Memory:
        changes = patch.changes()
        tenant.require_write()
        if patch.sensitivity is not None:
            tenant.check_sensitivity(patch.sensitivity)

        async def work(tx: AsyncManagedTransaction) -> Memory:
            current = await self._locked(tx, tenant=tenant, id=id, now=now)
            refuse_episodic(current, "updated")
            refuse_typed_text(current, changes)
            check_version(current, expected_version)
            if current.status is not Status.ACTIVE:
                raise Conflict(f"memory {id} is {current.status.value} and cannot be updated")
            props = patch_properties(changes)
            mentions = None
            if changes.get("content") is not None:  # what it names and tells of, anew
                content = str(changes["content"])
                mentions = mention_rows(content)
                (event,) = await event_ranges([content], [current.created_at])
                props.update(eventStart=event.start if event else None,
                             eventEnd=event.end if event else None)
            if "metadata" in changes:
                metadata = changes["metadata"] or {}
                stale = {META_PREFIX + k: None for k in current.metadata if k not in metadata}
                props.update(stale)
                props.update(meta_properties(metadata))
                props["metadataJson"] = canonical_json(metadata)
            if embedding is not None:
                props.update(embedding=embedding, embeddingModel=embedding_model,
                             embeddingDimension=len(embedding))
            details = canonical_json({"fields": sorted(camel(k) for k in changes)})
            records = await run(tx, queries.update_memory(
                tenant=tenant, id=id, props=props, actor=actor, now=now,
                audit_id=new_id(), details=details, mentions=mentions,
            ))
            if mentions is not None:  # a turn's new words: its session's keys anew
                await refresh_sessions_of(tx, tenant=tenant, ids=[id], now=now)
            return memory_from_properties(records[0]["m"])

        return await self.client.transaction(work)

    async def supersede(
        self, *, tenant: Tenant, id: str, successor: PreparedMemory,
        expected_version: int | None, actor: str,
    ) -> tuple[Memory, Memory]:
        """Returns (previous, current). Of two racing supersedes exactly one wins."""
        tenant.check_record(namespace=successor.input.namespace, scope=successor.input.scope,
                            sensitivity=successor.input.sensitivity)

        async def work(tx: AsyncManagedTransaction) -> tuple[Memory, Memory]:
            old = await self._locked(tx, tenant=tenant, id=id, now=successor.now)
            refuse_episodic(old, "superseded")
            refuse_typed_supersede(old)
            check_version(old, expected_version)
            if old.status is not Status.ACTIVE:
                raise Conflict(
                    f"memory {id} is already {old.status.value}"
                    + (f" by {old.superseded_by}" if old.superseded_by else "")
                    + "; supersede the current memory instead",
                    current=old.superseded_by,
                )
            props = memory_properties(
                successor.input, id=successor.id, now=successor.now,
                embedding=successor.embedding, embedding_model=successor.embedding_model,
                event=(successor.event_start, successor.event_end),
            )
            records = await run(tx, queries.supersede_memory(
                tenant=tenant, id=id, props=props, edge_id=new_id(), actor=actor,
                now=successor.now, audit_ids=(new_id(), new_id()),
                mentions=mention_rows(successor.input.content),
            ))
            record = records[0]
            return memory_from_properties(record["previous"]), memory_from_properties(
                record["current"]
            )

        return await self.client.transaction(work)

    async def forget(
        self, *, tenant: Tenant, predicate: ForgetPredicate, actor: str, now: datetime
    ) -> list[str]:
        tenant.require_write()
        conditions, params = queries.forget_conditions(predicate)
        lucene = all_terms(predicate.query) if predicate.query is not None else None
        async def work(tx: AsyncManagedTransaction) -> list[str]:  # and their sessions' keys
            ids = [str(r["id"]) for r in await run(tx, queries.forget_memories(
                tenant=tenant, now=now, actor=actor, conditions=conditions, params=params,
                fulltext=lucene))]
            await refresh_sessions_of(tx, tenant=tenant, ids=ids, now=now)
            return ids

        return await self.client.transaction(work)

    async def delete(self, *, tenant: Tenant, id: str, actor: str, now: datetime) -> None:
        tenant.require_write()
        query = queries.delete_memory(tenant=tenant, id=id, actor=actor, now=now, audit_id=new_id())
        async def work(tx: AsyncManagedTransaction) -> None:  # and its sessions' keys
            if not (rows := await run(tx, query)):
                raise NotFound(f"no memory {id} in namespace {tenant.namespace}", id=id)
            for session in rows[0]["sessions"]:
                await refresh_keys(tx, tenant=tenant, session=str(session), now=now)
        await self.client.transaction(work)

    # ------------------------------------------------------------ reads

    async def get(self, *, tenant: Tenant, id: str, now: datetime,
                  as_of: datetime | None = None) -> Memory:
        """The memory; with `as_of`, as it was then (graph.history), if believed then."""
        records = await self.client.read(queries.get_memory(tenant=tenant, id=id, now=now,
                                                            as_of=as_of))
        if not records:
            when = f" as of {as_of.isoformat()}" if as_of else ""
            raise NotFound(f"no memory {id} in namespace {tenant.namespace}{when}", id=id)
        return memory_from_properties(records[0]["m"])

    async def history(self, *, tenant: Tenant, id: str, now: datetime,
                      limit: int = 100) -> list[MemoryVersion]:
        """Its versions, newest first, each with its system-time window (graph.history)."""
        return await read_history(self.client, tenant=tenant, id=id, now=now, limit=limit)

    async def embeddings(self, *, tenant: Tenant, ids: Sequence[str]) -> dict[str, list[float]]:
        records = await self.client.read(queries.get_embeddings(tenant=tenant, ids=list(ids)))
        return {r["id"]: r["embedding"] for r in records if r["embedding"] is not None}

    async def list(self, flt: MemoryFilter, *, tenant: Tenant, now: datetime,
                   window: Window) -> Page:
        """The page of the filter's memories `window` asks for (graph.cursors)."""
        flt = fenced(flt, tenant)
        records = await self.client.read(
            queries.list_memories(flt, tenant=tenant, now=now, window=window))
        record = records[0]
        # A node deleted by a concurrent transaction while this read ran is not listed.
        rows = [memory_from_properties(p) for p in record["page"] if exists(p)]
        return page_of(rows, total=int(record["total"]), asked=window,
                       beyond=bool(record["beyond"]))

    async def search(
        self, flt: MemoryFilter, *, tenant: Tenant, now: datetime,
        vector: builtins.list[float] | None, lucene: str | None, candidates: int,
        expansion: ExpansionConfig | None,
        with_embeddings: bool, needed: int = 10, space: VectorSpace | None = None,
        first_try: bool = False, context_hops: int = 0, cross_similarity: bool = False,
        entities: bool = False, leads: bool = False,
        properties: frozenset[str] | None = None,
    ) -> SearchResult:
        """One recall round trip (graph.recall_query); `first_try` marks a small pool
        whose shortfall the caller answers with a second, full search; `properties`:
        the ones each candidate carries (None: all)."""
        if vector is None and lucene is None:
            return SearchResult()
        flt = fenced(flt, tenant)
        records = await self.client.read(recall_query.search(
            flt, tenant=tenant, now=now, vector=vector, lucene=lucene, candidates=candidates,
            expansion=expansion, with_embeddings=with_embeddings, needed=needed, space=space,
            first_try=first_try, context_hops=context_hops, cross_similarity=cross_similarity,
            entities=entities, leads=leads, properties=properties,
        ))
        return search_result(records[0])

    async def bump_access(self, rows: builtins.list[dict[str, Any]], *, now: datetime) -> None:
        await self.client.write(queries.bump_access(namespace_counts=rows, now=now))

    # ------------------------------------------------------------ edges and audit

    async def add_edges(
        self, *, tenant: Tenant, edges: Sequence[tuple[str, str, EdgeType, object]],
        actor: str, now: datetime,
    ) -> builtins.list[Edge]:
        """Add (source, target, type, metadata) relationships atomically: all or none."""
        tenant.require_write()
        if not edges:
            raise ValidationError("no relationships to add")
        rows = edge_queries.edge_rows(edges)
        wanted = {(r["source"], r["target"], r["type"]) for r in rows}
        successions = [{"source": r["source"], "target": r["target"]} for r in rows
                       if r["type"] == EdgeType.SUPERSEDES.value]

        async def work(tx: AsyncManagedTransaction) -> list[Edge]:
            records = await run(tx, edge_queries.add_edges(rows, tenant=tenant, actor=actor,
                                                   now=now))
            if successions:
                await refuse_supersedes_cycle(tx, successions)
            made = [edge_from_record(r["r"], r["type"], r["source"], r["target"])
                    for r in records]
            missing = wanted - {(e.source_id, e.target_id, e.type.value) for e in made}
            if missing:
                ids = sorted({i for source, target, _ in missing for i in (source, target)})
                raise NotFound(
                    f"{len(missing)} relationship(s) name memories that do not exist in"
                    f" namespace {tenant.namespace}; nothing was added", ids=ids[:20],
                )
            return made

        return await self.client.transaction(work)

    async def edges(
        self, *, tenant: Tenant, id: str, types: Sequence[EdgeType], direction: Direction,
        now: datetime,
    ) -> builtins.list[Edge]:
        await self.get(tenant=tenant, id=id, now=now)
        records = await self.client.read(edge_queries.list_edges(
            tenant=tenant, id=id, types=list(types or EdgeType), direction=direction,
            now=now,
        ))
        return [edge_from_record(r["r"], r["type"], r["source"], r["target"]) for r in records]

    async def delete_edge(self, *, tenant: Tenant, edge_id: str, actor: str,
                          now: datetime) -> None:
        tenant.require_write()
        records = await self.client.write(edge_queries.delete_edge(
            tenant=tenant, edge_id=edge_id, actor=actor, now=now, audit_id=new_id()
        ))
        if not records:
            raise NotFound(f"no relationship {edge_id} in namespace {tenant.namespace}",
                           id=edge_id)

    async def audit_trail(self, *, tenant: Tenant, id: str) -> builtins.list[AuditEntry]:
        records = await self.client.read(audit_trail(tenant=tenant, id=id))
        if not records:
            raise NotFound(f"no audit trail for {id} in namespace {tenant.namespace}", id=id)
        return [audit_from_properties(r["a"], r["hidden"]) for r in records]

    # ------------------------------------------------------------ helpers

    async def _locked(
        self, tx: AsyncManagedTransaction, *, tenant: Tenant, id: str, now: datetime
    ) -> Memory:
        records = await run(tx, queries.lock_memory(tenant=tenant, id=id, now=now))
        if not records:
            raise NotFound(f"no memory {id} in namespace {tenant.namespace}", id=id)
        return memory_from_properties(records[0]["m"])
