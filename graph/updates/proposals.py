"""Updates a writer states, and the earlier memories a memory may replace.

The rule set (graph.updates.store) links what it can read without a model; on
scenarios nobody tuned it on it finds a tenth to a half of the updates, and its
links are right about two times in five (docs/benchmarks.md, issue 27). The
writer often knows better: an agent whose model just wrote "mornings are green
tea for me these days" can tell that it replaces "my go-to drink is a flat white
every morning" (no value the rules compare, no word of change they know) once it
is shown that memory. Two operations give it what it needs:

- `nearest_earlier`: a memory's nearest earlier memories by meaning (the primary
  vector index, fenced to its namespace; active, written before it, visible to
  the key, no rejected pair), each with the update link that already joins the
  two, for the writer to judge. Read when asked, never stored, never on the
  search path.
- `propose`: the writer says `newer` replaces `older`. The pair gets an
  `UPDATES` link of kind update (the rule set's link for the pair, if it made
  one), a candidate that recall already treats like any other, confirmed at
  once on request, with confirmUpdate's refusals.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction

from memlattice.core.auth import Tenant
from memlattice.core.errors import Conflict, EpisodicImmutable, NotFound, ValidationError
from memlattice.graph.audit_queries import audit_entry
from memlattice.graph.client import GraphClient, Query, run
from memlattice.graph.codec import Memory, memory_from_properties
from memlattice.graph.indexes import VECTOR_INDEX
from memlattice.graph.prepared_memory import new_id
from memlattice.graph.projections import project
from memlattice.graph.updates.queries import LINK_PROJECTION, list_links
from memlattice.graph.updates.store import UpdateLink, confirm_in, link_from
from memlattice.graph.visibility import tenant_visible

# Nearest neighbours asked of the vector index before time, status and clearance
# filter them: a memory's earlier neighbours compete with its later ones there.
OVERFETCH = 60
MAX_NEAREST = 20


@dataclass(frozen=True)
class Replaceable:
    """An earlier memory `memory` may replace: how alike the two are, and the link
    that already joins them (None: none yet)."""

    memory: Memory
    similarity: float
    update: UpdateLink | None


def nearest_earlier(*, tenant: Tenant, id: str, first: int, now: datetime) -> Query:
    """The memory's nearest active earlier memories the tenant may see, with their
    cosine and any live link between the two; a rejected pair is left out."""
    query = (
        "CYPHER 25\n"
        f"MATCH (n:Memory {{id: $id}}) WHERE {tenant_visible('n')} AND n.embedding IS NOT NULL\n"
        "MATCH (m:Memory)\n"
        f"  SEARCH m IN (VECTOR INDEX {VECTOR_INDEX} FOR n.embedding"
        " WHERE m.namespace = $namespace AND m.status = 'active' LIMIT $overfetch)"
        " SCORE AS score\n"
        f"WITH n, m, score WHERE m.id <> n.id AND m.createdAt < n.createdAt"
        f" AND {tenant_visible('m')} AND size(m.embedding) = size(n.embedding)\n"
        "  AND NOT EXISTS { (n)-[:UPDATES {status: 'rejected'}]-(m) }\n"
        "WITH n, m, score ORDER BY score DESC, m.id LIMIT $first\n"
        "OPTIONAL MATCH (n)-[u:UPDATES]->(m) WHERE u.status IN ['candidate', 'confirmed']\n"
        f"RETURN {project('m')} AS m,"
        " 2 * vector.similarity.cosine(m.embedding, n.embedding) - 1 AS similarity,"
        f" CASE WHEN u IS NULL THEN null ELSE {LINK_PROJECTION} END AS link\n"
        "ORDER BY similarity DESC, m.id"
    )
    return query, {**tenant.params(), "id": id, "first": first, "now": now,
                   "overfetch": OVERFETCH}


def locked_pair(*, tenant: Tenant, newer: str, older: str, now: datetime) -> Query:
    """Both memories, locked, if the tenant may see them; the link from one to the
    other, a live link the other way, and whether `newer` SUPERSEDES `older` would
    close a cycle."""
    query = (
        "CYPHER 25\n"
        f"MATCH (n:Memory {{id: $newer}}) WHERE {tenant_visible('n')}\n"
        f"MATCH (o:Memory {{id: $older}}) WHERE {tenant_visible('o')}\n"
        "SET n.`_lock` = true, o.`_lock` = true REMOVE n.`_lock`, o.`_lock`\n"
        "OPTIONAL MATCH (n)-[u:UPDATES]->(o)\n"
        "RETURN n.status AS newerStatus, o.status AS olderStatus,"
        " n.createdAt > o.createdAt AS inOrder, coalesce(o.memoryType, 'note') AS olderType,"
        f" CASE WHEN u IS NULL THEN null ELSE {LINK_PROJECTION} END AS link,"
        " [(o)-[b:UPDATES]->(n) WHERE b.status <> 'rejected' | b.id][0] AS reverse,\n"
        "  EXISTS { MATCH (o)-[:SUPERSEDES]->+(n) } AS cycle"
    )
    return query, {**tenant.params(), "newer": newer, "older": older, "now": now}


def create_proposed(*, tenant: Tenant, row: dict[str, Any], actor: str,
                    now: datetime) -> Query:
    """`(newer)-[:UPDATES {kind: 'update', status: 'candidate', proposedBy}]->(older)`,
    audited on the newer memory (`propose-update`)."""
    query = (
        "CYPHER 25\n"
        "MATCH (n:Memory {id: $row.newer}) WHERE n.namespace = $namespace\n"
        "MATCH (o:Memory {id: $row.older}) WHERE o.namespace = $namespace\n"
        "CREATE (n)-[u:UPDATES {id: $row.id, kind: 'update', status: 'candidate',"
        " confidence: $row.confidence, reason: $row.reason, subject: $row.subject,"
        " attribute: $row.attribute, matched: [], createdAt: $now, proposedBy: $actor}]->(o)\n"
        "WITH n, o, u\n"
        + audit_entry("$row.auditId", "n.id", "'propose-update'", "n.version",
                      "'{\"older\":\"' + o.id + '\",\"update\":\"' + u.id + '\"}'")
        + "\nRETURN u.id AS id"
    )
    return query, {**tenant.params(), "row": row, "actor": actor, "now": now}


def refusal(row: Any, *, newer: str, older: str) -> Exception | None:
    """Why `newer` may not be said to replace `older` (pure: reads `locked_pair`'s row)."""
    link = row["link"]
    if row["reverse"] is not None:
        return Conflict(f"update link {row['reverse']} says {older} replaces {newer}: reject"
                        " it first", id=row["reverse"])
    if link is not None and link["status"] == "rejected":
        return Conflict(f"update link {link['id']} between these memories was rejected",
                        id=link["id"])
    if row["olderType"] == "episodic":
        return EpisodicImmutable("an episodic record tells what happened; nothing replaces it")
    if not row["inOrder"]:
        return ValidationError(f"{newer} must be written after {older} to replace it",
                               field="newerId")
    if link is not None and link["status"] == "confirmed":
        return None  # stated again: nothing changes
    if row["cycle"]:
        return Conflict(f"{older} already replaces {newer} (a SUPERSEDES path)", id=older)
    if row["newerStatus"] != "active" or row["olderStatus"] != "active":
        return Conflict("only active memories can be linked as an update", id=older)
    return None


@dataclass(frozen=True)
class Proposed:
    """What `propose` did: the link; whether this call made it; and (superseded,
    successor) when this call confirmed it."""

    link: UpdateLink
    created: bool
    superseded: tuple[Memory, Memory] | None = None


class ProposalGraph:
    """Nearest earlier memories and stated updates (see the module docstring)."""

    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def nearest_earlier(self, *, tenant: Tenant, id: str, first: int,
                              now: datetime) -> list[Replaceable]:
        if not 1 <= first <= MAX_NEAREST:
            raise ValidationError(f"first must be between 1 and {MAX_NEAREST}", field="first")
        rows = await self.client.read(nearest_earlier(tenant=tenant, id=id, first=first,
                                                      now=now))
        return [Replaceable(memory=memory_from_properties(r["m"]),
                            similarity=float(r["similarity"]),
                            update=link_from(r["link"]) if r["link"] is not None else None)
                for r in rows]

    async def propose(self, *, tenant: Tenant, newer: str, older: str, attribute: str,
                      reason: str | None, confirm: bool, actor: str, now: datetime,
                      ) -> Proposed:
        tenant.require_write()
        if newer == older:
            raise ValidationError("a memory cannot replace itself", field="olderId")

        async def work(tx: AsyncManagedTransaction) -> Proposed:
            found = await run(tx, locked_pair(tenant=tenant, newer=newer, older=older, now=now))
            if not found:
                raise NotFound(f"no memories {newer} and {older} in {tenant.namespace}"
                               " that this key may see")
            problem = refusal(found[0], newer=newer, older=older)
            if problem is not None:
                raise problem
            link = found[0]["link"]
            link_id = link["id"] if link is not None else new_id()
            if link is None:
                said = f"stated by {actor}"
                await run(tx, create_proposed(tenant=tenant, actor=actor, now=now, row={
                    "id": link_id, "newer": newer, "older": older, "confidence": 1.0,
                    "reason": f"{said}: {reason}" if reason else said, "subject": "",
                    "attribute": attribute, "auditId": new_id()}))
            if confirm:
                done = await confirm_in(tx, tenant=tenant, id=link_id, actor=actor, now=now)
                if done is not None:
                    return Proposed(done[0], created=link is None, superseded=(done[1], done[2]))
            rows = await run(tx, list_links(tenant=tenant, statuses=("candidate", "confirmed"),
                                            memory_id=None, first=1, link_id=link_id))
            r = rows[0]
            return Proposed(link_from(r["link"], memory_from_properties(r["newer"]),
                                      memory_from_properties(r["older"])), created=link is None)

        return await self.client.transaction(work)
