"""The update judge's durable queue: memories marked as waiting to be judged.

A waiting memory carries the label `:Unjudged` (found through Neo4j's label
lookup index, with no schema of its own) and `judge*` properties: the writer's
view and actor (core.judge_queue.WriterView), when it may next be tried
(`judgeAfter`), how often judging it failed and how often of those the model
answered garbage. Settling a memory removes all of them. Only the process that
holds the `update-judge` lease reads the queue and settles it
(services.judge_queue), so no memory is judged by two processes at once; marking
is done by whichever process took the write, in the write's own transaction
(`mark_in`): a memory is never committed without its mark.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction

from memlattice.core.judge_queue import MODEL_FACTS, Waiting, WriterView
from memlattice.graph.client import GraphClient, Query, run
from memlattice.graph.codec import to_datetime

_CLEAR = ("REMOVE m:Unjudged, m.judgeClearance, m.judgeScope, m.judgePrincipal,"
          " m.judgeActor, m.judgeAfter, m.judgeFailures, m.judgeMalformed")


def mark(*, namespace: str, ids: list[str], view: WriterView, now: datetime) -> Query:
    """Mark the memories `ids` of `namespace` as waiting, due at once; a memory already
    marked keeps its mark (and its first writer's view), and the model's own facts are
    left out (it reconciled them as it wrote them)."""
    props = view.properties()
    query = (
        "CYPHER 25\n"
        "UNWIND $ids AS id\n"
        "MATCH (m:Memory {id: id}) WHERE m.namespace = $namespace AND NOT m:Unjudged\n"
        "  AND coalesce(m.sourceType, '') <> $modelFacts\n"
        "SET m:Unjudged, m.judgeClearance = $clearance, m.judgeScope = $scope,"
        " m.judgePrincipal = $principal, m.judgeActor = $actor, m.judgeAfter = $now,"
        " m.judgeFailures = 0, m.judgeMalformed = 0\n"
        "RETURN count(m) AS marked"
    )
    return query, {"ids": ids, "namespace": namespace, "now": now, "modelFacts": MODEL_FACTS,
                   **props}


async def mark_in(tx: AsyncManagedTransaction, *, namespace: str, ids: list[str],
                  view: WriterView | None, now: datetime) -> None:
    """`mark` inside a write's transaction (nothing when judging is off: `view` None)."""
    if view is not None and ids:
        await run(tx, mark(namespace=namespace, ids=ids, view=view, now=now))


def due(*, now: datetime, limit: int, skip: list[str]) -> Query:
    """The oldest waiting memories whose time has come, less `skip` (those a pass
    already tried)."""
    query = (
        "CYPHER 25\n"
        "MATCH (m:Unjudged) WHERE m.judgeAfter <= $now AND NOT m.id IN $skip\n"
        "RETURN m.id AS id, m.namespace AS namespace, m.content AS content,"
        " m.createdAt AS at, m.judgeClearance AS clearance, m.judgeScope AS scope,"
        " m.judgePrincipal AS principal, m.judgeActor AS actor,"
        " m.judgeFailures AS failures, m.judgeMalformed AS malformed\n"
        "ORDER BY m.judgeAfter, m.createdAt LIMIT $limit"
    )
    return query, {"now": now, "limit": limit, "skip": skip}


def settle(*, ids: list[str]) -> Query:
    """Judged (or given up): the memories leave the queue."""
    return (f"CYPHER 25\nUNWIND $ids AS id\nMATCH (m:Unjudged {{id: id}})\n{_CLEAR}",
            {"ids": ids})


def defer(*, rows: list[dict[str, Any]]) -> Query:
    """Failed: each row's memory waits until `after`, with its failure counts."""
    query = (
        "CYPHER 25\n"
        "UNWIND $rows AS row\n"
        "MATCH (m:Unjudged {id: row.id})\n"
        "SET m.judgeAfter = row.after, m.judgeFailures = row.failures,"
        " m.judgeMalformed = row.malformed"
    )
    return query, {"rows": rows}


COUNT: Query = ("CYPHER 25\nMATCH (m:Unjudged) RETURN count(m) AS waiting", {})


def count_in(namespace: str) -> Query:
    return ("CYPHER 25\nMATCH (m:Unjudged) WHERE m.namespace = $namespace"
            " RETURN count(m) AS waiting", {"namespace": namespace})


def _waiting(record: Any) -> Waiting | None:
    """A row of `due`; None when its stored view is not one this version reads."""
    try:
        view = WriterView.stored(str(record["namespace"]), {
            "clearance": record["clearance"], "scope": record["scope"],
            "principal": record["principal"], "actor": record["actor"]})
    except (KeyError, TypeError, ValueError):
        return None
    at = record["at"]
    return Waiting(id=str(record["id"]), content=str(record["content"] or ""),
                   at=to_datetime(at) if at is not None else None, view=view,
                   failures=int(record["failures"] or 0),
                   malformed=int(record["malformed"] or 0))


class JudgeQueueGraph:
    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def due(self, now: datetime, limit: int, skip: list[str]
                  ) -> tuple[list[Waiting], list[str]]:
        """(the due memories, the ids of due marks this version cannot read)."""
        records = await self.client.read_from_writer(due(now=now, limit=limit, skip=skip))
        found, unreadable = [], []
        for record in records:
            item = _waiting(record)
            if item is None:
                unreadable.append(str(record["id"]))
            else:
                found.append(item)
        return found, unreadable

    async def settle(self, ids: list[str]) -> None:
        if ids:
            await self.client.write(settle(ids=ids))

    async def defer(self, rows: list[dict[str, Any]]) -> None:
        if rows:
            await self.client.write(defer(rows=rows))

    async def count(self, namespace: str | None = None) -> int:
        """Memories waiting (in `namespace`, or everywhere)."""
        query = COUNT if namespace is None else count_in(namespace)
        records = await self.client.read_from_writer(query)
        return int(records[0]["waiting"]) if records else 0
