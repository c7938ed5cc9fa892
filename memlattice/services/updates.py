"""Deciding update candidates: confirm (the older memory becomes SUPERSEDED) or reject.

Detection itself runs inside every write's transaction (graph.updates.store);
this is what an agent or a person does with what it found, audited in the graph
and announced on the event bus like every other change.
"""

from __future__ import annotations

from collections.abc import Sequence

from memlattice.core.auth import Tenant
from memlattice.core.errors import ValidationError
from memlattice.core.model import utcnow
from memlattice.graph.updates.store import STATUSES, UpdateGraph, UpdateLink
from memlattice.services.memories import MemoryService

MAX_LISTED = 500


class UpdateService:
    def __init__(self, memories: MemoryService) -> None:
        self.memories = memories
        self.graph = UpdateGraph(memories.graph.client)

    async def list(self, *, tenant: Tenant, statuses: Sequence[str] = ("candidate", "confirmed"),
                   memory_id: str | None = None, first: int = 100) -> list[UpdateLink]:
        """The links whose both memories the key may see, newest first."""
        if not 1 <= first <= MAX_LISTED:
            raise ValidationError(f"first must be between 1 and {MAX_LISTED}", field="first")
        unknown = [s for s in statuses if s not in STATUSES]
        if unknown:
            raise ValidationError(f"unknown statuses {unknown}", field="statuses")
        return await self.graph.listed(tenant=tenant, statuses=statuses or STATUSES,
                                       memory_id=memory_id, first=first)

    async def confirm(self, *, tenant: Tenant, id: str, actor: str) -> UpdateLink:
        """The newer memory SUPERSEDES the older (kept as history); confirming twice
        changes nothing."""
        link, previous, current = await self.graph.confirm(tenant=tenant, id=id, actor=actor,
                                                           now=utcnow())
        if previous is not None and current is not None:
            # The newer memory was announced when it was written; only the older changed.
            await self.memories.events.superseded([(previous, current)], actor)
        return link

    async def reject(self, *, tenant: Tenant, id: str, note: str | None,
                     actor: str) -> UpdateLink:
        """The candidate is kept as rejected: that pair is never proposed again."""
        link, changed = await self.graph.reject(tenant=tenant, id=id, note=note, actor=actor,
                                                now=utcnow())
        if changed and link.older is not None:
            await self.memories.events.updated_ids(tenant.namespace, [link.older.id], actor)
        return link
