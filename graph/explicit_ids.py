"""Writes that name their own id: stored under it, the same memory again, or refused.

An id names one memory across the whole server (the `memory_id` constraint), so
a write that brings its own id meets one of three cases, decided inside the
write's transaction before anything is created:

- no memory holds the id: the write is stored under it (never deduplicated
  against another memory: the caller asked for that id);
- a memory of the caller's namespace, within its clearance and scopes, holds
  the id with the same content and identity (`core.duplicates.DuplicateIdentity`):
  a retry, answered with that memory as it is (`WriteEffect.UNCHANGED`), nothing written;
- typed records (writeRecord) likewise, where "the same" also means the same
  payload (`claim_record_id`);
- any other holder (other content, another scope or type, another namespace, or
  one the key may not see): `IdTaken`, a CONFLICT whose message and details are
  the same in every case, so it tells nothing of the holder's namespace or content.
"""

from __future__ import annotations

from collections.abc import Sequence

from neo4j import AsyncManagedTransaction

from memlattice.core.auth import Tenant
from memlattice.core.duplicates import identity_of
from memlattice.core.errors import Conflict
from memlattice.graph.client import Query, run
from memlattice.graph.codec import Memory, memory_from_properties
from memlattice.graph.identity_clauses import SAME_IDENTITY
from memlattice.graph.prepared_memory import PreparedMemory
from memlattice.graph.projections import project
from memlattice.graph.record_codec import Record, record_from_record
from memlattice.graph.records import record_return
from memlattice.graph.visibility import owned


class IdTaken(Conflict):
    """The id a write names belongs to another memory (see the module docstring)."""

    def __init__(self, id: str, index: int) -> None:
        super().__init__(
            f"the id {id} already names another memory; an id is unique across the server"
            " (write without an id, or choose another)", id=id, index=index)


class RepeatedId(Conflict):
    """Two inputs of one batch name the same id: which one, and where it came again,
    so a caller can find the input among hundreds (the batch writes nothing)."""

    def __init__(self, id: str, first: int, index: int) -> None:
        super().__init__(f"the batch names the same id twice: {id} (inputs {first} and {index})",
                         id=id, index=index, first=first)


def refuse_repeated_ids(ids: Sequence[str | None]) -> None:
    """`RepeatedId` for the first id of `ids` (None: an input without one) seen again."""
    seen: dict[str, int] = {}
    for index, id in enumerate(ids):
        if id is None:
            continue
        if id in seen:
            raise RepeatedId(id, seen[id], index)
        seen[id] = index


def holders(rows: list[dict[str, object]], *, tenant: Tenant) -> Query:
    """Per row (`{index, id, contentHash, ...identity}`) whose id is taken: whether the
    holder is this write again (`same`) and, only then, the holder's projection."""
    query = (
        "CYPHER 25\n"
        "UNWIND $rows AS row\n"
        "MATCH (m:Memory {id: row.id})\n"
        f"WITH row, m, ({owned()} AND m.contentHash = row.contentHash"
        f" AND {SAME_IDENTITY}) AS same\n"
        f"RETURN row.index AS index, same, CASE WHEN same THEN {project()} END AS m"
    )
    return query, {**tenant.params(), "rows": rows}


async def claim_ids(tx: AsyncManagedTransaction, memories: Sequence[PreparedMemory],
                    named: Sequence[int], *, tenant: Tenant) -> dict[int, Memory]:
    """The inputs at `named` whose id already holds this very memory, by position;
    raises IdTaken for the first whose id another memory holds."""
    if not named:
        return {}
    rows: list[dict[str, object]] = [
        {"index": i, "id": memories[i].id, **identity_of(memories[i].input).params()}
        for i in named]
    same: dict[int, Memory] = {}
    for record in sorted(await run(tx, holders(rows, tenant=tenant)),
                         key=lambda r: int(r["index"])):
        index = int(record["index"])
        if not record["same"]:
            raise IdTaken(memories[index].id, index)
        same[index] = memory_from_properties(record["m"])
    return same


def record_holder(row: dict[str, object], *, tenant: Tenant) -> Query:
    """`holders` for one typed record (`row` adds its `payloadJson`), whose result is
    the record as its queries read it (graph.records.record_return)."""
    query = (
        "CYPHER 25\n"
        "WITH $row AS row\n"
        "MATCH (m:Memory {id: row.id})\n"
        f"WITH row, m, ({owned()} AND m.contentHash = row.contentHash"
        f" AND {SAME_IDENTITY} AND m.payloadJson = row.payloadJson) AS same\n"
        f"RETURN same, {record_return()}"
    )
    return query, {**tenant.params(), "row": row}


async def claim_record_id(tx: AsyncManagedTransaction, prepared: PreparedMemory,
                          payload_json: str, *, tenant: Tenant) -> Record | None:
    """For a record whose input names an id: None when the id is free, the record
    when the id already holds this very record (a retry), else IdTaken."""
    if prepared.input.id is None:
        return None
    row: dict[str, object] = {"id": prepared.id, "payloadJson": payload_json,
                              **identity_of(prepared.input).params()}
    records = await run(tx, record_holder(row, tenant=tenant))
    if not records:
        return None
    if not records[0]["same"]:
        raise IdTaken(prepared.id, 0)
    return record_from_record(records[0])
