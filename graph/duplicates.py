"""Writing plain memories without storing the same one twice (core.duplicates decides).

One managed transaction per writeMemory/writeMemories call:

0. ids: an input that names its own id is stored under it, answered with the
   memory that already holds it (a retry of the same write) or refused
   (graph.explicit_ids); it is never deduplicated against another memory.
1. lock: the write takes, in sorted order, the `(:DuplicateLock)` stripes its
   contents hash to (a uniquely keyed node per namespace and stripe, merged
   then written). Two concurrent writes of the same content serialise here, so
   the second one's look-up sees the first one's commit and reinforces it:
   both end with one memory. Writes of different contents rarely share a
   stripe, and a namespace never holds more than STRIPES lock nodes.
2. look up: an index seek on `(namespace, contentHash)` (migration 21) for the
   oldest active, unexpired memory the caller may see with the write's identity
   (`DuplicateIdentity`); a memory outside the caller's clearance or scopes is
   never matched, so its existence is not revealed (a new memory is written).
3. reinforce the memories found (`core.duplicates.reinforcement`, a revision
   kept and a `reinforce` audit entry, as a fact's reinforcement does), create
   the rest, each once however often the batch repeats it.
4. near-duplicates of the memories created: their nearest neighbours in the
   same namespace and scope, by the primary vector index, which
   `core.duplicates.near_duplicates` turns into hints (reported, not linked);
   skipped for a batch that creates more than MAX_NEAR_DUPLICATE_CHECKS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction

from memlattice.core.auth import Tenant
from memlattice.core.duplicates import (
    DuplicateIdentity,
    Kept,
    WritePlan,
    content_hash,
    identity_of,
    kept_of,
    near_duplicates,
    plan_writes,
    reinforcement,
)
from memlattice.core.errors import Conflict
from memlattice.core.judge_queue import WriterView
from memlattice.core.model import WriteEffect, utcnow
from memlattice.core.records.hints import Claim, Hint
from memlattice.graph import queries
from memlattice.graph.audit_queries import audit_entry
from memlattice.graph.client import GraphClient, Query, run
from memlattice.graph.codec import (
    Memory,
    memory_from_properties,
    memory_properties,
)
from memlattice.graph.explicit_ids import IdTaken, claim_ids, refuse_repeated_ids
from memlattice.graph.identity_clauses import SAME_IDENTITY
from memlattice.graph.indexes import VECTOR_INDEX
from memlattice.graph.prepared_memory import PreparedMemory, creation_rows, new_id
from memlattice.graph.projections import project
from memlattice.graph.revision_clauses import monotonic, snapshot
from memlattice.graph.updates.store import detect_in, written_of
from memlattice.graph.visibility import owned, tenant_visible

LOCK = "DuplicateLock"
STRIPES = 256
# Nearest neighbours asked of the vector index per new memory, before scope and
# clearance filter them.
NEIGHBOURS = 5
# A batch that creates more memories than this (a bulk load) is not checked for
# near-duplicates: each check is a vector search, about 6 ms on a busy shared index,
# which would make a 500-memory batch five times slower (3.1 s against 0.6 s).
MAX_NEAR_DUPLICATE_CHECKS = 64
BACKFILL_BATCH = 5000


@dataclass(frozen=True)
class WriteOutcome:
    """One input's result: the memory it wrote or reinforced, the memory it duplicated
    (None when this input created it) and the near-duplicates of a created one."""

    memory: Memory
    duplicate_of: str | None = None
    near_duplicates: tuple[Hint, ...] = ()
    written: WriteEffect = WriteEffect.CREATED


def lock_key(namespace: str, hash: str) -> str:
    return f"{namespace}|{int(hash[:8], 16) % STRIPES}"


def lock_stripes(namespace: str, keys: Sequence[str], now: datetime) -> Query:
    """Merge and write-lock the stripes (sorted: concurrent batches lock in one order)."""
    query = (
        "CYPHER 25\n"
        "UNWIND $keys AS key\n"
        f"MERGE (l:{LOCK} {{key: key}})\n"
        "ON CREATE SET l.namespace = $namespace\n"
        "SET l.heldAt = $now"
    )
    return query, {"keys": sorted(set(keys)), "now": now, "namespace": namespace}


def find_duplicates(rows: list[dict[str, Any]], *, tenant: Tenant, now: datetime) -> Query:
    """Per row (`{group, ...DuplicateIdentity.params()}`), the oldest active memory the
    tenant may see with that identity, locked, with what a reinforcement changes."""
    query = (
        "CYPHER 25\n"
        "UNWIND $rows AS row\n"
        "CALL (row) {\n"
        # The hint keeps the planner from splitting the expiry test into an index scan.
        "  MATCH (m:Memory) USING INDEX m:Memory(namespace, contentHash)\n"
        "  WHERE m.namespace = $namespace AND m.contentHash = row.contentHash\n"
        f"    AND m.status = 'active' AND {tenant_visible()} AND {SAME_IDENTITY}\n"
        "  WITH m ORDER BY m.createdAt, m.id LIMIT 1\n"
        "  SET m.`_lock` = true REMOVE m.`_lock`\n"
        "  WITH m WHERE m.status = 'active'\n"
        "  RETURN m\n"
        "}\n"
        "RETURN row.group AS group, m.id AS id, coalesce(m.tags, []) AS tags,"
        " m.confidence AS confidence, m.salience AS salience, m.expiresAt AS expiresAt"
    )
    return query, {**tenant.params(), "rows": rows, "now": now}


def reinforce_memories(rows: list[dict[str, Any]], *, tenant: Tenant, actor: str,
                       now: datetime) -> Query:
    """Apply each row's reinforcement (`{id, count, tags, confidence, salience, expiresAt,
    auditId}`) to its locked memory; a revision keeps the state before (graph.history)."""
    query = (
        "CYPHER 25\n"
        "UNWIND $rows AS row\n"
        f"MATCH (m:Memory {{id: row.id}}) WHERE {owned()}\n"
        + snapshot("m")
        + "SET m.tags = row.tags, m.confidence = row.confidence, m.salience = row.salience,\n"
        "    m.expiresAt = row.expiresAt,\n"
        "    m.reinforcements = coalesce(m.reinforcements, 0) + row.count,\n"
        "    m.lastReinforcedAt = CASE WHEN m.lastReinforcedAt > $now THEN m.lastReinforcedAt"
        " ELSE $now END,\n"
        f"    m.version = m.version + 1, m.updatedAt = {monotonic()}\n"
        "WITH m, row\n"
        + audit_entry("row.auditId", "m.id", "'reinforce'", "m.version", "row.details")
        + f"\nRETURN {project()} AS m"
    )
    return query, {**tenant.params(), "rows": rows, "actor": actor, "now": now}


def nearest(rows: list[dict[str, Any]], *, tenant: Tenant, now: datetime,
            exclude: list[str]) -> Query:
    """Per new memory (`{id, vector, scopeKey, ...identity}`), its nearest active
    neighbours in its namespace and scope that the tenant may see, with their cosine."""
    query = (
        "CYPHER 25\n"
        "UNWIND $rows AS row\n"
        "CALL (row) {\n"
        "  MATCH (m:Memory)\n"
        f"    SEARCH m IN (VECTOR INDEX {VECTOR_INDEX} FOR row.vector"
        " WHERE m.namespace = $namespace AND m.status = 'active' AND m.scopeKey = row.scopeKey"
        " LIMIT $neighbours) SCORE AS score\n"
        f"  WITH m WHERE NOT m.id IN $exclude AND {tenant_visible()}\n"
        "    AND ((m.scope IS NULL AND row.scope IS NULL) OR m.scope = row.scope)\n"
        + "".join(f"    AND ((m.{p} IS NULL AND row.{p} IS NULL) OR m.{p} = row.{p})\n"
                  for p in ("agentId", "userId", "sessionId", "taskId"))
        + "    AND size(m.embedding) = size(row.vector)\n"
        "  RETURN m.id AS other, m.content AS text,"
        " 2 * vector.similarity.cosine(m.embedding, row.vector) - 1 AS similarity\n"
        "}\n"
        "RETURN row.id AS id, other, text, similarity"
    )
    return query, {**tenant.params(), "rows": rows, "now": now, "exclude": exclude,
                   "neighbours": NEIGHBOURS}


def _details(count: int) -> str:
    return f'{{"repeats":{count}}}'


class DuplicateGraph:
    """The deduplicating write of plain memories (see the module docstring)."""

    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def create_or_reinforce(
        self, memories: Sequence[PreparedMemory], *, allow_duplicate: Sequence[bool],
        tenant: Tenant, actor: str, auto_supersede: float | None = None,
        judge: WriterView | None = None,
    ) -> list[WriteOutcome]:
        """One outcome per input, in order, all in one transaction (which marks the new
        memories for the update judge, with `judge`: the writer's view)."""
        for m in memories:
            tenant.check_record(namespace=m.input.namespace, scope=m.input.scope,
                                sensitivity=m.input.sensitivity)
        plan = plan_writes([m.input for m in memories], allow_duplicate)
        named = set(plan.named)
        refuse_repeated_ids([m.id if i in named else None for i, m in enumerate(memories)])
        now = max(m.now for m in memories)

        async def work(tx: AsyncManagedTransaction) -> list[WriteOutcome]:
            return await self._write_in(tx, memories, plan, tenant=tenant, actor=actor, now=now,
                                        auto_supersede=auto_supersede, judge=judge)

        try:
            return await self.client.transaction(work)
        except Conflict as exc:
            if exc.code != "CONFLICT" or isinstance(exc, IdTaken) or "same id twice" in exc.message:
                raise
            if plan.named:  # a concurrent write took a named id first: judge it again
                try:
                    return await self.client.transaction(work)
                except IdTaken:
                    raise
                except Conflict:
                    pass
            raise Conflict("a memory with one of these ids already exists; ids are unique",
                           ids=[m.id for m in memories][:20]) from exc

    async def _write_in(
        self, tx: AsyncManagedTransaction, memories: Sequence[PreparedMemory], plan: WritePlan,
        *, tenant: Tenant, actor: str, now: datetime, auto_supersede: float | None = None,
        judge: WriterView | None = None,
    ) -> list[WriteOutcome]:
        # Expiry is judged by the clock, even when the caller replays an older `now`.
        clock = utcnow()
        unchanged = await claim_ids(tx, memories, plan.named, tenant=tenant)
        deduped = [list(g) for g in plan.deduped]
        found = await self._find(tx, memories, deduped, tenant=tenant, clock=clock)
        outcomes = await self._reinforce(tx, memories, [g for g in deduped if g[0] in found],
                                         found, tenant=tenant, actor=actor, now=now)
        outcomes.update({i: WriteOutcome(m, written=WriteEffect.UNCHANGED)
                         for i, m in unchanged.items()})
        # A new named memory takes in the batch's unnamed writes of its identity.
        named = {i: [i] for i in plan.named if i not in unchanged}
        joins: dict[DuplicateIdentity, int] = {}
        for i in named:
            joins.setdefault(identity_of(memories[i].input), i)
        rest: list[list[int]] = []
        for group in (g for g in deduped if g[0] not in found):
            target = joins.get(identity_of(memories[group[0]].input))
            if target is None:
                rest.append(group)
            else:
                named[target].extend(group)
        created = [(group, _folded(memories, group)) for group in
                   [*named.values(), *([i] for i in plan.fresh), *rest]]
        ids = [str(props["id"]) for _, props in created]
        if len(set(ids)) != len(ids):
            raise Conflict("the batch names the same id twice")
        if created:
            await run(tx, queries.create_memories(creation_rows([p for _, p in created]),
                                                  tenant=tenant, actor=actor))
        hints = await self._near_duplicates(tx, memories, created, tenant=tenant, now=clock)
        # What the new memories state, linked to what was stated before (graph.updates).
        await detect_in(tx, written_of([memories[group[0]] for group, _ in created]),
                        tenant=tenant, now=now, auto_supersede=auto_supersede, actor=actor,
                        judge=judge)
        for group, props in created:
            memory = memory_from_properties(props)
            outcomes[group[0]] = WriteOutcome(memory, near_duplicates=tuple(
                hints.get(memory.id, ())))
            for i in group[1:]:
                outcomes[i] = WriteOutcome(memory, duplicate_of=memory.id,
                                           written=WriteEffect.REINFORCED)
        return [outcomes[i] for i in range(len(memories))]

    async def _find(
        self, tx: AsyncManagedTransaction, memories: Sequence[PreparedMemory],
        deduped: list[list[int]], *, tenant: Tenant, clock: datetime,
    ) -> dict[int, Any]:
        """Lock the groups' stripes, then find the memory each group repeats (by the
        group's first position)."""
        if not deduped:
            return {}
        identities = {g[0]: identity_of(memories[g[0]].input) for g in deduped}
        await run(tx, lock_stripes(tenant.namespace, [
            lock_key(tenant.namespace, identity.content_hash)
            for identity in identities.values()], clock))
        rows = await run(tx, find_duplicates(
            [{"group": first, **identity.params()} for first, identity in identities.items()],
            tenant=tenant, now=clock))
        return {int(r["group"]): r for r in rows if r["id"] is not None}

    async def _reinforce(
        self, tx: AsyncManagedTransaction, memories: Sequence[PreparedMemory],
        repeating: list[list[int]], found: dict[int, Any], *, tenant: Tenant, actor: str,
        now: datetime,
    ) -> dict[int, WriteOutcome]:
        """Reinforce each existing memory once per input of its group that repeats it."""
        if not repeating:
            return {}
        rows = []
        for group in repeating:
            row = found[group[0]]
            kept = reinforcement(Kept(
                tags=tuple(row["tags"]), confidence=float(row["confidence"]),
                salience=row["salience"], expires_at=_native(row["expiresAt"])),
                [memories[i].input for i in group])
            rows.append({
                "id": row["id"], "count": len(group), "tags": list(kept.tags),
                "confidence": kept.confidence, "salience": kept.salience,
                "expiresAt": kept.expires_at, "auditId": new_id(),
                "details": _details(len(group))})
        records = await run(tx, reinforce_memories(rows, tenant=tenant, actor=actor, now=now))
        reinforced = {str(r["m"]["id"]): memory_from_properties(r["m"]) for r in records}
        outcomes: dict[int, WriteOutcome] = {}
        for group in repeating:
            memory = reinforced[str(found[group[0]]["id"])]
            for i in group:
                outcomes[i] = WriteOutcome(memory, duplicate_of=memory.id,
                                           written=WriteEffect.REINFORCED)
        return outcomes

    async def _near_duplicates(
        self, tx: AsyncManagedTransaction, memories: Sequence[PreparedMemory],
        created: list[tuple[list[int], dict[str, Any]]], *, tenant: Tenant, now: datetime,
    ) -> dict[str, list[Hint]]:
        rows = []
        for group, props in created:
            first = memories[group[0]]
            if first.embedding is None:
                continue
            rows.append({"id": props["id"], "vector": first.embedding,
                         "scopeKey": props["scopeKey"],
                         **identity_of(first.input).params()})
        if not rows or len(rows) > MAX_NEAR_DUPLICATE_CHECKS:
            return {}
        exclude = [str(props["id"]) for _, props in created]
        neighbours: dict[str, list[Claim]] = {}
        for r in await run(tx, nearest(rows, tenant=tenant, now=now, exclude=exclude)):
            if r["other"] is not None:
                neighbours.setdefault(str(r["id"]), []).append(
                    Claim(str(r["other"]), str(r["text"]), similarity=r["similarity"]))
        texts = {str(props["id"]): str(props["content"]) for _, props in created}
        return {id: near_duplicates(id, texts[id], found) for id, found in neighbours.items()}


def _folded(memories: Sequence[PreparedMemory], group: list[int]) -> dict[str, Any]:
    """The properties of the group's new memory: its first input, reinforced by the rest."""
    first = memories[group[0]]
    props = memory_properties(first.input, id=first.id, now=first.now,
                              embedding=first.embedding, embedding_model=first.embedding_model,
                              event=(first.event_start, first.event_end))
    if len(group) > 1:
        kept = reinforcement(kept_of(first.input), [memories[i].input for i in group[1:]])
        props.update(tags=list(kept.tags), confidence=kept.confidence, salience=kept.salience,
                     expiresAt=kept.expires_at, reinforcements=len(group) - 1,
                     lastReinforcedAt=first.now)
    return {k: v for k, v in props.items() if v is not None}


def _native(value: Any) -> datetime | None:
    if value is None:
        return None
    native: datetime = value.to_native() if hasattr(value, "to_native") else value
    return native


async def backfill_hashes(client: GraphClient, batch: int = BACKFILL_BATCH, *,
                          namespace: str | None = None) -> int:
    """Migration 21's data step: give every memory written before it (of one `namespace`,
    or all) its `contentHash` (SHA-256 of a Unicode normalisation Cypher cannot compute,
    hence Python); safe to run again, it only reads memories without one. Returns how
    many it hashed."""
    missing = ("CYPHER 25 MATCH (m:Memory) WHERE m.contentHash IS NULL AND m.content IS NOT NULL"
               " AND ($namespace IS NULL OR m.namespace = $namespace)"
               " RETURN m.id AS id, m.content AS content LIMIT $batch")
    store = ("CYPHER 25 UNWIND $rows AS row MATCH (m:Memory {id: row.id})"
             " SET m.contentHash = row.hash")
    done = 0
    while True:
        rows = await client.read((missing, {"batch": batch, "namespace": namespace}))
        if not rows:
            return done
        await client.write((store, {"rows": [
            {"id": r["id"], "hash": content_hash(str(r["content"]))} for r in rows]}))
        done += len(rows)


def as_written(outcome: WriteOutcome) -> Memory:
    """The outcome's memory as a write returns it: `duplicate_of` set when it was a
    repeat, `near_duplicates` when it is new."""
    return replace(outcome.memory, duplicate_of=outcome.duplicate_of,
                   near_duplicates=outcome.near_duplicates, written=outcome.written)
