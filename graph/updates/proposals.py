"""Updates a writer states, and the earlier memories a memory may replace.

The rule set (graph.updates.store) links what it can read without a model; on
scenarios nobody tuned it on it finds a tenth to a half of the updates, and its
links are right about two times in five (docs/benchmarks.md, issue 27). The
writer often knows better: an agent whose model just wrote "mornings are green
tea for me these days" can tell that it replaces "my go-to drink is a flat white
every morning" (no value the rules compare, no word of change they know) once it
is shown that memory. Two operations give it what it needs:

- `nearest_earlier`: a memory's nearest earlier memories (active, written before
  it, visible to the key, no rejected pair): the vector index's and the fulltext
  index's candidates, both fenced to its namespace, with both scores (the service
  orders them, memlattice.services.updates.offered), each with the update link
  that already joins the two, for the writer to judge. Read when asked, never stored, never on the
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
from memlattice.core.lucene import any_terms
from memlattice.graph.audit_queries import audit_entry
from memlattice.graph.client import GraphClient, Query, run
from memlattice.graph.codec import Memory, memory_from_properties
from memlattice.graph.prepared_memory import new_id
from memlattice.graph.updates.links import UpdateLink, link_from
from memlattice.graph.updates.queries import LINK_PROJECTION, list_links, nearest_earlier
from memlattice.graph.updates.store import confirm_in
from memlattice.graph.visibility import tenant_visible


@dataclass(frozen=True)
class Replaceable:
    """An earlier memory `memory` may replace: how alike the two are, the link that
    already joins them (None: none yet), and its score in each index that proposed
    it (None where one did not; the service fuses their orders)."""

    memory: Memory
    similarity: float | None
    update: UpdateLink | None
    vector_score: float | None = None
    text_score: float | None = None


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


def restate_link(*, tenant: Tenant, id: str, actor: str) -> Query:
    """A candidate the rule set found is now stated by `actor`: a dispute of it ends."""
    query = (
        "CYPHER 25\n"
        "MATCH (n:Memory)-[u:UPDATES {id: $id}]->(o:Memory)\n"
        "WHERE n.namespace = $namespace AND o.namespace = $namespace\n"
        "SET u.proposedBy = coalesce(u.proposedBy, $actor)\n"
        "REMOVE u.disputedBy, u.disputedAt\n"
        "RETURN u.id AS id"
    )
    return query, {**tenant.params(), "id": id, "actor": actor}


def dispute_links(*, tenant: Tenant, pairs: list[dict[str, str]], by: str, actor: str,
                  now: datetime) -> Query:
    """Each pair's live candidate that the rule set found (nobody stated it) is
    disputed `by` a judge, audited on the older memory (`dispute-update`); the ids of
    the older memories whose mark this changes."""
    query = (
        "CYPHER 25\n"
        "UNWIND $pairs AS p\n"
        "MATCH (n:Memory {id: p.newer})-[u:UPDATES {status: 'candidate', kind: 'update'}]->"
        "(o:Memory {id: p.older})\n"
        f"WHERE {tenant_visible('n')} AND {tenant_visible('o')}"
        " AND u.proposedBy IS NULL AND u.disputedBy IS NULL\n"
        "SET u.disputedBy = $by, u.disputedAt = $now\n"
        "WITH n, o, u, p\n"
        + audit_entry("p.auditId", "o.id", "'dispute-update'", "o.version",
                      "'{\"newer\":\"' + n.id + '\",\"update\":\"' + u.id + '\"}'")
        + "\nRETURN o.id AS older"
    )
    return query, {**tenant.params(), "pairs": pairs, "by": by, "actor": actor, "now": now}


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
        return Conflict(f"{older} already replaces {newer} (a SUPERSEDES path)", id=older,
                        reason="SUPERSEDES_CYCLE")
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
    # A candidate that was disputed is now stated: its older memory is marked again.
    restated: bool = False


class ProposalGraph:
    """Nearest earlier memories and stated updates (see the module docstring)."""

    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def nearest_earlier(self, *, tenant: Tenant, id: str, text: str,
                              now: datetime) -> list[Replaceable]:
        """Every candidate either index proposes; `text` is the memory's content, whose
        words are the fulltext side's query."""
        rows = await self.client.read(nearest_earlier(tenant=tenant, id=id,
                                                      lucene=any_terms(text), now=now))
        return [Replaceable(memory=memory_from_properties(r["m"]),
                            similarity=None if r["similarity"] is None else float(r["similarity"]),
                            update=link_from(r["link"]) if r["link"] is not None else None,
                            vector_score=r["vectorScore"], text_score=r["textScore"])
                for r in rows]

    async def propose(self, *, tenant: Tenant, newer: str, older: str, attribute: str,
                      reason: str | None, confirm: bool, actor: str, now: datetime,
                      confidence: float = 1.0, said: str | None = None) -> Proposed:
        """`said`: who judged the pair, for the link's reason (default: the actor stated it)."""
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
            restated = link is not None and link.get("disputedBy") is not None
            if link is not None and link["status"] == "candidate":
                await run(tx, restate_link(tenant=tenant, id=link_id, actor=actor))
            if link is None:
                by = said or f"stated by {actor}"
                await run(tx, create_proposed(tenant=tenant, actor=actor, now=now, row={
                    "id": link_id, "newer": newer, "older": older, "confidence": confidence,
                    "reason": f"{by}: {reason}" if reason else by, "subject": "",
                    "attribute": attribute, "auditId": new_id()}))
            if confirm:
                done = await confirm_in(tx, tenant=tenant, id=link_id, actor=actor, now=now)
                if done is not None:
                    return Proposed(done[0], created=link is None, superseded=(done[1], done[2]))
            rows = await run(tx, list_links(tenant=tenant, statuses=("candidate", "confirmed"),
                                            memory_id=None, first=1, link_id=link_id))
            r = rows[0]
            return Proposed(link_from(r["link"], memory_from_properties(r["newer"]),
                                      memory_from_properties(r["older"])), created=link is None,
                            restated=restated)

        return await self.client.transaction(work)

    async def dispute(self, *, tenant: Tenant, pairs: list[tuple[str, str]], by: str,
                      actor: str, now: datetime) -> list[str]:
        """The rule set's live candidates between these (newer, older) pairs are judged
        wrong `by` a model: recall ignores them until someone confirms one (a person
        may still confirm or reject it). The older memories whose mark this removed."""
        tenant.require_write()
        if not pairs:
            return []
        rows = await self.client.write(dispute_links(
            tenant=tenant, by=by, actor=actor, now=now,
            pairs=[{"newer": n, "older": o, "auditId": new_id()} for n, o in pairs]))
        return [str(r["older"]) for r in rows]
