"""Announcing what a write superseded on its own.

A namespace with `autoSupersede` confirms a confident update candidate inside the
write that found it (graph.updates.store.detect_in). The write announces its new
memories as WRITTEN like any other; this adds SUPERSEDED for each older memory
that became history, as `confirmUpdate` does, so a subscriber's view of what is
current never lags the graph. With the setting off (the default) nothing is read.
"""

from __future__ import annotations

from collections.abc import Iterable

from memlattice.core.auth import Tenant
from memlattice.graph.client import GraphClient
from memlattice.graph.codec import Memory
from memlattice.graph.updates.store import UpdateGraph
from memlattice.services.change_events import ChangeEvents


async def announce_auto_superseded(client: GraphClient, events: ChangeEvents,
                                   written: Iterable[Memory], *, auto: float | None,
                                   tenant: Tenant, actor: str) -> None:
    """SUPERSEDED for each memory that `written` superseded as it was stored."""
    ids = [m.id for m in written]
    if auto is None or not ids:
        return
    pairs = await UpdateGraph(client).auto_superseded(tenant=tenant, newer_ids=ids)
    await events.superseded(pairs, actor)
