"""Change events: what the services announce on the event bus, after commit.

The services call these only once their graph operation has returned (its
transaction has committed), so a refused or rolled-back write, a failed
batch or a stale version is never announced. This is the one way events are
published; whoever writes memories does it through a service
(`MemoryService`, `ConversationService`, `KnowledgeService`, `Consolidator`).

Records are memories, so their events are the memories' kinds
(`memlattice.services.events`), matched and filtered by the same rules,
clearance and scope included:

    writeMemory(ies), ingestConversation (new turns)   WRITTEN
    updateMemory                                       UPDATED
    supersedeMemory                                    WRITTEN (new), SUPERSEDED (old)
    forget                                             FORGOTTEN
    deleteMemory                                       DELETED (version + 1)
    addEdge(s) / deleteEdge                            EDGE_ADDED / EDGE_DELETED
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

Snapshots that an operation does not return itself (forgotten memories, a
deleted memory or relationship, the endpoints of a new relationship,
invalidated facts, discarded working records, reinforced derived records, the
far end of a hint) cost one extra read, made only while the namespace has
subscribers: with the shared log (memlattice.services.shared_events), always,
as a subscriber may be on another process or resume later.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from memlattice.graph.client import GraphClient
from memlattice.graph.codec import Edge, Memory
from memlattice.graph.snapshots import SnapshotGraph
from memlattice.services.event_codec import erased
from memlattice.services.events import EventBus, EventKind, MemoryEvent, edge_events, successors


def _event(kind: EventKind, memory: Memory, actor: str, *, ids: tuple[str, ...] = (),
           at: datetime | None = None, related: tuple[Memory, ...] = (),
           version: int | None = None) -> MemoryEvent:
    return MemoryEvent(kind=kind, namespace=memory.namespace, memory_ids=ids or (memory.id,),
                       actor=actor, at=at or memory.updated_at,
                       version=memory.version if version is None else version,
                       memory=memory, related=related)


class ChangeEvents:
    """Publishes committed changes; does nothing without a bus (the CLI has none)."""

    def __init__(self, client: GraphClient, bus: EventBus | None) -> None:
        self.bus = bus
        self.snapshots = SnapshotGraph(client)

    def listening(self, namespace: str) -> bool:
        """Whether anyone would receive the namespace's events (snapshots cost a read)."""
        return self.bus is not None and self.bus.has_subscribers(namespace)

    async def _publish(self, events: Sequence[MemoryEvent]) -> None:
        if self.bus is not None and events:
            await self.bus.announce(events)

    # ------------------------------------------------------------ memories as returned

    async def written(self, memories: Iterable[Memory], actor: str) -> None:
        await self._publish([_event(EventKind.WRITTEN, m, actor) for m in memories])

    async def updated(self, memories: Iterable[Memory], actor: str,
                known: Mapping[str, Memory] | None = None) -> None:
        await self._publish([_event(EventKind.UPDATED, m, actor,
                              related=successors([m], known or {})) for m in memories])

    async def forgotten(self, memories: Iterable[Memory], actor: str,
                  known: Mapping[str, Memory] | None = None,
                  at: datetime | None = None) -> None:
        await self._publish([_event(EventKind.FORGOTTEN, m, actor, at=at,
                              related=successors([m], known or {})) for m in memories])

    async def superseded(self, pairs: Iterable[tuple[Memory, Memory]], actor: str) -> None:
        """SUPERSEDED for each (old, successor) whose successor was announced already
        (a write that superseded on its own: a namespace's `autoSupersede`)."""
        await self._publish([_event(EventKind.SUPERSEDED, old, actor, ids=(old.id, new.id),
                                    related=(new,)) for old, new in pairs])

    async def replaced(self, current: Memory, previous: Iterable[Memory], actor: str) -> None:
        """A successor (supersede, merge): WRITTEN for it, then SUPERSEDED for each old
        record with `memory_ids` [old, new]."""
        await self._publish([
            _event(EventKind.WRITTEN, current, actor),
            *(_event(EventKind.SUPERSEDED, p, actor, ids=(p.id, current.id),
                     related=(current,))
              for p in previous),
        ])

    async def deleted(self, memory: Memory | None, actor: str, at: datetime) -> None:
        """DELETED for a memory snapshotted before it was erased (`before_delete`),
        without its content; the events already logged lose it too."""
        if memory is None:
            return
        if self.bus is not None:
            await self.bus.erase(memory.namespace, memory.id)
        await self._publish([_event(EventKind.DELETED, erased(memory), actor, at=at,
                                    version=memory.version + 1)])

    # ------------------------------------------------------------ memories by id

    async def forgotten_ids(self, namespace: str, ids: Sequence[str], actor: str,
                            at: datetime | None = None) -> None:
        """FORGOTTEN for records the operation returned only as ids (read only when
        someone listens)."""
        memories, known = await self._read(namespace, ids)
        await self.forgotten(memories, actor, known, at=at)

    async def updated_ids(self, namespace: str, ids: Sequence[str], actor: str) -> None:
        """UPDATED for records the operation returned only as ids (read only when
        someone listens)."""
        memories, known = await self._read(namespace, ids)
        await self.updated(memories, actor, known)

    async def before_delete(self, namespace: str, id: str) -> Memory | None:
        """The memory as it is before it is erased (read only when someone listens)."""
        if not self.listening(namespace):
            return None
        return (await self.snapshots.memories(namespace=namespace, ids=[id])).get(id)

    # ------------------------------------------------------------ relationships

    async def edges_added(self, namespace: str, edges: Sequence[Edge], actor: str,
                          known: Iterable[Memory] = (), at: datetime | None = None) -> None:
        """EDGE_ADDED for the relationships an operation created; endpoints missing
        from `known` are read (only when someone listens)."""
        if not edges or not self.listening(namespace):
            return
        found = {m.id: m for m in known}
        missing = sorted({i for e in edges for i in (e.source_id, e.target_id)} - found.keys())
        if missing:
            found.update(await self.snapshots.memories(namespace=namespace, ids=missing))
        await self._publish(edge_events(EventKind.EDGE_ADDED, namespace, edges, found, actor, at))

    async def before_edge_delete(self, namespace: str, edge_id: str
                                 ) -> tuple[Edge, dict[str, Memory]] | None:
        """The relationship and its endpoints before it is removed (read only when
        someone listens)."""
        if not self.listening(namespace):
            return None
        edge = await self.snapshots.edge(namespace=namespace, edge_id=edge_id)
        if edge is None:
            return None
        return edge, await self.snapshots.memories(namespace=namespace,
                                                   ids=[edge.source_id, edge.target_id])

    async def edge_deleted(self, namespace: str, before: tuple[Edge, Mapping[str, Memory]] | None,
                     actor: str, at: datetime) -> None:
        """EDGE_DELETED for a relationship snapshotted by `before_edge_delete`."""
        if before is not None:
            edge, endpoints = before
            await self._publish(edge_events(EventKind.EDGE_DELETED, namespace, [edge], endpoints,
                                      actor, at))

    async def _read(self, namespace: str, ids: Sequence[str]
                    ) -> tuple[list[Memory], dict[str, Memory]]:
        """The memories `ids` names, and every snapshot read (their successors too)."""
        if not ids or not self.listening(namespace):
            return [], {}
        found = await self.snapshots.memories(namespace=namespace, ids=ids)
        return [found[i] for i in ids if i in found], found
