"""Change events for typed records and facts, on the memories' event bus.

`KnowledgeService` calls these only after its transaction has committed, so
a refused or rolled-back revision is never announced. Records are memories,
so their events are the memories' kinds (`memlattice.events`), matched and
filtered by the same rules, clearance and scope included:

    writeRecord, storeFact (created or reasserted)     WRITTEN
    storeFact (reinforced), updateRecord, contest,     UPDATED
    fork (the original)
    supersedeRecord, mergeRecords                      WRITTEN (new), SUPERSEDED (each old)
    retractRecord, invalidateFacts, discardTask        FORGOTTEN (memory.status tells which)

Snapshots that an operation does not return (invalidated facts, discarded
working records) cost one read, made only while the namespace has subscribers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from graph.client import GraphClient
from graph.codec import Memory
from graph.snapshots import SnapshotGraph
from memlattice.events import EventBus, EventKind, MemoryEvent


def _event(kind: EventKind, memory: Memory, actor: str, *, ids: tuple[str, ...] = (),
           at: datetime | None = None) -> MemoryEvent:
    return MemoryEvent(kind=kind, namespace=memory.namespace, memory_ids=ids or (memory.id,),
                       actor=actor, at=at or memory.updated_at, version=memory.version,
                       memory=memory)


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

    def updated(self, memories: Iterable[Memory], actor: str) -> None:
        self._publish([_event(EventKind.UPDATED, m, actor) for m in memories])

    def forgotten(self, memories: Iterable[Memory], actor: str) -> None:
        self._publish([_event(EventKind.FORGOTTEN, m, actor) for m in memories])

    def replaced(self, current: Memory, previous: Iterable[Memory], actor: str) -> None:
        """A successor (supersede, merge): WRITTEN for it, then SUPERSEDED for each old
        record with `memory_ids` [old, new], as supersedeMemory announces it."""
        self._publish([
            _event(EventKind.WRITTEN, current, actor),
            *(_event(EventKind.SUPERSEDED, p, actor, ids=(p.id, current.id))
              for p in previous),
        ])

    async def forgotten_ids(self, namespace: str, ids: Sequence[str], actor: str) -> None:
        """FORGOTTEN for records the operation returned only as ids (read only when
        someone listens)."""
        if not ids or self.bus is None or not self.bus.has_subscribers(namespace):
            return
        found = await self.snapshots.memories(namespace=namespace, ids=ids)
        self.forgotten([found[i] for i in ids if i in found], actor)
