"""Live updates over graphql-transport-ws: `memoryEvents(namespace, filter)`.

The resolver authorises the namespace like a query does, registers with the
event bus, announces itself with a SUBSCRIBED event (from that moment no
change is missed, so a client loads its initial state after it), then relays
committed changes. Events about memories above the caller's clearance or
maximum scope are never delivered (see memlattice.services.events.Audience).

Every event carries a `cursor`; `memoryEvents(..., after: <cursor>)` resumes
after it (memlattice.services.shared_events), and SUBSCRIBED's `missed` says
how many events the log no longer held.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator
from datetime import datetime
from typing import Annotated

import strawberry

from memlattice.core.auth import scope_levels
from memlattice.core.errors import Unavailable, ValidationError
from memlattice.core.model import MAX_TAGS, utcnow
from memlattice.resolvers import glossary as g
from memlattice.resolvers.context import Context, Info
from memlattice.resolvers.glossary import arg, described_enum
from memlattice.resolvers.queries import _namespace
from memlattice.resolvers.types import Edge, Memory
from memlattice.services import events as domain

# A plain alias for mypy; described_enum registers the class in place (see types.py).
MemoryEventKind = domain.EventKind
described_enum(
    MemoryEventKind, name="MemoryEventKind",
    description="What happened; SUBSCRIBED comes once, first, when the subscription is live.",
    values={
        MemoryEventKind.SUBSCRIBED: "The subscription is live: from here on nothing is"
        " missed, so load the initial state after this event.",
        MemoryEventKind.WRITTEN: "A memory, record or fact was written.",
        MemoryEventKind.UPDATED: "A memory was changed (updateMemory, updateRecord, a"
        " reinforcement).",
        MemoryEventKind.SUPERSEDED: "A memory was superseded; memoryIds is [old, new].",
        MemoryEventKind.FORGOTTEN: "A memory was forgotten or retracted.",
        MemoryEventKind.DELETED: "A memory was deleted for good (memory is null).",
        MemoryEventKind.EDGE_ADDED: "A relationship was added (edge; memoryIds is [source,"
        " target]).",
        MemoryEventKind.EDGE_DELETED: "A relationship was deleted (edge; memoryIds is"
        " [source, target]).",
    })


@strawberry.input(description="Which events to receive; omitted fields match everything.")
class MemoryEventFilterInput:
    kinds: list[MemoryEventKind] | None = strawberry.field(
        default=None, description="Only these kinds of event (SUBSCRIBED always comes).")
    tags_any: list[str] | None = strawberry.field(
        default=None, description="The memory carries at least one of these tags.")
    memory_types: list[str] | None = strawberry.field(
        default=None, description="Only events about memories of these memoryTypes.")
    agent_id: str | None = strawberry.field(
        default=None, description="Only events about memories of this agent.")
    user_id: str | None = strawberry.field(
        default=None, description="Only events about memories of this user.")
    session_id: str | None = strawberry.field(
        default=None, description="Only events about memories of this session.")
    task_id: str | None = strawberry.field(
        default=None, description="Only events about memories of this task.")

    def to_domain(self) -> domain.EventFilter:
        for name, values in (("tagsAny", self.tags_any), ("memoryTypes", self.memory_types)):
            if values is not None and (len(values) > MAX_TAGS or not all(values)):
                raise ValidationError(f"{name} takes 1 to {MAX_TAGS} non-empty strings",
                                      field=name)
        return domain.EventFilter(
            kinds=frozenset(self.kinds or ()), tags_any=frozenset(self.tags_any or ()),
            memory_types=frozenset(self.memory_types or ()), agent_id=self.agent_id,
            user_id=self.user_id, session_id=self.session_id, task_id=self.task_id,
        )


@strawberry.type(description="One committed change in a namespace.")
class MemoryEvent:
    seq: int = strawberry.field(
        description="The event's position in its namespace's log (every process shares it);"
        " for SUBSCRIBED, the position the subscription starts after.")
    cursor: str = strawberry.field(
        description="Pass as `after` when subscribing again to receive what followed this"
        " event (SUBSCRIBED: what followed the subscription's start).")
    kind: MemoryEventKind = strawberry.field(description="What happened.")
    namespace: str = strawberry.field(description="The namespace it happened in.")
    memory_id: strawberry.ID | None = strawberry.field(
        description="The memory changed (for edge events, the relationship's source).")
    memory_ids: list[strawberry.ID] = strawberry.field(
        description="Every memory involved: [old, new] for SUPERSEDED, [source, target] for"
        " edge events.")
    memory: Memory | None = strawberry.field(
        description="The memory as the change left it; null for DELETED and edge events.")
    edge: Edge | None = strawberry.field(
        description="For EDGE_ADDED and EDGE_DELETED: the relationship; null otherwise.")
    version: int | None = strawberry.field(
        description="The memory's version after the change; null for edge events and DELETED.")
    actor: str | None = strawberry.field(
        description="Who made the change (as AuditEntry.actor); null when not recorded.")
    at: datetime = strawberry.field(description="When the change was committed (UTC).")
    missed: int = strawberry.field(
        description="Events this subscriber did not receive before this one: dropped because"
        " it fell behind (its queue keeps the newest events), or, on SUBSCRIBED, no longer"
        " kept after the cursor given as `after` (the retention window was exceeded);"
        " re-read when it is not 0.")

    @classmethod
    def from_domain(cls, e: domain.MemoryEvent) -> MemoryEvent:
        shown = e.memory if e.kind is not domain.EventKind.DELETED else None
        return cls(
            seq=e.seq, cursor=str(e.seq), kind=e.kind, namespace=e.namespace,
            memory_id=strawberry.ID(e.memory_ids[0]) if e.memory_ids else None,
            memory_ids=[strawberry.ID(i) for i in e.memory_ids],
            memory=Memory.from_domain(shown) if shown is not None else None,
            edge=Edge.from_domain(e.edge) if e.edge is not None else None,
            version=e.version, actor=e.actor, at=e.at, missed=e.missed,
        )


@strawberry.type(description=(
    "Live updates over graphql-ws (the graphql-transport-ws protocol) on /graphql; the API"
    " key goes in connection_init's `authorization`."))
class Subscription:
    @strawberry.subscription(
        description="Committed changes of one namespace (writes, updates, supersedes, forgets,"
        " deletes, relationship changes), filtered, in the order of the namespace's event log"
        " (the same on every server process); resumable with `after`."
    )
    async def memory_events(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        filter: Annotated[MemoryEventFilterInput | None, arg(
            "Which events to receive; omitted: every event.")] = None,
        after: Annotated[str | None, strawberry.argument(
            description="A `cursor` of an earlier event of this namespace: first deliver"
            " the events that followed it (those still kept).")] = None,
    ) -> AsyncGenerator[MemoryEvent, None]:
        ns = _namespace(namespace)
        await info.context.recheck_key()  # the connection may be older than a revocation
        principal = info.context.principal  # set by connection_init (memlattice.server.app)
        principal.authorize(ns, write=False)
        flt = filter.to_domain() if filter is not None else domain.EventFilter()
        start = _cursor(after)
        bus = info.context.events
        if bus is None:
            raise Unavailable("this server publishes no events")
        audience = domain.Audience(clearance=principal.clearance,
                                   scopes=scope_levels(principal.max_scope))
        opened = await bus.open(ns, flt, audience, start)
        subscription = opened.subscription
        try:
            yield MemoryEvent(
                seq=opened.cursor, cursor=str(opened.cursor), kind=domain.EventKind.SUBSCRIBED,
                namespace=ns, memory_id=None, memory_ids=[], memory=None, edge=None,
                version=None, actor=None, at=utcnow(), missed=opened.missed,
            )
            async for event in _rechecking(subscription, info.context, ns):
                # One connection lives long: vectors must not come from an old load.
                info.context.embedding_loaders.clear()
                yield MemoryEvent.from_domain(event)
        finally:
            bus.unsubscribe(subscription)


def _cursor(after: str | None) -> int | None:
    """A cursor as given back by an event (a decimal position); anything else is VALIDATION."""
    if after is None:
        return None
    if not after.isascii() or not after.isdigit() or len(after) > 18:
        raise ValidationError("after takes a cursor returned by an earlier event",
                              field="after")
    return int(after)


async def _rechecking(subscription: domain.Subscription, context: Context,
                      namespace: str) -> AsyncIterator[domain.MemoryEvent]:
    """The subscription's events, the connection's key checked again at least every
    `context.key_recheck_s` seconds, with or without events: a revoked key's stream
    ends with UNAUTHENTICATED within that time. (Checking before every event would
    cost a read per event on a busy namespace; the bound is the setting.)"""
    checked = time.monotonic()
    while True:
        wait = checked + context.key_recheck_s - time.monotonic()
        event = await subscription.next_within(max(wait, 0.0))
        if time.monotonic() - checked >= context.key_recheck_s:
            await context.recheck_key()
            context.principal.authorize(namespace, write=False)
            checked = time.monotonic()
        if event is not None:
            yield event
