"""Typed records in the graph: create with their payload subgraph, read, list, revise
working state, discard a task's working memory.

Cypher builders come first (named, returning `(query, params)`), then
`RecordGraph`, whose methods are one business operation each. A record is a
`:Memory` node, so everything that works on memories (edges, forget, audit,
search) works on records too; the extra label comes from the `LABELS`
allow-list and is set with a Cypher 25 dynamic label.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction

from memlattice.core.auth import Tenant
from memlattice.core.errors import Conflict, NotFound
from memlattice.core.model import Status
from memlattice.core.records.payloads import LABELS, Payload, RecordType
from memlattice.graph.audit_queries import audit_entry
from memlattice.graph.client import GraphClient, Query, run
from memlattice.graph.codec import canonical_json, exists, memory_properties
from memlattice.graph.entities import link_mentions, mention_rows
from memlattice.graph.history import record_from_state
from memlattice.graph.indexes import fenced_lucene
from memlattice.graph.prepared_memory import PreparedMemory, new_id
from memlattice.graph.projections import project, project_state
from memlattice.graph.record_codec import (
    Record,
    record_from_record,
    record_properties,
    subgraph_rows,
)
from memlattice.graph.refusals import check_version, refuse_episodic
from memlattice.graph.revision_clauses import monotonic, snapshot, state_at
from memlattice.graph.visibility import allowed, unrestricted, visible

# The caller's bounds (sensitivity clearance, scope levels); None: no restriction.
Clearance = Tenant | None

# Record payload subgraph, written by `create_record` and `replace_subgraph`.
_SUBGRAPH = (
    "CALL (m) { UNWIND $rows.toolCalls AS c\n"
    "  CREATE (m)-[:USED_TOOL]->(:ToolCall {namespace: m.namespace, recordId: m.id,"
    " callId: c.callId, tool: c.tool, argsJson: c.argsJson, result: c.result, at: c.at}) }\n"
    "CALL (m) { UNWIND $rows.toolDeps AS d\n"
    "  MATCH (m)-[:USED_TOOL]->(a:ToolCall {callId: d.source})\n"
    "  MATCH (m)-[:USED_TOOL]->(b:ToolCall {callId: d.target})\n"
    "  CREATE (a)-[:DEPENDS_ON]->(b) }\n"
    "CALL (m) { UNWIND $rows.planNodes AS n\n"
    "  CREATE (m)-[:HAS_NODE]->(:PlanNode {namespace: m.namespace, recordId: m.id,"
    " nodeId: n.nodeId, kind: n.kind, label: n.label, tool: n.tool, argsJson: n.argsJson}) }\n"
    "CALL (m) { UNWIND $rows.planEdges AS e\n"
    "  MATCH (m)-[:HAS_NODE]->(a:PlanNode {nodeId: e.source})\n"
    "  MATCH (m)-[:HAS_NODE]->(b:PlanNode {nodeId: e.target})\n"
    "  CREATE (a)-[:$(e.type)]->(b) }\n"
    "CALL (m) { UNWIND $rows.evidence AS ev\n"
    "  MERGE (e:Evidence {key: ev.key})\n"
    "  ON CREATE SET e.namespace = m.namespace, e.kind = ev.kind, e.ref = ev.ref\n"
    "  MERGE (m)-[:RESTS_ON]->(e) }\n"
)

# The payload subgraph of `m`, as lists of maps, beside its projection.
RECORD_RETURN = (
    "{m} AS m,\n"
    "  COLLECT {{ MATCH (m)-[:USED_TOOL]->(c:ToolCall) RETURN c {{.callId, .tool, .argsJson,"
    " .result, at: c.at, dependsOn: COLLECT {{ MATCH (c)-[:DEPENDS_ON]->(d:ToolCall)"
    " RETURN d.callId }}}} }} AS calls,\n"
    "  COLLECT {{ MATCH (m)-[:HAS_NODE]->(n:PlanNode) RETURN n {{.*}} }} AS nodes,\n"
    "  COLLECT {{ MATCH (m)-[:HAS_NODE]->(a:PlanNode)-[r:DATA|CONTROL]->(b:PlanNode)\n"
    "    RETURN {{source: a.nodeId, target: b.nodeId, kind: type(r)}} }} AS edges,\n"
    "  COLLECT {{ MATCH (m)-[:RESTS_ON]->(e:Evidence) RETURN e {{.kind, .ref}} }} AS evidence"
)


def record_return(var: str = "m") -> str:
    return RECORD_RETURN.format(m=project(var))


def record_return_then(var: str = "m", state: str = "m_then") -> str:
    """`record_return` of `var`'s state as of then (graph.history): `historic` says the
    state is a revision, whose payload subgraph the reader rebuilds from its payload
    unless it is the current one (graph.history.record_from_state)."""
    return (RECORD_RETURN.format(m=project_state(var, state))
            + f",\n  {state}:MemoryRevision AS historic, {var}.payloadJson AS currentPayload")


def clearance_condition(tenant: Clearance, var: str = "m") -> tuple[str, dict[str, Any]]:
    """The tenant's visibility predicate (graph.visibility.allowed) and its parameters;
    None (the consolidation job, acting for the whole namespace) restricts nothing."""
    if tenant is None:
        return "true", unrestricted()
    params = tenant.params()
    return allowed(var), {"sensitivities": params["sensitivities"], "scopes": params["scopes"]}


def believed_at(var: str = "m") -> str:
    """Recorded by `$asOf` and not yet superseded, retracted, forgotten or expired then."""
    return (
        f"{var}.namespace = $namespace AND {var}.createdAt <= $asOf"
        + "".join(f" AND ({var}.{p} IS NULL OR {var}.{p} > $asOf)"
                  for p in ("supersededAt", "retractedAt", "forgottenAt", "expiresAt"))
    )


def create_record(
    *, props: dict[str, Any], label: str, rows: dict[str, list[dict[str, Any]]],
    actor: str, audit_id: str,
) -> Query:
    query = (
        "CYPHER 25\n"
        "CREATE (m:Memory) SET m = $props\n"
        "SET m:$($label)\n"
        "WITH m\n"
        + _SUBGRAPH
        + "WITH m\n"
        # What its content names, as for any memory (graph.entities).
        + link_mentions("m", "$mentions", carried=None)
        + audit_entry("$auditId", "m.id", "'write'", "1", "$details", at="m.createdAt")
        + f"\nRETURN {record_return()}"
    )
    # A new record names no successor: the projection's visibility test has nothing to hide.
    return query, {**unrestricted(), "props": props, "label": label, "rows": rows,
                   "actor": actor, "auditId": audit_id, "namespace": props["namespace"],
                   "mentions": mention_rows(str(props.get("content") or "")),
                   "details": canonical_json({"recordType": props["memoryType"]})}


def get_record(
    *, namespace: str, id: str, now: datetime, as_of: datetime | None, clearance: Clearance,
) -> Query:
    cond, params = clearance_condition(clearance)
    if as_of is None:
        query = (
            "CYPHER 25\n"
            "MATCH (m:Memory {id: $id})\n"
            f"WHERE {visible()} AND {cond}\n"
            f"RETURN {record_return()}"
        )
    else:
        # As it was then (graph.history), within the clearance then and now.
        query = (
            "CYPHER 25\n"
            "MATCH (m:Memory {id: $id})\n"
            f"WHERE {believed_at()} AND {cond}\n"
            + state_at("m", "m_then")
            + f"WITH * WHERE {clearance_condition(clearance, 'm_then')[0]}\n"
            f"RETURN {record_return_then()}"
        )
    return query, {**params, "namespace": namespace, "id": id, "now": now, "asOf": as_of}


def list_records(
    *, namespace: str, types: Sequence[str], statuses: Sequence[str], now: datetime,
    as_of: datetime | None, clearance: Clearance, limit: int, tags: Sequence[str] = (),
    thread_id: str | None = None, task_id: str | None = None, lucene: str | None = None,
) -> Query:
    """Newest first, or by fulltext score with `lucene`. With `as_of`, the records
    believed then, whatever their status now."""
    cond, params = clearance_condition(clearance)
    conds = [believed_at() if as_of is not None else f"{visible()} AND m.status IN $statuses",
             cond]
    # With `as_of` these test the state then (graph.history), and the clearance both.
    s = "m_then" if as_of is not None else "m"
    state_conds = [clearance_condition(clearance, s)[0]] if as_of is not None else []
    if types:
        state_conds.append(f"{s}.memoryType IN $types")
    if tags:
        state_conds.append(f"all(t IN $tags WHERE t IN {s}.tags)")
    if thread_id is not None:
        state_conds.append(f"{s}.threadId = $threadId")
    if task_id is not None:
        state_conds.append(f"{s}.taskId = $taskId")
    if as_of is None:
        conds += state_conds
    if lucene is not None:
        source = ("CALL db.index.fulltext.queryNodes('memory_fulltext', $lucene) YIELD node AS m,"
                  " score\n")
        order = "score DESC, m.id"
    else:
        source, order = "MATCH (m:Memory)\n", "m.createdAt DESC, m.id DESC"
    then = ""
    if as_of is not None:
        then = state_at("m", "m_then") + "WITH * WHERE " + " AND ".join(state_conds) + "\n"
    query = (
        "CYPHER 25\n" + source
        + "WITH * WHERE m.namespace = $namespace AND " + " AND ".join(conds) + "\n"
        + then
        + (f"WITH m ORDER BY {order} LIMIT $limit\n" if as_of is None else
           f"WITH m, m_then ORDER BY {order} LIMIT $limit\n")
        + f"RETURN {record_return() if as_of is None else record_return_then()}"
    )
    return query, {**params, "namespace": namespace, "types": list(types),
                   "statuses": list(statuses), "now": now, "asOf": as_of, "limit": limit,
                   "tags": list(tags), "threadId": thread_id, "taskId": task_id,
                   "lucene": fenced_lucene(lucene, namespace, None) if lucene else None}


def replace_payload(
    *, namespace: str, id: str, props: dict[str, Any], rows: dict[str, list[dict[str, Any]]],
    actor: str, now: datetime, audit_id: str, details: str,
) -> Query:
    """New payload and subgraph for a (locked, checked) record; one version up."""
    query = (
        "CYPHER 25\n"
        "MATCH (m:Memory {id: $id}) WHERE m.namespace = $namespace\n"
        # The state replaced stays readable as of then (graph.history); its subgraph is
        # rebuilt from the snapshot's payloadJson.
        + snapshot("m")
        + "CALL (m) { MATCH (m)-[:USED_TOOL|HAS_NODE]->(x) DETACH DELETE x }\n"
        "CALL (m) { MATCH (m)-[r:RESTS_ON]->() DELETE r }\n"
        f"SET m += $props, m.version = m.version + 1, m.updatedAt = {monotonic()}\n"
        "WITH m\n"
        + _SUBGRAPH
        + "WITH m\n"
        + audit_entry("$auditId", "m.id", "'update'", "m.version", "$details")
        + f"\nRETURN {record_return()}"
    )
    # The record is active (checked under lock): it names no successor to hide.
    return query, {**unrestricted(), "namespace": namespace, "id": id, "props": props,
                   "rows": rows, "actor": actor, "now": now, "auditId": audit_id,
                   "details": details}


def discard_task(*, namespace: str, task_id: str, actor: str, now: datetime,
                 clearance: Clearance) -> Query:
    """Tombstone the active working records of a task (locked, then re-checked)."""
    cond, params = clearance_condition(clearance)
    query = (
        "CYPHER 25\n"
        "MATCH (m:Working) WHERE m.namespace = $namespace AND m.taskId = $taskId"
        f" AND m.status = 'active' AND {cond}\n"
        "SET m.`_lock` = true REMOVE m.`_lock`\n"
        "WITH m WHERE m.status = 'active'\n"
        + snapshot("m")
        + "SET m.status = 'forgotten', m.forgottenAt = $now, m.version = m.version + 1,"
        " m.updatedAt = $now\n"
        "WITH m\n"
        + audit_entry("randomUUID()", "m.id", "'discard'", "m.version", "$details")
        + "\nRETURN m.id AS id ORDER BY id"
    )
    return query, {**params, "namespace": namespace, "taskId": task_id, "actor": actor,
                   "now": now, "details": canonical_json({"taskId": task_id})}


class RecordGraph:
    """Typed records over the memory graph."""

    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def create(
        self, prepared: PreparedMemory, *, type: RecordType, payload: Payload,
        valid_from: datetime | None, valid_to: datetime | None, actor: str,
        extra: dict[str, Any] | None = None, tx: AsyncManagedTransaction | None = None,
    ) -> Record:
        """Create one record with its subgraph, atomically; in `tx` when given."""
        props = memory_properties(
            prepared.input, id=prepared.id, now=prepared.now, embedding=prepared.embedding,
            embedding_model=prepared.embedding_model,
            event=(prepared.event_start, prepared.event_end),
        )
        props.update(record_properties(type, payload, valid_from=valid_from, valid_to=valid_to))
        props.update(extra or {})
        query = create_record(props=props, label=LABELS[type],
                              rows=subgraph_rows(prepared.input.namespace, payload),
                              actor=actor, audit_id=new_id())
        try:
            records = await (run(tx, query) if tx is not None else self.client.write(query))
        except Conflict as exc:
            raise Conflict(f"a memory with id {prepared.id} already exists; ids are unique",
                           id=prepared.id) from exc
        return record_from_record(records[0])

    async def get(
        self, *, namespace: str, id: str, now: datetime, as_of: datetime | None = None,
        clearance: Clearance = None,
    ) -> Record:
        records = await self.client.read(get_record(namespace=namespace, id=id, now=now,
                                                    as_of=as_of, clearance=clearance))
        if not records:
            when = f" as of {as_of.isoformat()}" if as_of else ""
            raise NotFound(f"no record {id} in namespace {namespace}{when}", id=id)
        return record_from_state(records[0])

    async def list(
        self, *, namespace: str, types: Sequence[RecordType | str] = (),
        statuses: Sequence[Status] = (Status.ACTIVE,), now: datetime,
        as_of: datetime | None = None, clearance: Clearance = None, limit: int = 50,
        tags: Sequence[str] = (), thread_id: str | None = None, task_id: str | None = None,
        lucene: str | None = None,
    ) -> list[Record]:
        records = await self.client.read(list_records(
            namespace=namespace, types=[str(t) for t in types],
            statuses=[s.value for s in statuses], now=now, as_of=as_of, clearance=clearance,
            limit=limit, tags=tags, thread_id=thread_id, task_id=task_id, lucene=lucene,
        ))
        return [record_from_state(r) for r in records if exists(r["m"])]

    async def revise_payload(
        self, *, namespace: str, id: str, type: RecordType, payload: Payload,
        expected_version: int | None, actor: str, now: datetime, clearance: Clearance = None,
    ) -> Record:
        """Replace a record's payload in place (working state changes as the task moves)."""

        async def work(tx: AsyncManagedTransaction) -> Record:
            current = await locked(tx, namespace=namespace, id=id, now=now,
                                   clearance=clearance)
            refuse_episodic(current.memory, "updated")
            check_version(current.memory, expected_version)
            if current.memory.status is not Status.ACTIVE:
                raise Conflict(f"record {id} is {current.memory.status.value} and cannot be"
                               " updated")
            if current.type != type.value:
                raise Conflict(f"record {id} is {current.type}, not {type.value}",
                               actual=current.type)
            props = record_properties(type, payload, valid_from=current.valid_from,
                                      valid_to=current.valid_to)
            records = await run(tx, replace_payload(
                namespace=namespace, id=id, props=props, rows=subgraph_rows(namespace, payload),
                actor=actor, now=now, audit_id=new_id(),
                details=canonical_json({"fields": ["payload"]}),
            ))
            return record_from_record(records[0])

        return await self.client.transaction(work)

    async def discard_task(
        self, *, namespace: str, task_id: str, actor: str, now: datetime,
        clearance: Clearance = None,
    ) -> builtins.list[str]:
        records = await self.client.write(discard_task(namespace=namespace, task_id=task_id,
                                                       actor=actor, now=now,
                                                       clearance=clearance))
        return [r["id"] for r in records]


def lock_record(*, namespace: str, id: str, now: datetime, clearance: Clearance) -> Query:
    """Take the record's write lock, then read it with its subgraph.

    A record above the caller's clearance is not found: it cannot be revised blind.
    """
    cond, params = clearance_condition(clearance)
    query = (
        "CYPHER 25\n"
        "MATCH (m:Memory {id: $id})\n"
        f"WHERE {visible()} AND {cond}\n"
        "SET m.`_lock` = true REMOVE m.`_lock`\n"
        "WITH m WHERE m.id IS NOT NULL\n"
        f"RETURN {record_return()}"
    )
    return query, {**params, "namespace": namespace, "id": id, "now": now}


async def locked(tx: AsyncManagedTransaction, *, namespace: str, id: str,
                 now: datetime, clearance: Clearance = None) -> Record:
    """The first step of every read-check-write on a record."""
    records = await run(tx, lock_record(namespace=namespace, id=id, now=now,
                                        clearance=clearance))
    if not records:
        raise NotFound(f"no record {id} in namespace {namespace}", id=id)
    return record_from_record(records[0])
