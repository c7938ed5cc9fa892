"""Cypher statements about memories themselves, as builders returning `(query, params)`.

Rules kept here: values are always `$parameters`; every statement is pinned to
Cypher 25 (the `SEARCH` clause and `CALL ()` scoping need it, and pinning keeps
behaviour independent of the server's default language); every read names
`$namespace` and applies the expiry rule (graph.visibility). The fragments they
share live beside them: visibility, projections, revision_clauses, audit_queries,
indexes, memory_filters; relationships are in edge_queries.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memlattice.core.auth import Tenant
from memlattice.core.model import ForgetPredicate, MemoryFilter
from memlattice.graph.audit_queries import audit_entry
from memlattice.graph.client import Query
from memlattice.graph.codec import MEMORY_TIMES
from memlattice.graph.cursors import Window
from memlattice.graph.entities import link_mentions, relink_mentions
from memlattice.graph.indexes import FULLTEXT_INDEX, fenced_lucene
from memlattice.graph.memory_filters import filter_conditions
from memlattice.graph.projections import instant, project, project_state
from memlattice.graph.revision_clauses import monotonic, snapshot, state_at
from memlattice.graph.visibility import allowed, believed, owned, tenant_visible


def create_memories(rows: list[dict[str, Any]], *, tenant: Tenant, actor: str) -> Query:
    """One UNWIND round trip for any batch: nodes plus their `write` audit entries.

    Each row is `{props, times, auditId, mentions}`: the properties without
    their times, and the times (`codec.MEMORY_TIMES`, in that order) as epoch
    parts, which are far cheaper to send than datetimes. `createdAt` may differ
    per row when a caller replays history with its own `now`. The entities the
    content mentions are linked in the same transaction (graph.entities).
    """
    times = ", ".join(f"m.{name} = {instant(f'row.times[{i}]')}"
                      for i, name in enumerate(MEMORY_TIMES))
    query = (
        "CYPHER 25\n"
        "UNWIND $rows AS row\n"
        "CREATE (m:Memory)\n"
        f"SET m = row.props, {times}\n"
        "WITH m, row\n"
        + link_mentions("m", "row.mentions")
        + audit_entry("row.auditId", "m.id", "'write'", "1", at="m.createdAt")
        + "\nRETURN count(*) AS created"
    )
    return query, {"rows": rows, **tenant.params(), "actor": actor}


def lock_memory(*, tenant: Tenant, id: str, now: datetime) -> Query:
    """Take the node's write lock, then read it: the read sees the latest commit.

    The first step of every read-check-write (update, supersede): two
    concurrent callers serialise here, so the second sees the first's version.
    """
    query = (
        "CYPHER 25\n"
        "MATCH (m:Memory {id: $id})\n"
        f"WHERE {tenant_visible()}\n"
        "SET m.`_lock` = true REMOVE m.`_lock`\n"
        # A node deleted by a concurrent transaction reads as all-null once locked.
        "WITH m WHERE m.id IS NOT NULL\n"
        f"RETURN {project()} AS m"
    )
    return query, {**tenant.params(), "id": id, "now": now}


def update_memory(
    *, tenant: Tenant, id: str, props: dict[str, Any], actor: str, now: datetime,
    audit_id: str, details: str, mentions: list[dict[str, str]] | None = None,
) -> Query:
    """Apply `props`; when the content changed, `mentions` (graph.entities rows of
    the new content) replace its MENTIONS in the same transaction."""
    query = (
        "CYPHER 25\n"
        f"MATCH (m:Memory {{id: $id}}) WHERE {owned()}\n"
        + snapshot("m")
        + f"SET m += $props, m.version = m.version + 1, m.updatedAt = {monotonic()}\n"
        "WITH m\n"
        + relink_mentions("m", "$mentions")
        + audit_entry("$auditId", "m.id", "'update'", "m.version", "$details")
        + f"\nRETURN {project()} AS m"
    )
    params = {**tenant.params(), "id": id, "props": props, "actor": actor, "now": now,
              "auditId": audit_id, "details": details, "mentions": mentions}
    return query, params


def supersede_memory(
    *, tenant: Tenant, id: str, props: dict[str, Any], edge_id: str, actor: str,
    now: datetime, audit_ids: tuple[str, str], mentions: list[dict[str, str]] | None = None,
) -> Query:
    """Create the successor, retire the old memory, join them with SUPERSEDES; the
    successor mentions what its own content names (graph.entities)."""
    query = (
        "CYPHER 25\n"
        f"MATCH (old:Memory {{id: $id}}) WHERE {owned('old')}\n"
        + snapshot("old")
        + "CREATE (m:Memory) SET m = $props\n"
        "SET old.status = 'superseded', old.supersededAt = $now, old.supersededBy = m.id,\n"
        "    old.version = old.version + 1, old.updatedAt = $now\n"
        "CREATE (m)-[:SUPERSEDES {id: $edgeId, createdAt: $now, metadataJson: '{}'}]->(old)\n"
        "WITH m, old\n"
        + link_mentions("m", "$mentions", carried=None)
        + audit_entry("$auditNew", "m.id", "'write'", "1", "'{\"supersedes\":\"' + old.id + '\"}'")
        + "\n"
        + audit_entry("$auditOld", "old.id", "'supersede'", "old.version",
                 "'{\"supersededBy\":\"' + m.id + '\"}'")
        + f"\nRETURN {project('old')} AS previous, {project()} AS current"
    )
    params = {**tenant.params(), "id": id, "props": props, "edgeId": edge_id,
              "actor": actor, "now": now, "auditNew": audit_ids[0], "auditOld": audit_ids[1],
              "mentions": mentions or []}
    return query, params


def forget_conditions(predicate: ForgetPredicate) -> tuple[list[str], dict[str, Any]]:
    """`forget_memories`' conditions on `m` (beyond visibility) for a predicate's
    exact-match parts; its fulltext `query` is the caller's to fence (`fenced_lucene`)."""
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
    return conditions, params


def forget_memories(
    *, tenant: Tenant, now: datetime, actor: str, conditions: list[str],
    params: dict[str, Any], fulltext: str | None,
) -> Query:
    """Tombstone every visible, not yet forgotten memory matching all conditions."""
    source = (
        f"CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', $lucene) YIELD node AS m\n"
        if fulltext is not None
        else "MATCH (m:Memory)\n"
    )
    where = " AND ".join([tenant_visible(), "m.status <> 'forgotten'", *conditions])
    query = (
        "CYPHER 25\n" + source + f"WHERE {where}\n"
        # Lock, then look again: a concurrent forget of the same memory has
        # committed by the time the lock is ours, and this one must not count it.
        "SET m.`_lock` = true REMOVE m.`_lock`\n"
        "WITH m WHERE m.status <> 'forgotten'\n"
        + snapshot("m")
        + "SET m.status = 'forgotten', m.forgottenAt = $now, m.version = m.version + 1,"
        " m.updatedAt = $now\n"
        "WITH m\n"
        + audit_entry("randomUUID()", "m.id", "'forget'", "m.version")
        + "\nRETURN m.id AS id ORDER BY id"
    )
    return query, {**params, **tenant.params(), "now": now, "actor": actor,
                   "lucene": fenced_lucene(fulltext, tenant.namespace, None) if fulltext
                   else None}


def delete_memory(*, tenant: Tenant, id: str, actor: str, now: datetime, audit_id: str) -> Query:
    """Hard erase: the node and its relationships go; an audit entry stays behind. A
    conversation's turns on either side of an erased turn are joined by NEXT, so its
    session stays one chain (a continuation joins after its one last turn)."""
    query = (
        "CYPHER 25\n"
        f"MATCH (m:Memory {{id: $id}}) WHERE {owned()}\n"
        "SET m.`_lock` = true REMOVE m.`_lock`\n"
        # A node deleted by a concurrent transaction reads as all-null once locked.
        "WITH m WHERE m.id IS NOT NULL\n"
        # The delete entry keeps what decides who may read the trail of a memory
        # that no longer exists (see audit_trail).
        "WITH m, m.id AS memoryId, m.version + 1 AS version,"
        " coalesce(m.sensitivity, 'low') AS sensitivity, m.scope AS scope,"
        " [(m)-[:IN_SESSION]->(s:Session) | s.id] AS sessions\n"
        # Its vectors in side spaces (graph.vector_spaces) go with it.
        "CALL (m) { MATCH (m)<-[:EMBEDS]-(v:MemoryVector) DETACH DELETE v }\n"
        # So do a typed record's payload nodes (graph.records); shared Evidence stays.
        "CALL (m) { MATCH (m)-[:USED_TOOL|HAS_NODE]->(x) DETACH DELETE x }\n"
        # And its history (graph.history): an erased memory has no earlier versions.
        "CALL (m) { MATCH (m)-[:HAS_REVISION]->(r:MemoryRevision) DETACH DELETE r }\n"
        "CALL (m) { MATCH (p:Memory)-[:NEXT]->(m)-[:NEXT]->(n:Memory) MERGE (p)-[:NEXT]->(n) }\n"
        "DETACH DELETE m\n"
        "WITH memoryId, version, sensitivity, scope, sessions\n"
        + audit_entry("$auditId", "memoryId", "'delete'", "version",
                 extra="sensitivity: sensitivity, scope: scope")
        + "\nRETURN memoryId, sessions"
    )
    return query, {**tenant.params(), "id": id, "actor": actor, "now": now,
                   "auditId": audit_id}


def get_memory(*, tenant: Tenant, id: str, now: datetime, as_of: datetime | None = None
               ) -> Query:
    """The memory; with `as_of`, as it was then (if it was believed then), within the
    tenant's clearance both then and now."""
    if as_of is None:
        query = (f"CYPHER 25\nMATCH (m:Memory {{id: $id}})\nWHERE {tenant_visible()}\n"
                 f"RETURN {project()} AS m")
        return query, {**tenant.params(), "id": id, "now": now}
    query = (
        # Expiry as of then too (`believed`), as `memories` and `search` apply it.
        f"CYPHER 25\nMATCH (m:Memory {{id: $id}})\nWHERE {owned()} AND {believed('m')}\n"
        + state_at("m", "m_then")
        + f"WITH * WHERE {allowed('m_then')}\n"
        f"RETURN {project_state('m', 'm_then')} AS m"
    )
    return query, {**tenant.params(), "id": id, "now": now, "asOf": as_of}


def get_embeddings(*, tenant: Tenant, ids: list[str]) -> Query:
    query = (
        f"CYPHER 25\nUNWIND $ids AS id\nMATCH (m:Memory {{id: id}}) WHERE {owned()}\n"
        "RETURN m.id AS id, m.embedding AS embedding"
    )
    return query, {**tenant.params(), "ids": ids}


def list_memories(f: MemoryFilter, *, tenant: Tenant, now: datetime, window: Window) -> Query:
    """A page of the filter's memories in keyset order (createdAt, id, newest first), the
    filter's total, and whether any memory lies beyond the cursor the page starts from,
    in one round trip.

    Forward, the page is read newest first after `$after`; backward, oldest first before
    `$before` (graph.cursors.page_of turns it round). `beyond` is the other side:
    going forward, some memory at or before `$after` (hasPreviousPage); going backward,
    some memory at or after `$before` (hasNextPage); false without that cursor. `$limit`
    is one more than the page, to tell whether more lie past it.

        CALL () { MATCH (m:Memory) WHERE <filter> RETURN count(m) AS total }
        CALL () { MATCH ... WHERE <filter> AND <keyset bounds>
          WITH m ORDER BY m.createdAt DESC, m.id DESC LIMIT $limit   -- ASC backward
          RETURN collect(<projection>) AS page }
        CALL () { MATCH ... WHERE <filter> AND <at or past the start cursor>
          WITH m LIMIT 1 RETURN count(m) > 0 AS beyond }
        RETURN total, page, beyond
    """
    if f.as_of is None:
        conds, params = filter_conditions(f)
        match = f"MATCH (m:Memory) WHERE {' AND '.join([tenant_visible(), *conds])}"
        shown, carry = project(), "m"
    else:
        # As of then: the time rules test the node, the rest its state then (graph.history).
        conds, params = filter_conditions(f, state="m_then")
        match = (f"MATCH (m:Memory) WHERE {tenant_visible()} AND {conds[0]}\n"
                 + state_at("m", "m_then")
                 + f"  WITH * WHERE {' AND '.join([allowed('m_then'), *conds[1:]])}")
        shown, carry = project_state("m", "m_then"), "m, m_then"
    keyset = ""
    if window.after is not None:
        keyset += _OLDER_THAN.format(at="$afterAt", id="$afterId")
        params.update(afterAt=window.after[0], afterId=window.after[1])
    if window.before is not None:
        keyset += _NEWER_THAN.format(at="$beforeAt", id="$beforeId")
        params.update(beforeAt=window.before[0], beforeId=window.before[1])
    start = window.before if window.backward else window.after
    if start is None:
        beyond = "CALL () { RETURN false AS beyond }\n"
    else:
        # At or on the far side of the cursor the page starts from (its own memory counts).
        far_side = _AT_OR_OLDER if window.backward else _AT_OR_NEWER
        beyond = (f"CALL () {{ {match}{far_side}\n"
                  "  WITH m LIMIT 1 RETURN count(m) > 0 AS beyond }\n")
        params.update(startAt=start[0], startId=start[1])
    order = "ASC" if window.backward else "DESC"
    query = (
        "CYPHER 25\n"
        f"CALL () {{ {match} RETURN count(m) AS total }}\n"
        f"CALL () {{ {match}{keyset}\n"
        f"  WITH {carry} ORDER BY m.createdAt {order}, m.id {order} LIMIT $limit\n"
        f"  RETURN collect({shown}) AS page }}\n"
        + beyond
        + "RETURN total, page, beyond"
    )
    return query, {**params, **tenant.params(), "now": now, "limit": window.size + 1}


# Strictly past a keyset position in the newest-first order, and strictly before it.
_OLDER_THAN = " AND (m.createdAt < {at} OR (m.createdAt = {at} AND m.id < {id}))"
_NEWER_THAN = " AND (m.createdAt > {at} OR (m.createdAt = {at} AND m.id > {id}))"
_AT_OR_OLDER = " AND (m.createdAt < $startAt OR (m.createdAt = $startAt AND m.id <= $startId))"
_AT_OR_NEWER = " AND (m.createdAt > $startAt OR (m.createdAt = $startAt AND m.id >= $startId))"


def bump_access(*, namespace_counts: list[dict[str, Any]], now: datetime) -> Query:
    """Add recall counts in one statement; rows are `{namespace, id, count}`."""
    query = (
        "CYPHER 25\nUNWIND $rows AS row\n"
        "MATCH (m:Memory {id: row.id}) WHERE m.namespace = row.namespace\n"
        "SET m.accessCount = coalesce(m.accessCount, 0) + row.count, m.lastAccessedAt = $now"
    )
    return query, {"rows": namespace_counts, "now": now}
