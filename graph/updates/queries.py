"""Cypher of update detection, each builder returning `(query, params)`.

The statements a write makes are recorded under their attribute's node, which is
also the attribute's lock: two concurrent writes that state the same attribute
serialise on it, so the second sees the first's statement and links to it
(one current memory, never two). Values are always parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memlattice.core.auth import Tenant
from memlattice.graph.audit_queries import audit_entry
from memlattice.graph.client import Query
from memlattice.graph.indexes import FULLTEXT_INDEX, VECTOR_INDEX, fenced_lucene
from memlattice.graph.projections import project, project_memory
from memlattice.graph.revision_clauses import snapshot
from memlattice.graph.visibility import allowed, owned, tenant_visible

# Earlier statements of one attribute compared with a new one: the most recent only
# (an attribute's history is read newest first; older states were linked in turn).
EARLIER_PER_KEY = 20
# Earlier memories a new one is read against by contrast (memlattice.core.statements.
# contrast): its best fulltext matches and its speaker's latest turns.
CONTRAST_PER_MEMORY = 20
CONTRAST_PER_SPEAKER = 10

# Candidates asked of each index before time, status and clearance filter them: a
# memory's earlier neighbours compete with its later ones there.
OVERFETCH = 60



def lock_attributes(namespace: str, keys: Sequence[str], now: datetime) -> Query:
    """Merge and write-lock the attributes' nodes, in sorted order (no deadlock
    between two writes that lock the same ones)."""
    query = (
        "CYPHER 25\n"
        "UNWIND $keys AS key\n"
        "MERGE (a:Attribute {namespace: $namespace, key: key})\n"
        "SET a.lockedAt = $now"
    )
    return query, {"keys": sorted(set(keys)), "namespace": namespace, "now": now}


def earlier_statements(keys: Sequence[str], exclude: Sequence[str], *, tenant: Tenant,
                       now: datetime) -> Query:
    """Per attribute key, the latest statements of active memories the tenant may
    see (not among `exclude`, the batch itself), with the links they already have
    to the batch (a rejected pair is never proposed again):

        UNWIND $keys AS key
        CALL (key) { MATCH (:Attribute {namespace, key})<-[s:STATES]-(o:Memory)
                     WHERE o.status = 'active' AND <visible> ... ORDER BY o.createdAt DESC
                     LIMIT 20 RETURN ... }
    """
    query = (
        "CYPHER 25\n"
        "UNWIND $keys AS key\n"
        "CALL (key) {\n"
        "  MATCH (:Attribute {namespace: $namespace, key: key})<-[s:STATES]-(o:Memory)\n"
        f"  WHERE o.status = 'active' AND NOT o.id IN $exclude AND {tenant_visible('o')}\n"
        "  RETURN o, s ORDER BY o.createdAt DESC, o.id DESC LIMIT $perKey\n"
        "}\n"
        "RETURN key, o.id AS id, o.createdAt.epochSeconds * 1000000 + o.createdAt.microsecond"
        " AS at, o.userId AS userId, o.agentId AS agentId, properties(s) AS statement,\n"
        "  [(o)-[u:UPDATES]-(x:Memory) WHERE x.id IN $exclude | x.id] AS linked"
    )
    return query, {**tenant.params(), "keys": sorted(set(keys)), "exclude": list(exclude),
                   "now": now, "perKey": EARLIER_PER_KEY}


def nearest_earlier(*, tenant: Tenant, id: str, lucene: str | None, now: datetime,
                    ids_only: bool = False) -> Query:
    """The memory's nearest active earlier memories the tenant may see, by vector and by
    its words (`lucene`, fenced to the namespace), each with both scores (null where
    that index did not propose it), its cosine and any live link between the two; a
    rejected pair is left out. `ids_only`: each as `id` and the two scores (the write
    path's contrast reading)."""
    query = (
        "CYPHER 25\n"
        f"MATCH (n:Memory {{id: $id}}) WHERE {tenant_visible('n')}\n"
        "CALL (n) {\n"
        "  WITH n WHERE n.embedding IS NOT NULL\n"
        "  MATCH (m:Memory)\n"
        f"    SEARCH m IN (VECTOR INDEX {VECTOR_INDEX} FOR n.embedding"
        " WHERE m.namespace = $namespace AND m.status = 'active' LIMIT $overfetch)"
        " SCORE AS score\n"
        "  RETURN m, score AS vectorScore, null AS textScore\n"
        "  UNION\n"
        "  WITH n WHERE $lucene IS NOT NULL\n"
        f"  CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', $lucene, {{limit: $overfetch}})"
        " YIELD node AS m, score\n"
        "  RETURN m, null AS vectorScore, score AS textScore\n"
        "}\n"
        "WITH n, m, max(vectorScore) AS vectorScore, max(textScore) AS textScore\n"
        "WHERE m.id <> n.id AND m.status = 'active' AND m.createdAt < n.createdAt"
        f" AND {tenant_visible('m')}\n"
        "  AND NOT EXISTS { (n)-[:UPDATES {status: 'rejected'}]-(m) }\n"
        + ("RETURN m.id AS id, vectorScore, textScore" if ids_only else
           "OPTIONAL MATCH (n)-[u:UPDATES]->(m) WHERE u.status IN ['candidate', 'confirmed']\n"
           f"RETURN {project('m')} AS m, vectorScore, textScore,"
           " CASE WHEN size(m.embedding) = size(n.embedding)"
           " THEN 2 * vector.similarity.cosine(m.embedding, n.embedding) - 1 END AS similarity,"
           f" CASE WHEN u IS NULL THEN null ELSE {LINK_PROJECTION} END AS link")
    )
    return query, {**tenant.params(), "id": id, "now": now, "overfetch": OVERFETCH,
                   "lucene": fenced_lucene(lucene, tenant.namespace, None) if lucene else None}


def contrast_candidates(rows: list[dict[str, Any]], exclude: Sequence[str], *,
                        tenant: Tenant, now: datetime) -> Query:
    """Per new memory (`{id, lucene, speaker}`), the earlier active memories the
    tenant may see that may state the same subject: the fulltext index's best
    matches of its words (fenced to the namespace) and its speaker's latest turns,
    each with its text, speaker, session and the links it already has to the batch:

        UNWIND $rows AS row
        CALL (row) { CALL db.index.fulltext.queryNodes(..., row.lucene) ... LIMIT 20
                     UNION MATCH (o)-[:SPOKEN_BY]->(:Entity {key: row.speaker}) ... LIMIT 10 }
    """
    keep = (f"o.status = 'active' AND NOT o.id IN $exclude AND {tenant_visible('o')}"
            " AND o.createdAt IS NOT NULL")
    query = (
        "CYPHER 25\n"
        "UNWIND $rows AS row\n"
        "CALL (row) {\n"
        "  WITH row WHERE row.lucene IS NOT NULL\n"
        f"  CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', row.lucene, {{limit: 60}})"
        " YIELD node AS o, score\n"
        f"  WITH o, score WHERE {keep}\n"
        "  RETURN o ORDER BY score DESC LIMIT $perMemory\n"
        "  UNION\n"
        "  WITH row WHERE row.speaker IS NOT NULL\n"
        "  MATCH (o:Memory)-[:SPOKEN_BY]->(:Entity {namespace: $namespace, key: row.speaker})\n"
        f"  WHERE {keep}\n"
        "  RETURN o ORDER BY o.createdAt DESC LIMIT $perSpeaker\n"
        "}\n"
        "RETURN row.id AS id, o.id AS other, o.content AS content,"
        " o.createdAt.epochSeconds * 1000000 + o.createdAt.microsecond AS at,"
        " [(o)-[:SPOKEN_BY]->(e:Entity) | e.key][0] AS speaker,"
        " o.userId AS userId, o.agentId AS agentId, o.sessionId AS session,\n"
        "  [(o)-[:UPDATES]-(x:Memory) WHERE x.id IN $exclude | x.id] AS linked"
    )
    return query, {**tenant.params(), "rows": rows, "exclude": list(exclude), "now": now,
                   "perMemory": CONTRAST_PER_MEMORY, "perSpeaker": CONTRAST_PER_SPEAKER}


def speakers_named(namespace: str, firsts: list[str]) -> Query:
    """The keys of the namespace's speakers whose first name is one of `firsts`: the
    people a turn that names them may report on."""
    # (the (namespace, key) constraint's index serves the exact and prefix matches)
    query = (
        "CYPHER 25\n"
        "UNWIND $firsts AS first\n"
        "CALL (first) {\n"
        "  MATCH (e:Entity {namespace: $namespace, key: first}) RETURN e\n"
        "  UNION\n"
        "  MATCH (e:Entity {namespace: $namespace}) WHERE e.key STARTS WITH first + ' '\n"
        "  RETURN e\n"
        "}\n"
        "WITH DISTINCT e WHERE EXISTS { (:Memory)-[:SPOKEN_BY]->(e) }\n"
        "RETURN e.key AS key"
    )
    return query, {"namespace": namespace, "firsts": firsts}


def record_statements(rows: list[dict[str, Any]], *, namespace: str) -> Query:
    """Each row `{id, key, statement}`: `(memory)-[:STATES statement]->(attribute)`."""
    query = (
        "CYPHER 25\n"
        "UNWIND $rows AS row\n"
        "MATCH (m:Memory {id: row.id}) WHERE m.namespace = $namespace\n"
        "MATCH (a:Attribute {namespace: $namespace, key: row.key})\n"
        "CREATE (m)-[s:STATES]->(a) SET s = row.statement"
    )
    return query, {"rows": rows, "namespace": namespace}


def create_links(links: list[dict[str, Any]], *, namespace: str, now: datetime) -> Query:
    """Each link `{id, newer, older, kind, confidence, reason, subject, attribute,
    matched, contradictsId}` as a candidate `UPDATES`, unless the pair is linked
    already either way (a rejected pair stays rejected); a contradiction also gets a
    candidate `CONTRADICTS`, which search shows as the hits' `conflicts`."""
    query = (
        "CYPHER 25\n"
        "UNWIND $links AS l\n"
        "MATCH (n:Memory {id: l.newer}) WHERE n.namespace = $namespace\n"
        "MATCH (o:Memory {id: l.older}) WHERE o.namespace = $namespace\n"
        "  AND NOT EXISTS { (n)-[:UPDATES]-(o) }\n"
        "CREATE (n)-[u:UPDATES {id: l.id, kind: l.kind, status: 'candidate',"
        " confidence: l.confidence, reason: l.reason, subject: l.subject,"
        " attribute: l.attribute, matched: l.matched, createdAt: $now}]->(o)\n"
        "FOREACH (_ IN CASE WHEN l.kind = 'contradiction' THEN [1] ELSE [] END |\n"
        "  MERGE (n)-[c:CONTRADICTS]->(o)\n"
        "  ON CREATE SET c.id = l.contradictsId, c.createdAt = $now, c.detected = true,"
        " c.metadataJson = '{\"candidate\":true}')\n"
        "RETURN u.id AS id"
    )
    return query, {"links": links, "namespace": namespace, "now": now}


def auto_superseded(*, tenant: Tenant, newer_ids: Sequence[str]) -> Query:
    """The memories that `newer_ids` superseded on being written: their links were
    confirmed by the namespace's `autoSupersede` when they were made (decided the
    moment they were created), unlike a later `confirmUpdate`."""
    query = (
        "CYPHER 25\n"
        "UNWIND $ids AS id\n"
        "MATCH (n:Memory {id: id})-[u:UPDATES {status: 'confirmed'}]->(old:Memory)\n"
        f"WHERE {owned('n')} AND {owned('old')} AND u.decidedAt = u.createdAt\n"
        f"RETURN {project('old')} AS previous, {project('n')} AS current"
    )
    return query, {**tenant.params(), "ids": list(newer_ids)}


LINK_PROJECTION = ("u {.id, .kind, .status, .confidence, .reason, .subject, .attribute, .matched,"
         " .decidedBy, .note, .proposedBy, .disputedBy, createdAt: u.createdAt.epochSeconds * 1000000"
         " + u.createdAt.microsecond, decidedAt: u.decidedAt.epochSeconds * 1000000"
         " + u.decidedAt.microsecond}")


def list_links(*, tenant: Tenant, statuses: Sequence[str], memory_id: str | None,
               first: int, link_id: str | None = None) -> Query:
    """The namespace's links (or one memory's, either side, or one link by id) whose
    both memories the tenant may see, newest first: a link never names a memory the
    key may not see."""
    if link_id is not None:
        anchor = "MATCH ()-[u:UPDATES {id: $linkId}]->()\n"
    elif memory_id is not None:
        anchor = ("MATCH (x:Memory {id: $memoryId}) WHERE " + owned("x") + "\n"
                  "MATCH (x)-[u:UPDATES]-(:Memory)\n")
    else:
        anchor = ("MATCH (x:Memory) WHERE x.namespace = $namespace\n"
                  "MATCH (x)-[u:UPDATES]->(:Memory)\n")
    query = (
        "CYPHER 25\n" + anchor
        + "WITH DISTINCT u WHERE u.status IN $statuses\n"
        "MATCH (n:Memory)-[u]->(o:Memory)\n"
        f"WHERE {owned('n')} AND {owned('o')}\n"
        f"RETURN {LINK_PROJECTION} AS link, {project('n')} AS newer, {project('o')} AS older\n"
        "ORDER BY u.createdAt DESC, u.id LIMIT $first"
    )
    return query, {**tenant.params(), "statuses": list(statuses), "memoryId": memory_id,
                   "first": first, "linkId": link_id}


def locked_link(*, tenant: Tenant, id: str) -> Query:
    """One link with both its memories, locked (they are about to change), if the
    tenant may see both; and whether confirming it would close a SUPERSEDES cycle."""
    query = (
        "CYPHER 25\n"
        "MATCH (n:Memory)-[u:UPDATES {id: $id}]->(o:Memory)\n"
        f"WHERE {owned('n')} AND {owned('o')}\n"
        "SET n.`_lock` = true, o.`_lock` = true REMOVE n.`_lock`, o.`_lock`\n"
        f"RETURN {LINK_PROJECTION} AS link, n.id AS newer, o.id AS older, n.status AS newerStatus,"
        " o.status AS olderStatus, coalesce(o.memoryType, 'note') AS olderType,\n"
        "  EXISTS { MATCH (o)-[:SUPERSEDES]->+(n) } AS cycle"
    )
    return query, {**tenant.params(), "id": id}


def confirm_link(*, tenant: Tenant, id: str, edge_id: str, actor: str, now: datetime,
                 audit_ids: tuple[str, str]) -> Query:
    """The older memory becomes SUPERSEDED by the newer (kept as history, its state
    before in a revision), `(newer)-[:SUPERSEDES]->(older)`, the link `confirmed`."""
    query = (
        "CYPHER 25\n"
        "MATCH (n:Memory)-[u:UPDATES {id: $id}]->(old:Memory)\n"
        f"WHERE {owned('n')} AND {owned('old')}\n"
        + snapshot("old")
        + "SET old.status = 'superseded', old.supersededAt = $now, old.supersededBy = n.id,\n"
        "    old.version = old.version + 1, old.updatedAt = $now,\n"
        "    u.status = 'confirmed', u.decidedAt = $now, u.decidedBy = $actor\n"
        "MERGE (n)-[s:SUPERSEDES]->(old)\n"
        "ON CREATE SET s.id = $edgeId, s.createdAt = $now,"
        " s.metadataJson = '{\"update\":\"' + u.id + '\"}'\n"
        "WITH n, old, u\n"
        + audit_entry("$auditOld", "old.id", "'supersede'", "old.version",
                      "'{\"supersededBy\":\"' + n.id + '\",\"update\":\"' + u.id + '\"}'")
        + "\n"
        + audit_entry("$auditNew", "n.id", "'confirm-update'", "n.version",
                      "'{\"supersedes\":\"' + old.id + '\",\"update\":\"' + u.id + '\"}'")
        + f"\nRETURN {project('old')} AS previous, {project('n')} AS current"
    )
    return query, {**tenant.params(), "id": id, "edgeId": edge_id, "actor": actor, "now": now,
                   "auditOld": audit_ids[0], "auditNew": audit_ids[1]}


def reject_link(*, tenant: Tenant, id: str, note: str | None, actor: str, now: datetime,
                audit_id: str) -> Query:
    """The link becomes `rejected` (kept, so the pair is never proposed again); the
    CONTRADICTS that detection added beside it goes."""
    query = (
        "CYPHER 25\n"
        "MATCH (n:Memory)-[u:UPDATES {id: $id}]->(o:Memory)\n"
        f"WHERE {owned('n')} AND {owned('o')}\n"
        "SET u.status = 'rejected', u.decidedAt = $now, u.decidedBy = $actor, u.note = $note\n"
        "WITH n, o, u\n"
        "OPTIONAL MATCH (n)-[c:CONTRADICTS {detected: true}]->(o)\n"
        "DELETE c\n"
        "WITH DISTINCT n, o, u\n"
        + audit_entry("$auditId", "o.id", "'reject-update'", "o.version",
                      "'{\"newer\":\"' + n.id + '\",\"update\":\"' + u.id + '\"}'")
        + f"\nRETURN {LINK_PROJECTION} AS link, {project('n')} AS newer, {project('o')} AS older"
    )
    return query, {**tenant.params(), "id": id, "note": note, "actor": actor, "now": now,
                   "auditId": audit_id}


def newer_states(var: str, *, in_chain: bool) -> str:
    """A recall row's field: the memories that update `var` (along live UPDATES
    links, up to three steps), each the tenant may see and written by the search's
    `$now` (so `asOf` sees the state valid then), with the first link on the way:

        COLLECT { MATCH upath = (m)<-[:UPDATES]-{1,3}(unew:Memory) WHERE <every link
                  live, every memory on the way visible and written by $now>
                  RETURN {hops, link, m: <projection of unew>, eid} }
    (its own variable names: the rows it sits in name theirs `n`, `p`, `r`, `x`)
    """
    guard = f"ux.createdAt <= $now AND {allowed('ux')} AND ux.namespace = $namespace"
    if in_chain:
        guard += " AND ux.scopeKey IN $scopeKeys"
    return (
        f"COLLECT {{ MATCH upath = ({var})<-[:UPDATES]-{{1,3}}(unew:Memory)"
        " WHERE all(ur IN relationships(upath) WHERE ur.kind = 'update'"
        " AND ur.status IN ['candidate', 'confirmed']"
        # A candidate the update judge's model disputed waits for a person.
        " AND (ur.status = 'confirmed' OR ur.disputedBy IS NULL))"
        f" AND all(ux IN nodes(upath)[1..] WHERE {guard})"
        f" AND unew.status = 'active' AND {tenant_visible('unew')}"
        " WITH upath, unew, relationships(upath)[0] AS ufirst"
        f" RETURN {{hops: length(upath), link: ufirst {{.id, .kind, .status, .confidence,"
        " .reason, .subject, .attribute, .matched, .proposedBy,"
        " createdAt: ufirst.createdAt.epochSeconds"
        " * 1000000 + ufirst.createdAt.microsecond},"
        f" m: {project_memory('unew')}, eid: elementId(unew)}} }}"
    )
