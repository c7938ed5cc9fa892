"""A MemoryGraph that tells the event bus about every committed change.

Each overridden operation first lets `MemoryGraph` do its work; only when that
returns (the transaction has committed) are events published, so a
rolled-back write, a refused update or a failed batch is never announced.
Whoever writes through the graph (the service, resolvers, the CLI) is covered
by this one place.

Snapshots that an operation does not return itself (forgotten memories, a
deleted memory or relationship, the endpoints of a new relationship) cost an
extra read, made only while the namespace has subscribers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from memlattice.core.model import utcnow
from memlattice.graph.client import GraphClient
from memlattice.graph.codec import Edge, Memory
from memlattice.graph.memories import MemoryGraph
from memlattice.graph.snapshots import SnapshotGraph
from memlattice.services.events import EventBus, EventKind, MemoryEvent, edge_events, successors


def _namespace(kwargs: Mapping[str, Any]) -> str:
    """The operation's namespace, whether it was passed bare or inside a tenant."""
    if "namespace" in kwargs:
        return str(kwargs["namespace"])
    return str(kwargs["tenant"].namespace)


class PublishingMemoryGraph(MemoryGraph):
    def __init__(self, client: GraphClient, bus: EventBus) -> None:
        super().__init__(client)
        self.bus = bus
        self.snapshots = SnapshotGraph(client)

    def _memory_events(self, kind: EventKind, memories: Iterable[Memory], actor: str,
                       at: datetime | None = None,
                       known: Mapping[str, Memory] | None = None) -> list[MemoryEvent]:
        """One event per memory; `known` snapshots give the successors they name."""
        return [MemoryEvent(kind=kind, namespace=m.namespace, memory_ids=(m.id,), actor=actor,
                            at=at or m.updated_at, version=m.version, memory=m,
                            related=successors([m], known or {}))
                for m in memories]

    async def create(self, *args: Any, **kwargs: Any) -> list[Memory]:
        written: list[Memory] = await super().create(*args, **kwargs)
        self.bus.publish(self._memory_events(EventKind.WRITTEN, written, kwargs["actor"]))
        return written

    async def ingest_session(self, *args: Any, **kwargs: Any) -> tuple[list[Memory],
                                                                       list[Memory]]:
        turns, written = await super().ingest_session(*args, **kwargs)
        self.bus.publish(self._memory_events(EventKind.WRITTEN, written, kwargs["actor"]))
        return turns, written

    async def update(self, *args: Any, **kwargs: Any) -> Memory:
        updated: Memory = await super().update(*args, **kwargs)
        self.bus.publish(self._memory_events(EventKind.UPDATED, [updated], kwargs["actor"]))
        return updated

    async def supersede(self, *args: Any, **kwargs: Any) -> tuple[Memory, Memory]:
        previous, current = await super().supersede(*args, **kwargs)
        actor = kwargs["actor"]
        self.bus.publish([
            *self._memory_events(EventKind.WRITTEN, [current], actor),
            MemoryEvent(kind=EventKind.SUPERSEDED, namespace=previous.namespace,
                        memory_ids=(previous.id, current.id), actor=actor,
                        at=previous.updated_at, version=previous.version, memory=previous,
                        related=(current,)),
        ])
        return previous, current

    async def forget(self, *args: Any, **kwargs: Any) -> list[str]:
        ids: list[str] = await super().forget(*args, **kwargs)
        namespace = _namespace(kwargs)
        if ids and self.bus.has_subscribers(namespace):
            found = await self.snapshots.memories(namespace=namespace, ids=ids)
            self.bus.publish(self._memory_events(
                EventKind.FORGOTTEN, [found[i] for i in ids if i in found], kwargs["actor"],
                at=kwargs.get("now"), known=found))
        return ids

    async def delete(self, *args: Any, **kwargs: Any) -> Any:
        namespace = _namespace(kwargs)
        before: dict[str, Memory] = {}
        if self.bus.has_subscribers(namespace):
            before = await self.snapshots.memories(namespace=namespace, ids=[kwargs["id"]])
        result = await super().delete(*args, **kwargs)
        memory = before.get(kwargs["id"])
        if memory is not None:
            self.bus.publish([MemoryEvent(
                kind=EventKind.DELETED, namespace=namespace, memory_ids=(memory.id,),
                actor=kwargs["actor"], at=kwargs.get("now") or utcnow(),
                version=memory.version + 1, memory=memory)])
        return result

    async def add_edges(self, *args: Any, **kwargs: Any) -> list[Edge]:
        made: list[Edge] = await super().add_edges(*args, **kwargs)
        namespace = _namespace(kwargs)
        if made and self.bus.has_subscribers(namespace):
            ids = sorted({i for e in made for i in (e.source_id, e.target_id)})
            found = await self.snapshots.memories(namespace=namespace, ids=ids)
            self.bus.publish(edge_events(EventKind.EDGE_ADDED, namespace, made, found,
                                         kwargs["actor"], kwargs.get("now")))
        return made

    async def delete_edge(self, *args: Any, **kwargs: Any) -> Any:
        namespace = _namespace(kwargs)
        edge: Edge | None = None
        found: dict[str, Memory] = {}
        if self.bus.has_subscribers(namespace):
            edge = await self.snapshots.edge(namespace=namespace, edge_id=kwargs["edge_id"])
            if edge is not None:
                found = await self.snapshots.memories(
                    namespace=namespace, ids=[edge.source_id, edge.target_id])
        result = await super().delete_edge(*args, **kwargs)
        if edge is not None:
            self.bus.publish(edge_events(EventKind.EDGE_DELETED, namespace, [edge], found,
                                         kwargs["actor"], kwargs.get("now")))
        return result
