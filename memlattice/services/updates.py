"""Deciding update candidates: confirm (the older memory becomes SUPERSEDED) or reject.

Detection itself runs inside every write's transaction (graph.updates.store);
this is what an agent or a person does with what it found, audited in the graph
and announced on the event bus like every other change.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from memlattice.core.auth import Tenant
from memlattice.core.errors import ValidationError
from memlattice.core.model import utcnow
from memlattice.core.rank_fusion import order_by, reciprocal_rank_fusion
from memlattice.graph.updates.links import UpdateLink
from memlattice.graph.updates.proposals import ProposalGraph, Replaceable
from memlattice.graph.updates.store import STATUSES, UpdateGraph
from memlattice.services.memories import MemoryService

MAX_LISTED = 500
MAX_OFFERED = 20
MAX_ATTRIBUTE = 128
MAX_REASON = 2000


def offered(found: Sequence[Replaceable], first: int) -> list[Replaceable]:
    """The `first` of `found` by reciprocal-rank fusion of the vector index's order and
    the fulltext index's (pure). On the knowledge-update scenarios (bench.may_replace)
    the fused order puts the replaced memory first, and in the first five, more often
    than the vector order alone. The write path's contrast reading links only to the
    first (graph.updates.store)."""
    by_id = {r.memory.id: r for r in found}
    return [by_id[id] for id in reciprocal_rank_fusion(
        [order_by(found, lambda r: r.vector_score, lambda r: r.memory.id),
         order_by(found, lambda r: r.text_score, lambda r: r.memory.id)])[:first]]


class UpdateService:
    def __init__(self, memories: MemoryService) -> None:
        self.memories = memories
        self.graph = UpdateGraph(memories.graph.client)
        self.proposals = ProposalGraph(memories.graph.client)

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

    async def may_replace(self, *, tenant: Tenant, id: str, text: str,
                          first: int = 3) -> builtins.list[Replaceable]:
        """The memory's nearest earlier memories by meaning and by its words (`text`,
        its content), for its writer to judge (graph.updates.proposals); empty for a
        memory the key may not see."""
        if not 1 <= first <= MAX_OFFERED:
            raise ValidationError(f"first must be between 1 and {MAX_OFFERED}", field="first")
        found = await self.proposals.nearest_earlier(tenant=tenant, id=id, text=text,
                                                     now=utcnow())
        return offered(found, first)

    async def propose(self, *, tenant: Tenant, newer: str, older: str, actor: str,
                      attribute: str = "", reason: str | None = None,
                      confirm: bool = False, confidence: float = 1.0,
                      said: str | None = None) -> UpdateLink:
        """The writer says `newer` replaces `older`: an update link (a candidate, or
        confirmed at once with `confirm`, the older memory then SUPERSEDED). `said`
        names who judged it when that is not the writer (the update judge's model)."""
        if len(attribute) > MAX_ATTRIBUTE:
            raise ValidationError(f"attribute is longer than {MAX_ATTRIBUTE} characters",
                                  field="attribute")
        if reason is not None and len(reason) > MAX_REASON:
            raise ValidationError(f"reason is longer than {MAX_REASON} characters",
                                  field="reason")
        done = await self.proposals.propose(
            tenant=tenant, newer=newer, older=older, attribute=attribute, reason=reason,
            confirm=confirm, actor=actor, now=utcnow(), confidence=confidence, said=said)
        if done.superseded is not None:
            await self.memories.events.superseded([done.superseded], actor)
        elif (done.created or done.restated) and done.link.older is not None:
            # The older memory is now marked outdated on recall.
            await self.memories.events.updated_ids(tenant.namespace, [done.link.older.id],
                                                   actor)
        return done.link

    async def dispute(self, *, tenant: Tenant, pairs: Sequence[tuple[str, str]], by: str,
                      actor: str) -> builtins.list[str]:
        """The rule set's candidates between these (newer, older) pairs are judged wrong
        `by` a model (graph.updates.proposals): recall ignores them until a person
        confirms one. The older memories no longer marked, announced as UPDATED."""
        olders = await self.proposals.dispute(tenant=tenant, pairs=list(pairs), by=by,
                                              actor=actor, now=utcnow())
        if olders:
            await self.memories.events.updated_ids(tenant.namespace, olders, actor)
        return olders
