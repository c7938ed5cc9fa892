"""The shared event log: an outbox of committed changes, in Neo4j itself.

Every process appends the events of the changes it committed and tails the
log of the namespaces its subscribers watch (memlattice.services.shared_events).
An append takes the namespace's `(:EventCounter)` node and raises its `seq`
inside the appending transaction: the counter's write lock is held until
commit, so sequence numbers are handed out in commit order and with no gaps,
and a reader never sees `seq + 1` before `seq`. A gap a reader does see can
only be events pruned after the retention window, which is how it knows it
missed them.

Events keep snapshots of memories; when a memory is erased (`deleteMemory`),
the events that name it (`memoryIds`) are rewritten without its content, so
the log does not keep what the store no longer does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memlattice.graph.client import GraphClient, Query


def append_events(*, namespace: str, rows: Sequence[Mapping[str, Any]],
                  now: datetime) -> Query:
    """Number `rows` (`{payload, memoryIds}`) after the namespace's last event and store
    them, in one statement."""
    query = (
        "CYPHER 25\n"
        "MERGE (c:EventCounter {namespace: $namespace})\n"
        "ON CREATE SET c.seq = 0\n"
        "SET c.seq = c.seq + size($rows)\n"
        "WITH c, c.seq - size($rows) AS base\n"
        "UNWIND range(0, size($rows) - 1) AS i\n"
        "CREATE (e:Event {namespace: $namespace, seq: base + i + 1,"
        " payload: $rows[i].payload, memoryIds: $rows[i].memoryIds, at: $now})\n"
        "RETURN e.seq AS seq ORDER BY seq"
    )
    return query, {"namespace": namespace, "rows": list(rows), "now": now}


def events_naming(*, namespace: str, memory_id: str) -> Query:
    query = (
        "CYPHER 25\n"
        "MATCH (e:Event {namespace: $namespace}) WHERE $id IN e.memoryIds\n"
        "RETURN e.seq AS seq, e.payload AS payload"
    )
    return query, {"namespace": namespace, "id": memory_id}


def rewrite_events(*, namespace: str, rows: Sequence[Mapping[str, Any]]) -> Query:
    query = (
        "CYPHER 25\n"
        "UNWIND $rows AS row\n"
        "MATCH (e:Event {namespace: $namespace, seq: row.seq})\n"
        "SET e.payload = row.payload"
    )
    return query, {"namespace": namespace, "rows": list(rows)}


def events_after(*, namespace: str, after: int, limit: int) -> Query:
    query = (
        "CYPHER 25\n"
        "MATCH (e:Event {namespace: $namespace}) WHERE e.seq > $after\n"
        "RETURN e.seq AS seq, e.payload AS payload ORDER BY e.seq LIMIT $limit"
    )
    return query, {"namespace": namespace, "after": after, "limit": limit}


def log_bounds(*, namespace: str) -> Query:
    """The namespace's last sequence number and its oldest retained event's."""
    query = (
        "CYPHER 25\n"
        "OPTIONAL MATCH (c:EventCounter {namespace: $namespace})\n"
        "RETURN coalesce(c.seq, 0) AS head,\n"
        "  COLLECT { MATCH (e:Event {namespace: $namespace}) WHERE e.seq > 0\n"
        "    RETURN e.seq ORDER BY e.seq LIMIT 1 }[0] AS oldest"
    )
    return query, {"namespace": namespace}


def prune_events(*, before: datetime, limit: int, namespace: str | None = None) -> Query:
    """Events stored before `before` (of one namespace, or of all), deleted."""
    where = "e.at < $before" + (" AND e.namespace = $namespace" if namespace is not None
                                else "")
    query = (
        "CYPHER 25\n"
        f"MATCH (e:Event) WHERE {where}\n"
        "WITH e LIMIT $limit\n"
        "DELETE e\n"
        "RETURN count(*) AS pruned"
    )
    return query, {"before": before, "limit": limit, "namespace": namespace}


@dataclass(frozen=True)
class LogBounds:
    """`head`: the last sequence number handed out (0: none yet); `oldest`: the first
    one still stored (None: none is)."""

    head: int
    oldest: int | None


class EventLogGraph:
    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def append(self, namespace: str, events: Sequence[tuple[str, Sequence[str]]],
                     now: datetime) -> list[int]:
        """Store `(payload, ids of the memories it names)`, in order; returns their
        sequence numbers."""
        if not events:
            return []
        rows = [{"payload": payload, "memoryIds": list(ids)} for payload, ids in events]
        records = await self.client.write(append_events(namespace=namespace, rows=rows,
                                                        now=now))
        return [int(r["seq"]) for r in records]

    async def naming(self, namespace: str, memory_id: str) -> list[tuple[int, str]]:
        """The stored events that name a memory (to erase it from them)."""
        records = await self.client.read(events_naming(namespace=namespace,
                                                       memory_id=memory_id))
        return [(int(r["seq"]), str(r["payload"])) for r in records]

    async def rewrite(self, namespace: str, payloads: Sequence[tuple[int, str]]) -> None:
        """Replace the payloads of stored events, keeping their place in the log."""
        if payloads:
            await self.client.write(rewrite_events(namespace=namespace, rows=[
                {"seq": seq, "payload": payload} for seq, payload in payloads]))

    async def after(self, namespace: str, after: int, limit: int) -> list[tuple[int, str]]:
        """Up to `limit` events with a sequence number above `after`, oldest first."""
        records = await self.client.read(events_after(namespace=namespace, after=after,
                                                      limit=limit))
        return [(int(r["seq"]), str(r["payload"])) for r in records]

    async def bounds(self, namespace: str, *, from_writer: bool = False) -> LogBounds:
        """`from_writer`: as the writer sees them, not a member that may be behind."""
        query = log_bounds(namespace=namespace)
        records = await (self.client.read_from_writer(query) if from_writer
                         else self.client.read(query))
        if not records:
            return LogBounds(head=0, oldest=None)
        oldest = records[0]["oldest"]
        return LogBounds(head=int(records[0]["head"]),
                         oldest=int(oldest) if oldest is not None else None)

    async def prune(self, before: datetime, limit: int = 10_000,
                    namespace: str | None = None) -> int:
        """Delete up to `limit` events stored before `before`; returns how many."""
        records = await self.client.write(prune_events(before=before, limit=limit,
                                                       namespace=namespace))
        return int(records[0]["pruned"]) if records else 0
