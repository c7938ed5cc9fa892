"""Which turns of a session the write-side LLM has read (memlattice.services.session_facts).

The session node keeps the ids of its turns already given to the model:

    (:Session {namespace, id, factTurns: [turn id, ...]})

`claim` takes the turns not read yet and marks them in one transaction, under
the session's write lock, so that a session sent twice (even at once) is read
once; `release` gives turns back when the model could not be asked, so the
next sending of the session tries again. The facts themselves are plain
memories, written with their DERIVED relationships through the memory service.

A fact that names its subject and attribute keeps them as metadata, with their
folded forms (`meta.subjectKey`, `meta.attributeKey`, see
memlattice.core.session_facts.about_key). `earlier` finds, in one round trip,
the active facts of the same pairs that the same user and agent were told
before (through the `(namespace, memoryType)` index, then a filter on the
namespace's observations); `reinforce` strengthens one that was said again
(graph.duplicates' reinforcement: a revision and a `reinforce` audit entry);
`propose` links a replacing fact to the one it replaces by an `UPDATES`
candidate (graph.updates, which UpdateGraph.confirm turns into SUPERSEDES).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction

from memlattice.core.auth import Tenant
from memlattice.core.duplicates import Kept
from memlattice.graph.client import GraphClient, Query, run
from memlattice.graph.codec import (
    Memory,
    canonical_json,
    memory_from_properties,
    meta_value,
    to_datetime,
)
from memlattice.graph.duplicates import reinforce_memories
from memlattice.graph.prepared_memory import new_id
from memlattice.graph.updates.queries import create_links
from memlattice.graph.visibility import owned, tenant_visible

# The UPDATES link a replacing fact gets: the model named the same subject and attribute.
REASON = "the facts model read another value of the same subject and attribute"


def claim(*, tenant: Tenant, session: str, ids: list[str]) -> Query:
    """Mark the turns of `ids` (in order) that the tenant sees, belong to the session
    and were not read yet; returns them. Writing the lock property first makes
    concurrent claims of one session wait for each other before they read."""
    return (
        "CYPHER 25\n"
        "MATCH (s:Session {namespace: $namespace, id: $session})\n"
        "SET s.factsLock = true\n"
        "WITH s, coalesce(s.factTurns, []) AS done\n"
        "CALL (s, done) {\n"
        "  UNWIND range(0, size($ids) - 1) AS i\n"
        "  WITH i, $ids[i] AS id WHERE NOT id IN done\n"
        "  MATCH (m:Memory {id: id})-[:IN_SESSION]->(s)\n"
        f"  WHERE {owned()}\n"
        "  WITH i, m ORDER BY i\n"
        "  RETURN collect(m.id) AS claimed\n"
        "}\n"
        "SET s.factTurns = done + claimed\n"
        "REMOVE s.factsLock\n"
        "RETURN claimed",
        {**tenant.params(), "session": session, "ids": ids},
    )


def release(*, namespace: str, session: str, ids: list[str]) -> Query:
    """Forget that `ids` were read, so that they are read again."""
    return (
        "CYPHER 25\n"
        "MATCH (s:Session {namespace: $namespace, id: $session})\n"
        "SET s.factTurns = [t IN coalesce(s.factTurns, []) WHERE NOT t IN $ids]\n"
        "RETURN size(s.factTurns) AS kept",
        {"namespace": namespace, "session": session, "ids": ids},
    )


def earlier(rows: list[dict[str, Any]], *, tenant: Tenant, memory_type: str,
            source_type: str, exclude: Sequence[str], now: Any) -> Query:
    """Per row `{subjectKey, attributeKey, agentId, userId}` (metadata values as
    stored), the active, unexpired facts of the model with that pair and identity
    that the tenant sees, except `exclude`."""
    return (
        "CYPHER 25\n"
        "UNWIND $rows AS row\n"
        "MATCH (m:Memory)\n"
        "WHERE m.namespace = $namespace AND m.memoryType = $memoryType\n"
        "  AND m.sourceType = $sourceType AND m.status = 'active'\n"
        "  AND m.`meta.subjectKey` = row.subjectKey"
        " AND m.`meta.attributeKey` = row.attributeKey\n"
        "  AND ((m.agentId IS NULL AND row.agentId IS NULL) OR m.agentId = row.agentId)\n"
        "  AND ((m.userId IS NULL AND row.userId IS NULL) OR m.userId = row.userId)\n"
        f"  AND NOT m.id IN $exclude AND {tenant_visible()}\n"
        "RETURN DISTINCT m.id AS id, m.content AS content, m.`meta.subjectKey` AS subjectKey,"
        " m.`meta.attributeKey` AS attributeKey, m.createdAt AS at,"
        " coalesce(m.tags, []) AS tags, m.confidence AS confidence, m.salience AS salience,"
        " m.expiresAt AS expiresAt",
        {**tenant.params(), "rows": rows, "memoryType": memory_type,
         "sourceType": source_type, "exclude": list(exclude), "now": now},
    )


def links_between(pairs: list[dict[str, str]], *, tenant: Tenant) -> Query:
    """The UPDATES link from each pair's `newer` to its `older`, with its status."""
    return (
        "CYPHER 25\n"
        "UNWIND $pairs AS p\n"
        "MATCH (n:Memory {id: p.newer})-[u:UPDATES]->(o:Memory {id: p.older})\n"
        f"WHERE {owned('n')} AND {owned('o')}\n"
        "RETURN p.newer AS newer, p.older AS older, u.id AS id, u.status AS status",
        {**tenant.params(), "pairs": pairs},
    )


@dataclass(frozen=True)
class EarlierFact:
    """An active fact of the model found by `SessionFactsGraph.earlier`."""

    id: str
    text: str
    keys: tuple[str, str]
    at: datetime
    kept: Kept


@dataclass(frozen=True)
class Proposed:
    """The UPDATES link between a replacing fact and the one it replaces."""

    id: str
    newer: str
    older: str
    status: str


class SessionFactsGraph:
    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def claim(self, *, tenant: Tenant, session: str, ids: list[str]) -> list[str]:
        """The turns of `ids` this call may give to the model (none: read already)."""
        tenant.require_write()
        records = await self.client.write(claim(tenant=tenant, session=session, ids=ids))
        return [str(i) for i in records[0]["claimed"]] if records else []

    async def release(self, *, tenant: Tenant, session: str, ids: list[str]) -> None:
        await self.client.write(release(namespace=tenant.namespace, session=session, ids=ids))

    async def earlier(self, *, tenant: Tenant, about: Sequence[tuple[str, str, str | None,
                                                                    str | None]],
                      memory_type: str, source_type: str, exclude: Sequence[str],
                      now: datetime) -> list[EarlierFact]:
        """The active facts about each (subject key, attribute key, agent, user) of
        `about`, in one read."""
        if not about:
            return []
        rows = [{"subjectKey": meta_value(s), "attributeKey": meta_value(a), "agentId": agent,
                 "userId": user} for s, a, agent, user in dict.fromkeys(about)]
        records = await self.client.read(earlier(
            rows, tenant=tenant, memory_type=memory_type, source_type=source_type,
            exclude=exclude, now=now))
        found = []
        for r in records:
            at = to_datetime(r["at"])
            assert at is not None
            expires = r["expiresAt"]
            found.append(EarlierFact(
                id=str(r["id"]), text=str(r["content"]),
                keys=(_unmeta(r["subjectKey"]), _unmeta(r["attributeKey"])), at=at,
                kept=Kept(tags=tuple(r["tags"]), confidence=float(r["confidence"]),
                          salience=r["salience"],
                          expires_at=expires.to_native() if hasattr(expires, "to_native")
                          else expires)))
        return found

    async def reinforce(self, *, tenant: Tenant, kept: Sequence[tuple[str, Kept, str]],
                        actor: str, now: datetime) -> list[Memory]:
        """Reinforce each (memory id, its state once reinforced, the session that said
        it again) once, as a repeated plain write does (graph.duplicates)."""
        tenant.require_write()
        if not kept:
            return []
        rows = [{"id": id, "count": 1, "tags": list(k.tags), "confidence": k.confidence,
                 "salience": k.salience, "expiresAt": k.expires_at, "auditId": new_id(),
                 "details": canonical_json({"repeats": 1, "session": session})}
                for id, k, session in kept]
        records = await self.client.write(reinforce_memories(rows, tenant=tenant, actor=actor,
                                                             now=now))
        return [memory_from_properties(r["m"]) for r in records]

    async def propose(self, *, tenant: Tenant, pairs: Sequence[tuple[str, str, tuple[str, str]]],
                      now: datetime) -> list[Proposed]:
        """An UPDATES candidate from each (newer, older, (subject, attribute)) pair's
        newer fact to its older one, unless the pair is linked already (the write's
        own update detection may have linked it; a rejected pair stays rejected); the
        link from newer to older of every pair, as it now is."""
        tenant.require_write()
        if not pairs:
            return []
        links = [{"id": new_id(), "newer": newer, "older": older, "kind": "update",
                  "confidence": 1.0, "reason": REASON, "subject": subject,
                  "attribute": attribute, "matched": [subject, attribute],
                  "contradictsId": new_id()}
                 for newer, older, (subject, attribute) in pairs]
        between = [{"newer": newer, "older": older} for newer, older, _ in pairs]

        async def work(tx: AsyncManagedTransaction) -> list[Proposed]:
            await run(tx, create_links(links, namespace=tenant.namespace, now=now))
            rows = await run(tx, links_between(between, tenant=tenant))
            return [Proposed(id=str(r["id"]), newer=str(r["newer"]), older=str(r["older"]),
                             status=str(r["status"])) for r in rows]

        return await self.client.transaction(work)


def _unmeta(value: Any) -> str:
    """A metadata property's value (canonical JSON of a string) as the string."""
    loaded = json.loads(str(value))
    return str(loaded)
