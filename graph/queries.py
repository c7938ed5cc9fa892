"""Every Cypher statement about memories, as builders returning `(query, params)`.

Rules kept here: values are always `$parameters`; relationship types come only
from the `EdgeType` allow-list and are passed as `$(type)` dynamic types;
every statement is pinned to Cypher 25 (the `SEARCH` clause and `CALL ()`
scoping need it, and pinning keeps behaviour independent of the server's
default language); every read names `$namespace` and applies the expiry rule.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memlattice.core.auth import Tenant
from memlattice.core.model import Direction, EdgeType, MemoryFilter, Sensitivity
from memlattice.graph.client import Query
from memlattice.graph.codec import MEMORY_TIMES, meta_value, search_token

VECTOR_INDEX = "memory_embedding"
FULLTEXT_INDEX = "memory_fulltext"

# A memory is visible in `$namespace` at `$now` when it belongs there and has not expired.
_VISIBLE = "{m}.namespace = $namespace AND ({m}.expiresAt IS NULL OR {m}.expiresAt > $now)"
# Times leave Neo4j as integer microseconds since the epoch: hydrating driver
# DateTime objects cost more than the whole index query for a page of results.
TIME_PROPERTIES = ("createdAt", "updatedAt", "expiresAt", "lastAccessedAt", "supersededAt",
                   "forgottenAt", "lastReinforcedAt")


def visible(var: str = "m") -> str:
    return _VISIBLE.format(m=var)


# What a tenant may see of a node in its namespace: sensitivity up to its clearance
# (unset counts as low) and scope levels up to its key's maximum (`$scopes` null =
# every level; unscoped memories belong to the whole namespace). Every builder that
# takes a `Tenant` applies it, with `$namespace`, `$sensitivities` and `$scopes`
# coming from `Tenant.params()` only.
_ALLOWED = ("coalesce({m}.sensitivity, 'low') IN $sensitivities"
            " AND ($scopes IS NULL OR coalesce({m}.scope, 'namespace') IN $scopes)")


def allowed(var: str = "m") -> str:
    return _ALLOWED.format(m=var)


def owned(var: str = "m") -> str:
    """In the tenant's namespace and within its clearance and scopes (expired or not)."""
    return f"{var}.namespace = $namespace AND {allowed(var)}"


def tenant_visible(var: str = "m") -> str:
    """`visible` and `allowed`: what a tenant's reads return."""
    return f"{visible(var)} AND {allowed(var)}"


def unrestricted() -> dict[str, Any]:
    """`$sensitivities` and `$scopes` that admit everything: for statements that act
    for the whole namespace (a job, an event snapshot filtered per subscriber later)
    but project memories, whose projection applies them (`shown_successor`)."""
    return {"sensitivities": [s.value for s in Sensitivity], "scopes": None}


def shown_successor(var: str = "m") -> str:
    """`var.supersededBy`, or null unless the successor it names is `owned` by the
    tenant: a memory the caller may not see must not be named by one it may (and a
    successor erased since is named by nothing). An expression, so every projection
    redacts in the same round trip; it reads `$namespace`, `$sensitivities`, `$scopes`."""
    return (f"CASE WHEN {var}.supersededBy IS NOT NULL AND EXISTS {{"
            f" MATCH (successor:Memory {{id: {var}.supersededBy}})"
            f" WHERE {owned('successor')} }} THEN {var}.supersededBy END")


# What `graph.codec.memory_from_properties` reads, times apart: a search reads
# dozens of candidates, and naming these keeps the vector, the `meta.*` filter
# copies and record payloads out of every candidate row.
MEMORY_PROPERTIES = (
    "id", "namespace", "content", "status", "version", "key", "valueJson", "summary", "tags",
    "metadataJson", "memoryType", "salience", "scope", "agentId", "userId", "sessionId",
    "taskId", "confidence", "sensitivity", "source", "sourceType", "extractionMethod",
    "provenanceJson", "accessCount", "embeddingModel", "embeddingDimension", "reinforcements",
)


def project_memory(var: str = "m", *, embedding: bool = False,
                   embedding_expr: str | None = None) -> str:
    """Like `project`, but only the properties a `Memory` is made of."""
    times = ", ".join(f"{p}: {var}.{p}.epochSeconds * 1000000 + {var}.{p}.microsecond"
                      for p in TIME_PROPERTIES)
    fields = ", ".join(f".{p}" for p in MEMORY_PROPERTIES)
    if embedding_expr is not None:
        vector = f", embedding: {embedding_expr}"
    else:
        vector = ", .embedding" if embedding else ""
    return f"{var} {{{fields}{vector}, {times}, supersededBy: {shown_successor(var)}}}"


def project(var: str = "m", *, embedding: bool = False, embedding_expr: str | None = None) -> str:
    """A memory's properties as a map, times as epoch microseconds, vector only on request
    (`embedding_expr` puts another expression, such as a side-space vector, in its place),
    `supersededBy` only when the tenant may see the successor (`shown_successor`)."""
    times = ", ".join(f"{p}: {var}.{p}.epochSeconds * 1000000 + {var}.{p}.microsecond"
                      for p in TIME_PROPERTIES)
    if embedding_expr is not None:
        vector = f", embedding: {embedding_expr}"
    else:
        vector = "" if embedding else ", embedding: null"
    return f"{var} {{.*{vector}, {times}, supersededBy: {shown_successor(var)}}}"


# ------------------------------------------------------------------ history (graph.history)

REVISION = "MemoryRevision"
# Properties of a memory its revisions do not copy: identity (kept as `memoryId`),
# the vector, the fulltext fence tokens (derived), transient locks.
_NOT_COPIED = ("id", "embedding", "nsToken", "scopeToken", "`_lock`")


def snapshot(var: str = "m", *, until: str = "$now", imports: str = "", when: str = "") -> str:
    """Cypher: copy `var`'s current state into a revision that ended at `until`.

    Goes right before the clause that changes `var` in place, so the copy is made
    in the same transaction. It takes `var`'s write lock first (callers that have
    not already), so what it copies is the latest commit, the very state the
    change replaces. MERGE on (memoryId, version) keeps one revision per version
    even after an import rolled a memory back to a version whose revision exists
    already. `imports`: more variables `until` or `when` need (`, row`); `when`: a
    condition on them, to snapshot only some rows.
    """
    # A null in the map leaves the property out: the vector is never copied.
    state = f"{var} {{.*, " + ", ".join(f"{p}: null" for p in _NOT_COPIED) + "}"
    return (
        f"CALL ({var}{imports}) {{\n"
        + (f"  WITH * WHERE {when}\n" if when else "")
        + f"  SET {var}.`_lock` = true REMOVE {var}.`_lock`\n"
        f"  MERGE (rev:{REVISION} {{memoryId: {var}.id, version: {var}.version}})\n"
        f"  SET rev = {state}, rev.memoryId = {var}.id, rev.recordedFrom = {var}.updatedAt,"
        f" rev.recordedUntil = {monotonic(var, until)}\n"
        f"  MERGE ({var})-[:HAS_REVISION]->(rev) }}\n"
    )


def monotonic(var: str = "m", now: str = "$now") -> str:
    """`now`, or `var`'s `updatedAt` if that is later: a writer that took its time
    before a concurrent one but its lock after it must not end a version before the
    version began. The time an in-place edit gives `updatedAt`."""
    return f"CASE WHEN {now} > {var}.updatedAt THEN {now} ELSE {var}.updatedAt END"


def state_at(var: str = "m", state: str = "m_then") -> str:
    """Cypher: bind `state` to the node holding `var`'s state at `$asOf`: the
    revision of lowest version that was still current after `$asOf`, else `var`."""
    return (
        f"CALL ({var}) {{ OPTIONAL MATCH ({var})-[:HAS_REVISION]->(rev:{REVISION})"
        f" WHERE rev.recordedUntil > $asOf AND rev.version < {var}.version\n"
        f"  WITH rev ORDER BY rev.version LIMIT 1 RETURN coalesce(rev, {var}) AS {state} }}\n"
    )


def project_state(var: str = "m", state: str = "m_then", *, embedding: str | None = None) -> str:
    """`state` (a revision of `var`, or `var`) as `project` maps a memory; the vector
    is never a revision's (`embedding`: an expression for the current one)."""
    times = ", ".join(f"{p}: {state}.{p}.epochSeconds * 1000000 + {state}.{p}.microsecond"
                      for p in TIME_PROPERTIES)
    return (f"{state} {{.*, id: {var}.id, embedding: {embedding or 'null'}, {times},"
            f" memoryId: null, recordedFrom: null, recordedUntil: null,"
            f" supersededBy: {shown_successor(state)}}}")


_AUDIT = (
    "CREATE (:AuditEntry {{id: {id}, memoryId: {memory}, namespace: $namespace,"
    " operation: {op}, actor: $actor, at: {at}, version: {version}, detailsJson: {details}"
    "{extra}}})"
)


def _audit(
    id: str, memory: str, op: str, version: str, details: str = "null", at: str = "$now",
    extra: str = "",
) -> str:
    """A CREATE clause for one audit entry; every argument is a Cypher expression
    (`extra`: more `key: expression` pairs)."""
    return _AUDIT.format(id=id, memory=memory, op=op, version=version, details=details, at=at,
                         extra=f", {extra}" if extra else "")


# ------------------------------------------------------------------ writes


def instant(parts: str) -> str:
    """The UTC datetime a `codec.epoch_parts` pair (a Cypher expression) stands for;
    null stays null."""
    return (f"CASE WHEN {parts} IS NULL THEN null"
            f" ELSE datetime({{epochSeconds: {parts}[0], nanosecond: {parts}[1]}}) END")


def create_memories(rows: list[dict[str, Any]], *, tenant: Tenant, actor: str) -> Query:
    """One UNWIND round trip for any batch: nodes plus their `write` audit entries.

    Each row is `{props, times, auditId}`: the properties without their times,
    and the times (`codec.MEMORY_TIMES`, in that order) as epoch parts, which
    are far cheaper to send than datetimes. `createdAt` may differ per row when
    a caller replays history with its own `now`.
    """
    times = ", ".join(f"m.{name} = {instant(f'row.times[{i}]')}"
                      for i, name in enumerate(MEMORY_TIMES))
    query = (
        "CYPHER 25\n"
        "UNWIND $rows AS row\n"
        "CREATE (m:Memory)\n"
        f"SET m = row.props, {times}\n"
        "WITH m, row\n"
        + _audit("row.auditId", "m.id", "'write'", "1", at="m.createdAt")
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
    audit_id: str, details: str,
) -> Query:
    query = (
        "CYPHER 25\n"
        f"MATCH (m:Memory {{id: $id}}) WHERE {owned()}\n"
        + snapshot("m")
        + f"SET m += $props, m.version = m.version + 1, m.updatedAt = {monotonic()}\n"
        "WITH m\n"
        + _audit("$auditId", "m.id", "'update'", "m.version", "$details")
        + f"\nRETURN {project()} AS m"
    )
    params = {**tenant.params(), "id": id, "props": props, "actor": actor, "now": now,
              "auditId": audit_id, "details": details}
    return query, params


def supersede_memory(
    *, tenant: Tenant, id: str, props: dict[str, Any], edge_id: str, actor: str,
    now: datetime, audit_ids: tuple[str, str],
) -> Query:
    """Create the successor, retire the old memory, join them with SUPERSEDES."""
    query = (
        "CYPHER 25\n"
        f"MATCH (old:Memory {{id: $id}}) WHERE {owned('old')}\n"
        + snapshot("old")
        + "CREATE (m:Memory) SET m = $props\n"
        "SET old.status = 'superseded', old.supersededAt = $now, old.supersededBy = m.id,\n"
        "    old.version = old.version + 1, old.updatedAt = $now\n"
        "CREATE (m)-[:SUPERSEDES {id: $edgeId, createdAt: $now, metadataJson: '{}'}]->(old)\n"
        "WITH m, old\n"
        + _audit("$auditNew", "m.id", "'write'", "1", "'{\"supersedes\":\"' + old.id + '\"}'")
        + "\n"
        + _audit("$auditOld", "old.id", "'supersede'", "old.version",
                 "'{\"supersededBy\":\"' + m.id + '\"}'")
        + f"\nRETURN {project('old')} AS previous, {project()} AS current"
    )
    params = {**tenant.params(), "id": id, "props": props, "edgeId": edge_id,
              "actor": actor, "now": now, "auditNew": audit_ids[0], "auditOld": audit_ids[1]}
    return query, params


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
        + _audit("randomUUID()", "m.id", "'forget'", "m.version")
        + "\nRETURN m.id AS id ORDER BY id"
    )
    return query, {**params, **tenant.params(), "now": now, "actor": actor,
                   "lucene": fenced_lucene(fulltext, tenant.namespace, None) if fulltext
                   else None}


def delete_memory(*, tenant: Tenant, id: str, actor: str, now: datetime, audit_id: str) -> Query:
    """Hard erase: the node and its relationships go; an audit entry stays behind."""
    query = (
        "CYPHER 25\n"
        f"MATCH (m:Memory {{id: $id}}) WHERE {owned()}\n"
        "SET m.`_lock` = true REMOVE m.`_lock`\n"
        # A node deleted by a concurrent transaction reads as all-null once locked.
        "WITH m WHERE m.id IS NOT NULL\n"
        # The delete entry keeps what decides who may read the trail of a memory
        # that no longer exists (see audit_trail).
        "WITH m, m.id AS memoryId, m.version + 1 AS version,"
        " coalesce(m.sensitivity, 'low') AS sensitivity, m.scope AS scope\n"
        # Its vectors in side spaces (graph.vector_spaces) go with it.
        "CALL (m) { MATCH (m)<-[:EMBEDS]-(v:MemoryVector) DETACH DELETE v }\n"
        # So do a typed record's payload nodes (graph.records); shared Evidence stays.
        "CALL (m) { MATCH (m)-[:USED_TOOL|HAS_NODE]->(x) DETACH DELETE x }\n"
        # And its history (graph.history): an erased memory has no earlier versions.
        "CALL (m) { MATCH (m)-[:HAS_REVISION]->(r:MemoryRevision) DETACH DELETE r }\n"
        "DETACH DELETE m\n"
        "WITH memoryId, version, sensitivity, scope\n"
        + _audit("$auditId", "memoryId", "'delete'", "version",
                 extra="sensitivity: sensitivity, scope: scope")
        + "\nRETURN memoryId"
    )
    return query, {**tenant.params(), "id": id, "actor": actor, "now": now,
                   "auditId": audit_id}


# ------------------------------------------------------------------ reads


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


def believed(var: str = "m") -> str:
    """Believed at `$asOf`: recorded by then, not yet retired then (see MemoryFilter.as_of)."""
    return f"{var}.createdAt <= $asOf" + "".join(
        f" AND ({var}.{p} IS NULL OR {var}.{p} > $asOf)"
        for p in ("supersededAt", "retractedAt", "forgottenAt", "expiresAt"))


def filter_conditions(f: MemoryFilter, var: str = "m", state: str | None = None
                      ) -> tuple[list[str], dict[str, Any]]:
    """WHERE conditions (beyond namespace and expiry) for a MemoryFilter.

    With `as_of`, `state` names the node holding `var`'s state then (`state_at`):
    the time rules test `var` (the current node knows when it was retired), every
    other condition tests the state then, so `tags`, `metadata` etc. match as of then.
    """
    conds = []
    params: dict[str, Any] = {"statuses": [s.value for s in f.statuses]}
    if f.as_of is not None:
        conds.append(believed(var))
        params["asOf"] = f.as_of
    var = state or var
    conds.append(f"{var}.status IN $statuses")
    if f.scope_keys is not None:
        conds.append(f"{var}.scopeKey IN $scopeKeys")
        params["scopeKeys"] = list(f.scope_keys)
    if f.scope is not None:
        # A level; the ids below narrow it (see MemoryFilter.indexed_scope_keys).
        conds.append(f"{var}.scope = $scopeLevel")
        params["scopeLevel"] = f.scope.value
    for field, prop in (("agent_id", "agentId"), ("user_id", "userId"),
                        ("session_id", "sessionId"), ("task_id", "taskId")):
        value = getattr(f, field)
        if value is not None:
            conds.append(f"{var}.{prop} = ${prop}")
            params[prop] = value
    if f.key is not None:
        conds.append(f"{var}.key = $key")
        params["key"] = f.key
    if f.tags_any:
        conds.append(f"any(t IN {var}.tags WHERE t IN $tagsAny)")
        params["tagsAny"] = list(f.tags_any)
    if f.tags_all:
        conds.append(f"all(t IN $tagsAll WHERE t IN {var}.tags)")
        params["tagsAll"] = list(f.tags_all)
    if f.metadata:
        conds.append(f"all(k IN keys($meta) WHERE {var}['meta.' + k] = $meta[k])")
        params["meta"] = {k: meta_value(v) for k, v in f.metadata.items()}
    if f.source_type is not None:
        conds.append(f"{var}.sourceType = $sourceType")
        params["sourceType"] = f.source_type
    if f.memory_types:
        conds.append(f"{var}.memoryType IN $memoryTypes")
        params["memoryTypes"] = list(f.memory_types)
    if f.min_confidence is not None:
        conds.append(f"{var}.confidence >= $minConfidence")
        params["minConfidence"] = f.min_confidence
    if f.created_after is not None:
        conds.append(f"{var}.createdAt >= $createdAfter")
        params["createdAfter"] = f.created_after
    if f.created_before is not None:
        conds.append(f"{var}.createdAt < $createdBefore")
        params["createdBefore"] = f.created_before
    return conds, params


def list_memories(
    f: MemoryFilter, *, tenant: Tenant, now: datetime, first: int,
    after: tuple[datetime, str] | None,
) -> Query:
    """A page (newest first, keyset cursor) and the filter's total, in one round trip."""
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
    if after is not None:
        keyset = (" AND (m.createdAt < $afterAt OR (m.createdAt = $afterAt AND m.id < $afterId))")
        params.update(afterAt=after[0], afterId=after[1])
    query = (
        "CYPHER 25\n"
        f"CALL () {{ {match} RETURN count(m) AS total }}\n"
        f"CALL () {{ {match}{keyset}\n"
        f"  WITH {carry} ORDER BY m.createdAt DESC, m.id DESC LIMIT $limit\n"
        f"  RETURN collect({shown}) AS page }}\n"
        "RETURN total, page"
    )
    return query, {**params, **tenant.params(), "now": now, "limit": first + 1}


def fenced_lucene(terms: str, namespace: str, scope_keys: tuple[str, ...] | None) -> str:
    """Restrict a (safe, escaped) Lucene query to a namespace and scope chain in-index."""
    query = f"({terms}) AND nsToken:{search_token(namespace)}"
    if scope_keys is not None:
        tokens = " ".join(search_token(k) for k in scope_keys)
        query += f" AND scopeToken:({tokens})"
    return query


# ------------------------------------------------------------------ edges


def add_edges(
    rows: list[dict[str, Any]], *, tenant: Tenant, actor: str, now: datetime
) -> Query:
    """Relate memories in one UNWIND; one relationship per (source, type, target).

    Each row is `{source, target, type, edgeId, metadataJson, auditId}`. Adding
    an existing relationship again is idempotent: with the same metadata it
    changes nothing and writes no audit entry; with other metadata it updates
    them, audited once. Rows whose endpoints are missing produce no output
    row, which is how the caller detects them.
    """
    query = (
        "CYPHER 25\n"
        "UNWIND $rows AS row\n"
        f"MATCH (a:Memory {{id: row.source}}) WHERE {tenant_visible('a')}\n"
        f"MATCH (b:Memory {{id: row.target}}) WHERE {tenant_visible('b')}\n"
        "MERGE (a)-[r:$(row.type)]->(b)\n"
        "ON CREATE SET r.id = row.edgeId, r.createdAt = $now, r.metadataJson = row.metadataJson\n"
        "WITH a, b, r, row, r.id = row.edgeId AS created,"
        " coalesce(r.metadataJson, '') <> row.metadataJson AS changed\n"
        "SET r.metadataJson = row.metadataJson\n"
        "WITH a, b, r, row, created, changed\n"
        "CALL (a, b, r, row, created, changed) {\n"
        "  WITH * WHERE created OR changed\n  "
        + _audit("row.auditId", "a.id", "'link'", "null",
                 "'{\"edge\":\"' + r.id + '\",\"type\":\"' + type(r) + '\",\"target\":\"' + b.id + '\"}'")
        + "\n}\n"
        "RETURN r {.*} AS r, type(r) AS type, a.id AS source, b.id AS target"
    )
    return query, {"rows": rows, **tenant.params(), "actor": actor, "now": now}


def lock_supersedes_chains(pairs: list[dict[str, str]]) -> Query:
    """Write-lock every memory a new SUPERSEDES target leads to (itself included).

    A concurrent addEdge that would close a cycle through these nodes holds one
    of these locks (MERGE locks both ends), so the check that follows, in its
    own statement, sees that edge committed (or deadlocks, and the retried
    transaction sees it).
    """
    query = (
        "CYPHER 25\n"
        "UNWIND $pairs AS pair\n"
        "MATCH (b:Memory {id: pair.target})\n"
        "MATCH (b)-[:SUPERSEDES*0..]->(x:Memory)\n"
        "WITH DISTINCT x\n"
        "SET x.`_lock` = true REMOVE x.`_lock`\n"
        "RETURN count(x) AS locked"
    )
    return query, {"pairs": pairs}


def supersedes_cycle(pairs: list[dict[str, str]]) -> Query:
    """A SUPERSEDES cycle through a new edge source -> target: a path target -> source.

    Run after the edges are written, in their transaction: the cycle a batch
    closes with its own rows is found too.
    """
    query = (
        "CYPHER 25\n"
        "UNWIND $pairs AS pair\n"
        "MATCH (a:Memory {id: pair.source}), (b:Memory {id: pair.target})\n"
        "MATCH p = SHORTEST 1 (b)-[:SUPERSEDES]->+(a)\n"
        "RETURN [n IN nodes(p) | n.id] AS cycle\n"
        "LIMIT 1"
    )
    return query, {"pairs": pairs}


_PATTERNS = {
    Direction.OUT: "(m)-[r]->(o)",
    Direction.IN: "(m)<-[r]-(o)",
    Direction.BOTH: "(m)-[r]-(o)",
}


def list_edges(
    *, tenant: Tenant, id: str, types: list[EdgeType], direction: Direction, now: datetime
) -> Query:
    query = (
        "CYPHER 25\n"
        f"MATCH (m:Memory {{id: $id}}) WHERE {tenant_visible()}\n"
        f"MATCH {_PATTERNS[direction]}\n"
        f"WHERE type(r) IN $types AND {tenant_visible('o')}\n"
        "RETURN r {.*} AS r, type(r) AS type, startNode(r).id AS source, endNode(r).id AS target\n"
        "ORDER BY r.createdAt, r.id"
    )
    return query, {**tenant.params(), "id": id, "types": [t.value for t in types],
                   "now": now}


def delete_edge(*, tenant: Tenant, edge_id: str, actor: str, now: datetime, audit_id: str) -> Query:
    query = (
        "CYPHER 25\n"
        "MATCH (a:Memory)-[r]->(b:Memory)\n"
        f"WHERE r.id = $edgeId AND {owned('a')} AND {owned('b')}\n"
        "WITH a, b, r, r.id AS edgeId, type(r) AS type\n"
        "DELETE r\n"
        "WITH a, b, edgeId, type\n"
        + _audit("$auditId", "a.id", "'unlink'", "null",
                 "'{\"edge\":\"' + edgeId + '\",\"type\":\"' + type + '\",\"target\":\"' + b.id + '\"}'")
        + "\nRETURN edgeId"
    )
    return query, {**tenant.params(), "edgeId": edge_id, "actor": actor, "now": now,
                   "auditId": audit_id}


def hidden(expr: str) -> str:
    """Cypher: whether the memory id `expr` names one of the namespace that the tenant
    may not see: a live memory outside `allowed`, or an erased one whose `delete`
    entry recorded a sensitivity or scope outside it."""
    return (
        f"(EXISTS {{ MATCH (h:Memory {{id: {expr}}}) WHERE h.namespace = $namespace"
        f" AND NOT ({allowed('h')}) }}"
        f" OR (NOT EXISTS {{ MATCH (h:Memory {{id: {expr}}}) WHERE h.namespace = $namespace }}"
        f" AND EXISTS {{ MATCH (h:AuditEntry {{memoryId: {expr}}})"
        f" WHERE h.namespace = $namespace AND h.operation = 'delete'"
        f" AND NOT ({allowed('h')}) }}))"
    )


def audit_trail(*, tenant: Tenant, id: str) -> Query:
    """A memory's trail, if the tenant may see the memory: the live node decides, and
    once it is deleted, the sensitivity and scope its `delete` entry recorded.

    Each entry comes with `hidden`: the ids its details name (a linked target, a
    successor, a predecessor, a merge...) that the tenant may not see, for the
    reader to redact (`graph.codec.audit_from_properties`). Details are JSON text,
    which Cypher cannot parse; every JSON string is a part between two quotes, so
    splitting on `"` offers each one to an index look-up (escaped quotes inside an
    id would defeat this; ids are checked whole)."""
    query = (
        "CYPHER 25\n"
        "OPTIONAL MATCH (m:Memory {id: $id}) WHERE m.namespace = $namespace\n"
        "MATCH (a:AuditEntry {memoryId: $id}) WHERE a.namespace = $namespace\n"
        "WITH m, collect(a) AS entries\n"
        f"WHERE CASE WHEN m IS NOT NULL THEN {allowed('m')}\n"
        "  ELSE all(d IN [e IN entries WHERE e.operation = 'delete'] WHERE"
        f" {allowed('d')}) END\n"
        "UNWIND entries AS a\n"
        "RETURN a {.*} AS a,\n"
        "  [t IN split(coalesce(a.detailsJson, ''), '\"') WHERE t <> $id AND size(t) > 0"
        f" AND {hidden('t')}] AS hidden\n"
        "ORDER BY a.at, coalesce(a.version, 0), a.id"
    )
    return query, {**tenant.params(), "id": id}


# ------------------------------------------------------------------ embedding cache


def cache_get(*, model: str, digests: list[str]) -> Query:
    query = (
        "CYPHER 25\nUNWIND $keys AS key\n"
        "MATCH (e:EmbeddingCache {key: key})\n"
        "RETURN e.digest AS digest, e.vector AS vector"
    )
    return query, {"keys": [f"{model}|{d}" for d in digests]}


def cache_put(*, model: str, items: list[dict[str, Any]]) -> Query:
    query = (
        "CYPHER 25\nUNWIND $items AS item\n"
        "MERGE (e:EmbeddingCache {key: $model + '|' + item.digest})\n"
        "ON CREATE SET e.model = $model, e.digest = item.digest, e.vector = item.vector"
    )
    return query, {"model": model, "items": items}


# ------------------------------------------------------------------ access counts


def bump_access(*, namespace_counts: list[dict[str, Any]], now: datetime) -> Query:
    """Add recall counts in one statement; rows are `{namespace, id, count}`."""
    query = (
        "CYPHER 25\nUNWIND $rows AS row\n"
        "MATCH (m:Memory {id: row.id}) WHERE m.namespace = row.namespace\n"
        "SET m.accessCount = coalesce(m.accessCount, 0) + row.count, m.lastAccessedAt = $now"
    )
    return query, {"rows": namespace_counts, "now": now}


# ------------------------------------------------------------------ namespace configuration


def configure_namespace(*, namespace: str, settings_json: str, actor: str, now: datetime) -> Query:
    """Record a namespace's search defaults; the latest configuration wins."""
    query = (
        "CYPHER 25\n"
        "MERGE (c:NamespaceConfig {namespace: $namespace})\n"
        "ON CREATE SET c.version = 0\n"
        "SET c.version = c.version + 1, c.settingsJson = $settingsJson, c.updatedAt = $now,\n"
        "    c.updatedBy = $actor\n"
        "RETURN c {.*} AS c"
    )
    return query, {"namespace": namespace, "settingsJson": settings_json, "actor": actor,
                   "now": now}


def get_namespace_config(*, namespace: str) -> Query:
    query = ("CYPHER 25\nMATCH (c:NamespaceConfig {namespace: $namespace})\n"
             "RETURN c {.*} AS c")
    return query, {"namespace": namespace}
