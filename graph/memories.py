"""The memory graph's operations: what the service asks of Neo4j.

Each public method is one business operation and, wherever the logic allows,
one round trip. Read-check-write operations (update, supersede) run in one
managed transaction that first takes the node's write lock, so concurrent
callers serialise on the node and exactly one of two racing writers wins.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import uuid_utils
from neo4j import AsyncManagedTransaction

from memlattice.core.auth import Tenant
from memlattice.core.errors import (
    Conflict,
    EpisodicImmutable,
    Forbidden,
    NotFound,
    ValidationError,
    VersionConflict,
)
from memlattice.core.json_values import json_problem
from memlattice.core.lucene import all_terms
from memlattice.core.model import (
    Direction,
    EdgeType,
    ForgetPredicate,
    MemoryFilter,
    MemoryInput,
    MemoryPatch,
    Status,
    camel,
    utcnow,
)
from memlattice.core.records.payloads import TYPED_MEMORY_TYPES
from memlattice.core.search_config import ExpansionConfig
from memlattice.core.times import to_utc
from memlattice.core.vector_spaces import VectorSpace
from memlattice.graph import conversations, queries, recall_query
from memlattice.graph.client import GraphClient, run
from memlattice.graph.codec import (
    MEMORY_TIMES,
    META_PREFIX,
    AuditEntry,
    Edge,
    Memory,
    audit_from_properties,
    canonical_json,
    edge_from_record,
    epoch_parts,
    memory_from_properties,
    memory_properties,
    meta_properties,
    patch_properties,
)
from memlattice.graph.history import MemoryVersion, read_history


def new_id() -> str:
    """UUIDv7: time-ordered, so ids sort roughly by creation."""
    return str(uuid_utils.uuid7())


@dataclass(frozen=True)
class PreparedMemory:
    """A validated input plus what the service resolved for it (id, time, vector)."""

    input: MemoryInput
    id: str
    now: datetime
    embedding: list[float] | None
    embedding_model: str | None
    # When what it tells of happened (memlattice.core.event_time), if its text says.
    event_start: datetime | None = None
    event_end: datetime | None = None


@dataclass(frozen=True)
class Page:
    items: list[Memory]
    total: int
    has_next: bool
    end_cursor: str | None


@dataclass(frozen=True)
class Found:
    """A candidate from one index, with its raw index score.

    It keeps the raw property map: most candidates are ranked and dropped, so
    only the hits that are returned become `Memory` objects.
    """

    props: Mapping[str, Any]
    score: float
    # The cosine to the query of a lexical candidate, when the search asked for it.
    similarity: float | None = None
    # (hops away, content) of its neighbours along NEXT, when the search asked for them.
    context: tuple[tuple[int, str], ...] = ()

    @property
    def id(self) -> str:
        return str(self.props["id"])

    @property
    def embedding(self) -> list[float] | None:
        """Present only when the search asked for vectors (MMR)."""
        return self.props.get("embedding")


@dataclass(frozen=True)
class Reached:
    """A memory reached from candidate `seed` along `path` ((type, source, target) steps)."""

    seed: str
    props: Mapping[str, Any]
    similarity: float | None
    path: tuple[tuple[str, str, str], ...]
    context: tuple[tuple[int, str], ...] = ()

    @property
    def id(self) -> str:
        return str(self.props["id"])

    @property
    def embedding(self) -> list[float] | None:
        return self.props.get("embedding")


@dataclass(frozen=True)
class SearchResult:
    semantic: list[Found] = field(default_factory=list)
    lexical: list[Found] = field(default_factory=list)
    # The NEXT neighbours of both lists' candidates (no index score of their own).
    adjacent: list[Found] = field(default_factory=list)
    reached: list[Reached] = field(default_factory=list)
    conflicts: dict[str, list[Memory]] = field(default_factory=dict)


def encode_cursor(memory: Memory) -> str:
    raw = json.dumps([memory.created_at.isoformat(), memory.id])
    return base64.urlsafe_b64encode(raw.encode()).decode()


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """The (createdAt in UTC, id) a cursor stands for; VALIDATION for anything else,
    a hand-made cursor whose time UTC cannot hold included (`times.OutOfRange`)."""
    try:
        created, id = json.loads(base64.urlsafe_b64decode(cursor.encode()).decode())
        return to_utc(datetime.fromisoformat(created)), str(id)
    except (ValueError, TypeError, RecursionError) as exc:
        raise ValidationError("after is not a cursor this API returned", field="after") from exc


class MemoryGraph:
    """Memories, their relationships and audit trail, in one Neo4j database."""

    def __init__(self, client: GraphClient) -> None:
        self.client = client

    # ------------------------------------------------------------ writes

    async def create(
        self, memories: Sequence[PreparedMemory], *, tenant: Tenant, actor: str
    ) -> list[Memory]:
        """Create a batch atomically: all of it or, on any conflict, none of it."""
        for m in memories:
            tenant.check_record(namespace=m.input.namespace, scope=m.input.scope,
                                sensitivity=m.input.sensitivity)
        ids = [m.id for m in memories]
        if len(set(ids)) != len(ids):
            raise Conflict("the batch names the same id twice")
        written = [
            memory_properties(m.input, id=m.id, now=m.now, embedding=m.embedding,
                              embedding_model=m.embedding_model, event=(m.event_start, m.event_end))
            for m in memories
        ]
        rows = [
            {
                "props": {k: v for k, v in props.items() if k not in MEMORY_TIMES},
                "times": [epoch_parts(props.get(name)) for name in MEMORY_TIMES],
                "auditId": new_id(),
            }
            for props in written
        ]
        try:
            await self.client.write(
                queries.create_memories(rows, tenant=tenant, actor=actor)
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
        actor: str,
    ) -> tuple[list[Memory], list[Memory]]:
        """Write the turns the namespace does not hold yet and join every turn of
        `turn_ids` (in order) to its session, its neighbours and its speaker, in
        one transaction: (every turn as stored, the turns this call wrote)."""
        for m in memories:
            tenant.check_record(namespace=m.input.namespace, scope=m.input.scope,
                                sensitivity=m.input.sensitivity)
        times = {m.id: m.now for m in memories}
        now = max(times.values(), default=None) or utcnow()

        async def work(tx: AsyncManagedTransaction) -> tuple[list[Memory], list[Memory]]:
            known = {str(r["id"]) for r in await run(tx, conversations.existing(
                namespace, turn_ids))}
            fresh = [m for m in memories if m.id not in known]
            written = [memory_from_properties(p) for p in await self._create_in(tx, fresh, actor,
                                                                             tenant)]
            await run(tx, conversations.link_session(
                namespace=namespace, session=session, now=utcnow(), turns=[
                    {"id": id, "at": times.get(id, now),
                     "speakerKey": speaker[0] if speaker else None,
                     "speakerName": speaker[1] if speaker else None}
                    for id, speaker in zip(turn_ids, speakers)]))
            rows = await run(tx, conversations.turns(tenant=tenant, ids=turn_ids))
            by_id = {str(r["m"]["id"]): memory_from_properties(r["m"]) for r in rows}
            return [by_id[i] for i in turn_ids if i in by_id], written

        return await self.client.transaction(work)

    async def _create_in(self, tx: AsyncManagedTransaction, memories: Sequence[PreparedMemory],
                         actor: str, tenant: Tenant) -> list[dict[str, Any]]:
        """`create`'s write, inside a caller's transaction; the properties written."""
        written = [
            memory_properties(m.input, id=m.id, now=m.now, embedding=m.embedding,
                              embedding_model=m.embedding_model, event=(m.event_start, m.event_end))
            for m in memories
        ]
        if written:
            await run(tx, queries.create_memories([
                {"props": {k: v for k, v in props.items() if k not in MEMORY_TIMES},
                 "times": [epoch_parts(props.get(name)) for name in MEMORY_TIMES],
                 "auditId": new_id()}
                for props in written], tenant=tenant, actor=actor))
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
            _check_version(current, expected_version)
            if current.status is not Status.ACTIVE:
                raise Conflict(f"memory {id} is {current.status.value} and cannot be updated")
            props = patch_properties(changes)
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
                audit_id=new_id(), details=details,
            ))
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
            _check_version(old, expected_version)
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
        conditions: list[str] = []
        params: dict[str, Any] = {}
        if predicate.contains is not None:
            conditions.append(
                "(toLower(m.content) CONTAINS $contains OR toLower(coalesce(m.key, ''))"
                " CONTAINS $contains OR any(t IN m.tags WHERE toLower(t) CONTAINS $contains))"
            )
            params["contains"] = predicate.contains.lower()
        if predicate.id is not None:
            conditions.append("m.id = $id")
            params["id"] = predicate.id
        if predicate.key is not None:
            conditions.append("m.key = $key")
            params["key"] = predicate.key
        tags = ([predicate.tag] if predicate.tag is not None else []) + list(predicate.tags or ())
        if tags:
            conditions.append("all(t IN $tags WHERE t IN m.tags)")
            params["tags"] = tags
        lucene = all_terms(predicate.query) if predicate.query is not None else None
        records = await self.client.write(queries.forget_memories(
            tenant=tenant, now=now, actor=actor, conditions=conditions, params=params,
            fulltext=lucene,
        ))
        return [r["id"] for r in records]

    async def delete(self, *, tenant: Tenant, id: str, actor: str, now: datetime) -> None:
        tenant.require_write()
        records = await self.client.write(queries.delete_memory(
            tenant=tenant, id=id, actor=actor, now=now, audit_id=new_id()
        ))
        if not records:
            raise NotFound(f"no memory {id} in namespace {tenant.namespace}", id=id)

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

    async def list(
        self, flt: MemoryFilter, *, tenant: Tenant, now: datetime, first: int,
        after: str | None,
    ) -> Page:
        flt = _fenced(flt, tenant)
        cursor = decode_cursor(after) if after else None
        records = await self.client.read(
            queries.list_memories(flt, tenant=tenant, now=now, first=first, after=cursor)
        )
        record = records[0]
        # A node deleted by a concurrent transaction while this read ran reads as
        # a map without properties: it is gone, so it is not listed.
        items = [memory_from_properties(p) for p in record["page"] if _exists(p)]
        has_next = len(items) > first
        items = items[:first]
        return Page(
            items=items,
            total=int(record["total"]),
            has_next=has_next,
            end_cursor=encode_cursor(items[-1]) if items else None,
        )

    async def search(
        self, flt: MemoryFilter, *, tenant: Tenant, now: datetime, vector: list[float] | None,
        lucene: str | None, candidates: int, expansion: ExpansionConfig | None,
        with_embeddings: bool, needed: int = 10, space: VectorSpace | None = None,
        first_try: bool = False, context_hops: int = 0, cross_similarity: bool = False,
    ) -> SearchResult:
        """One recall round trip (graph.recall_query); `first_try` marks a small pool
        whose shortfall the caller answers with a second, full search."""
        if vector is None and lucene is None:
            return SearchResult()
        flt = _fenced(flt, tenant)
        records = await self.client.read(recall_query.search(
            flt, tenant=tenant, now=now, vector=vector, lucene=lucene, candidates=candidates,
            expansion=expansion, with_embeddings=with_embeddings, needed=needed, space=space,
            first_try=first_try, context_hops=context_hops, cross_similarity=cross_similarity,
        ))
        record = records[0]
        keys = set(record.keys())
        # Each row carries the CONTRADICTS neighbours its caller may see.
        conflicts: dict[str, list[Memory]] = {}

        def note_conflicts(x: Mapping[str, Any]) -> None:
            seen = conflicts.setdefault(x["m"]["id"], [])
            known = {m.id for m in seen}
            for c in x["conflicts"]:
                if _exists(c) and c["id"] not in known:
                    seen.append(memory_from_properties(c))
                    known.add(c["id"])

        def found(key: str) -> list[Found]:
            if key not in keys:
                return []
            rows = [x for x in record[key] if _exists(x["m"])]
            for x in rows:
                note_conflicts(x)
            return [Found(x["m"], float(x.get("score") or 0.0), similarity=x.get("similarity"),
                          context=_context(x)) for x in rows]

        reached: list[Reached] = []
        if "expanded" in keys:
            for entry in record["expanded"]:
                for x in entry["reached"]:
                    # A node or relationship deleted by a concurrent commit reads as nulls.
                    if not _exists(x["m"]) or any(step["type"] is None for step in x["path"]):
                        continue
                    note_conflicts(x)
                    reached.append(Reached(
                        seed=entry["seed"], props=x["m"],
                        similarity=x["similarity"],
                        path=tuple((step["type"], step["source"], step["target"])
                                   for step in x["path"]),
                        context=_context(x),
                    ))
        semantic, lexical = found("semantic"), found("lexical")
        return SearchResult(semantic=semantic, lexical=lexical, adjacent=found("adjacent"),
                            reached=reached,
                            conflicts={k: sorted(v, key=lambda m: m.id)
                                       for k, v in conflicts.items() if v})

    async def bump_access(self, rows: list[dict[str, Any]], *, now: datetime) -> None:
        await self.client.write(queries.bump_access(namespace_counts=rows, now=now))

    # ------------------------------------------------------------ edges and audit

    async def add_edges(
        self, *, tenant: Tenant, edges: Sequence[tuple[str, str, EdgeType, Mapping[str, Any]]],
        actor: str, now: datetime,
    ) -> list[Edge]:
        """Add (source, target, type, metadata) relationships atomically: all or none."""
        tenant.require_write()
        if not edges:
            raise ValidationError("no relationships to add")
        rows = []
        for source, target, type, metadata in edges:
            if not isinstance(metadata, Mapping):
                raise ValidationError("relationship metadata must be a JSON object",
                                      field="metadata")
            bad = json_problem(dict(metadata))
            if bad is not None:
                raise ValidationError(f"relationship metadata holds {bad}", field="metadata")
            if source == target:
                raise ValidationError(f"memory {source} cannot be related to itself",
                                      field="target")
            rows.append({"source": source, "target": target, "type": type.value,
                         "edgeId": new_id(), "metadataJson": canonical_json(dict(metadata)),
                         "auditId": new_id()})
        wanted = {(r["source"], r["target"], r["type"]) for r in rows}
        successions = [{"source": r["source"], "target": r["target"]} for r in rows
                       if r["type"] == EdgeType.SUPERSEDES.value]

        async def work(tx: AsyncManagedTransaction) -> list[Edge]:
            records = await run(tx, queries.add_edges(rows, tenant=tenant, actor=actor,
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
    ) -> list[Edge]:
        await self.get(tenant=tenant, id=id, now=now)
        records = await self.client.read(queries.list_edges(
            tenant=tenant, id=id, types=list(types or EdgeType), direction=direction,
            now=now,
        ))
        return [edge_from_record(r["r"], r["type"], r["source"], r["target"]) for r in records]

    async def delete_edge(self, *, tenant: Tenant, edge_id: str, actor: str,
                          now: datetime) -> None:
        tenant.require_write()
        records = await self.client.write(queries.delete_edge(
            tenant=tenant, edge_id=edge_id, actor=actor, now=now, audit_id=new_id()
        ))
        if not records:
            raise NotFound(f"no relationship {edge_id} in namespace {tenant.namespace}",
                           id=edge_id)

    async def audit_trail(self, *, tenant: Tenant, id: str) -> list[AuditEntry]:
        records = await self.client.read(queries.audit_trail(tenant=tenant, id=id))
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


async def refuse_supersedes_cycle(tx: AsyncManagedTransaction,
                                  pairs: list[dict[str, str]]) -> None:
    """Succession is a history: a SUPERSEDES cycle would make a memory its own
    successor. Checked after the write, in its transaction, so the refusal
    (CONFLICT, reason SUPERSEDES_CYCLE) rolls the whole batch back."""
    await run(tx, queries.lock_supersedes_chains(pairs))
    found = await run(tx, queries.supersedes_cycle(pairs))
    if found:
        cycle = list(found[0]["cycle"])
        raise Conflict(
            "these SUPERSEDES relationships would make a cycle ("
            + " -> ".join(cycle) + f" -> {cycle[0]}); nothing was added",
            reason="SUPERSEDES_CYCLE", cycle=cycle[:20])


def refuse_episodic(current: Memory, verb: str) -> None:
    """Episodic records are immutable: every revision of one fails the same way."""
    if current.memory_type == "episodic":
        raise EpisodicImmutable(
            f"memory {current.id} is an episodic record and cannot be {verb}; episodes are"
            " immutable (write a new record instead)", id=current.id,
        )


def refuse_typed_text(current: Memory, changes: dict[str, Any]) -> None:
    """A record's text and value follow its payload, a fact's claim is its identity:
    the plain `updateMemory` may retag or re-weigh them, not rewrite them."""
    if current.memory_type not in TYPED_MEMORY_TYPES:
        return
    touched = sorted(f for f in ("content", "value", "embedding") if f in changes)
    if not touched:
        return
    if current.memory_type == "fact":
        how = ("a fact's claim is its identity: store the new claim with storeFact"
               " (and invalidateFacts the old one)")
    else:
        how = "change the payload with updateRecord, or replace it with supersedeRecord"
    raise ValidationError(
        f"memory {current.id} is a {current.memory_type} record whose {', '.join(touched)}"
        f" updateMemory may not change; {how}", id=current.id, fields=touched)


def refuse_typed_supersede(old: Memory) -> None:
    """A plain memory must not replace a typed record or fact (its successor would
    carry no label, payload or evidence)."""
    if old.memory_type in TYPED_MEMORY_TYPES:
        raise ValidationError(
            f"memory {old.id} is a {old.memory_type} record; supersede it with"
            " supersedeRecord, whose successor is validated like the original",
            id=old.id, field="id")


def _fenced(flt: MemoryFilter, tenant: Tenant) -> MemoryFilter:
    """A filter of the tenant's own namespace, its scope chain clipped to the key's maximum.

    An explicit scope above the maximum is refused; the broader levels a scope
    chain would add on its own are dropped silently.
    """
    if flt.namespace != tenant.namespace:
        raise Forbidden(f"the filter names namespace {flt.namespace}, not the authorised"
                        f" {tenant.namespace}")
    if flt.scope is not None:
        tenant.check_scope(flt.scope)
    if flt.scope_keys is not None and tenant.scopes is not None:
        return flt.model_copy(update={"scope_keys": tenant.clip_scope_keys(flt.scope_keys)})
    return flt


def _context(row: Mapping[str, Any]) -> tuple[tuple[int, str], ...]:
    return tuple((int(c["hop"]), str(c["content"] or "")) for c in row.get("context") or ())


def _exists(props: Mapping[str, Any]) -> bool:
    """False for the property map of a node a concurrent transaction deleted."""
    return props.get("id") is not None


def _check_version(current: Memory, expected: int | None) -> None:
    if expected is not None and current.version != expected:
        raise VersionConflict(
            f"memory {current.id} is at version {current.version}, not {expected};"
            " re-read it and retry",
            expected=expected, actual=current.version,
        )


class EmbeddingCacheGraph:
    """The persistent half of the embedding cache (see memlattice.embeddings.cache)."""

    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def get_many(self, model: str, digests: Sequence[str]) -> dict[str, list[float]]:
        if not digests:
            return {}
        records = await self.client.read(queries.cache_get(model=model, digests=list(digests)))
        return {r["digest"]: list(r["vector"]) for r in records}

    async def put_many(self, model: str, items: Mapping[str, list[float]]) -> None:
        if items:
            await self.client.write(queries.cache_put(
                model=model, items=[{"digest": d, "vector": v} for d, v in items.items()]
            ))


@dataclass(frozen=True)
class NamespaceConfig:
    namespace: str
    version: int
    settings: dict[str, Any]
    updated_at: datetime
    updated_by: str


def _namespace_config(props: Mapping[str, Any]) -> NamespaceConfig:
    updated = props["updatedAt"]
    return NamespaceConfig(
        namespace=props["namespace"], version=int(props["version"]),
        settings=json.loads(props["settingsJson"]),
        updated_at=updated.to_native() if hasattr(updated, "to_native") else updated,
        updated_by=props.get("updatedBy", ""),
    )


class NamespaceConfigGraph:
    """Per-namespace search defaults, one node per namespace."""

    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def put(self, *, namespace: str, settings: Mapping[str, Any], actor: str,
                  now: datetime) -> NamespaceConfig:
        records = await self.client.write(queries.configure_namespace(
            namespace=namespace, settings_json=canonical_json(dict(settings)), actor=actor,
            now=now,
        ))
        return _namespace_config(records[0]["c"])

    async def get(self, *, namespace: str) -> NamespaceConfig | None:
        records = await self.client.read(queries.get_namespace_config(namespace=namespace))
        return _namespace_config(records[0]["c"]) if records else None
