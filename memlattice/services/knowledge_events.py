"""Change events for typed records and facts, on the memories' event bus.

`KnowledgeService` calls these only after its transaction has committed, so
a refused or rolled-back revision is never announced. Records are memories,
so their events are the memories' kinds (`memlattice.services.events`), matched and
filtered by the same rules, clearance and scope included:

    writeRecord, storeFact (created or reasserted)     WRITTEN
    storeFact (reinforced), updateRecord, contest,     UPDATED
    fork (the original)
    supersedeRecord, mergeRecords                      WRITTEN (new), SUPERSEDED (each old)
    retractRecord, invalidateFacts, discardTask        FORGOTTEN (memory.status tells which)
    consolidation                                      WRITTEN (derived), UPDATED
                                                       (reinforced), FORGOTTEN (pruned)

Every relationship an operation creates is announced too, after its records'
events, as EDGE_ADDED: SUPERSEDES and DERIVED of revisions, the candidate
SUPPORTS / CONTRADICTS hints of a new claim, CONTRADICTS of contest, DERIVED
from consolidated episodes. A relationship that already existed is not.
Consolidation's salience decay touches every record a little and is not
announced, as no other time-driven change is.

Snapshots that an operation does not return (invalidated facts, discarded
working records, reinforced derived records, the far end of a hint) cost one
read, made only while the namespace has subscribers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from memlattice.graph.client import GraphClient
from memlattice.graph.codec import Edge, Memory
from memlattice.graph.snapshots import SnapshotGraph
from memlattice.services.events import EventBus, EventKind, MemoryEvent, edge_events, successors


def _event(kind: EventKind, memory: Memory, actor: str, *, ids: tuple[str, ...] = (),
           at: datetime | None = None, related: tuple[Memory, ...] = ()) -> MemoryEvent:
    return MemoryEvent(kind=kind, namespace=memory.namespace, memory_ids=ids or (memory.id,),
                       actor=actor, at=at or memory.updated_at, version=memory.version,
                       memory=memory, related=related)


class KnowledgeEvents:
    """Publishes committed record and fact changes; does nothing without a bus."""

    def __init__(self, client: GraphClient, bus: EventBus | None) -> None:
        self.bus = bus
        self.snapshots = SnapshotGraph(client)

    def _publish(self, events: Sequence[MemoryEvent]) -> None:
        if self.bus is not None and events:
            self.bus.publish(events)

    def written(self, memories: Iterable[Memory], actor: str) -> None:
        self._publish([_event(EventKind.WRITTEN, m, actor) for m in memories])

    def updated(self, memories: Iterable[Memory], actor: str,
                known: Mapping[str, Memory] | None = None) -> None:
        self._publish([_event(EventKind.UPDATED, m, actor,
                              related=successors([m], known or {})) for m in memories])

    def forgotten(self, memories: Iterable[Memory], actor: str,
                  known: Mapping[str, Memory] | None = None) -> None:
        self._publish([_event(EventKind.FORGOTTEN, m, actor,
                              related=successors([m], known or {})) for m in memories])

    def replaced(self, current: Memory, previous: Iterable[Memory], actor: str) -> None:
        """A successor (supersede, merge): WRITTEN for it, then SUPERSEDED for each old
        record with `memory_ids` [old, new], as supersedeMemory announces it."""
        self._publish([
            _event(EventKind.WRITTEN, current, actor),
            *(_event(EventKind.SUPERSEDED, p, actor, ids=(p.id, current.id),
                     related=(current,))
              for p in previous),
        ])

    async def forgotten_ids(self, namespace: str, ids: Sequence[str], actor: str) -> None:
        """FORGOTTEN for records the operation returned only as ids (read only when
        someone listens)."""
        memories, known = await self._read(namespace, ids)
        self.forgotten(memories, actor, known)

    async def updated_ids(self, namespace: str, ids: Sequence[str], actor: str) -> None:
        """UPDATED for records the operation returned only as ids (read only when
        someone listens)."""
        memories, known = await self._read(namespace, ids)
        self.updated(memories, actor, known)

    async def edges_added(self, namespace: str, edges: Sequence[Edge], actor: str,
                          known: Iterable[Memory] = ()) -> None:
        """EDGE_ADDED for the relationships an operation created; endpoints missing
        from `known` are read (only when someone listens)."""
        if not self._listening(namespace, edges):
            return
        found = {m.id: m for m in known}
        missing = sorted({i for e in edges for i in (e.source_id, e.target_id)} - found.keys())
        if missing:
            found.update(await self.snapshots.memories(namespace=namespace, ids=missing))
        self._publish(edge_events(EventKind.EDGE_ADDED, namespace, edges, found, actor))

    def _listening(self, namespace: str, items: Sequence[object]) -> bool:
        return bool(items) and self.bus is not None and self.bus.has_subscribers(namespace)

    async def _read(self, namespace: str, ids: Sequence[str]
                    ) -> tuple[list[Memory], dict[str, Memory]]:
        """The memories `ids` names, and every snapshot read (their successors too)."""
        if not self._listening(namespace, ids):
            return [], {}
        found = await self.snapshots.memories(namespace=namespace, ids=ids)
        return [found[i] for i in ids if i in found], found
