"""Update candidates: list, confirm, reject (thin: convert, call, wrap).

Write-side detection (graph.updates) links a memory that states a new value of an
attribute to the memory that stated the old one; these operations read and decide
those links. Merged into the root types in `resolvers/schema.py`.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated

import strawberry

from memlattice.graph.updates.links import UpdateLink
from memlattice.graph.updates.proposals import Replaceable
from memlattice.resolvers.context import Info
from memlattice.resolvers.glossary import NamespaceArg, arg
from memlattice.resolvers.types import Memory
from memlattice.services.updates import UpdateService


@strawberry.enum(description="Where an update candidate stands.")
class UpdateStatus(Enum):
    CANDIDATE = strawberry.enum_value(
        "candidate", description="Found on write; nobody has decided it yet.")
    CONFIRMED = strawberry.enum_value(
        "confirmed", description="Confirmed: the newer memory SUPERSEDES the older one.")
    REJECTED = strawberry.enum_value(
        "rejected", description="Rejected: never proposed again for this pair.")


@strawberry.enum(description="What a detected link says of two memories.")
class UpdateKind(Enum):
    UPDATE = strawberry.enum_value(
        "update", description="The newer memory states a new value: the older one is outdated.")
    CONTRADICTION = strawberry.enum_value(
        "contradiction", description="Another source states another value without saying it"
        " changed: both cannot hold (a CONTRADICTS relationship joins them too).")


@strawberry.type(description="A newer memory states another value of an attribute an older"
                 " memory stated (found on write, without a model; see docs/knowledge.md).")
class MemoryUpdate:
    id: strawberry.ID = strawberry.field(description="The link's id (confirmUpdate and"
                                         " rejectUpdate take it).")
    newer: Memory | None = strawberry.field(description="The memory with the newer value.")
    older: Memory | None = strawberry.field(description="The memory it outdates.")
    status: UpdateStatus = strawberry.field(description="Candidate, confirmed or rejected.")
    kind: UpdateKind = strawberry.field(description="An update, or a contradiction.")
    confidence: float = strawberry.field(description="How surely subject and attribute"
                                         " matched, in [0, 1].")
    reason: str = strawberry.field(description="Why, in words: subject, attribute, values.")
    subject: str = strawberry.field(description="Whose attribute: a speaker, a name, a thing.")
    attribute: str = strawberry.field(description="Which attribute (residence, employer,"
                                      " count, when, version, ...).")
    matched: list[str] = strawberry.field(description="The words of both memories that"
                                          " carried subject, relation and value.")
    created_at: datetime | None = strawberry.field(description="When the write found it.")
    decided_at: datetime | None = strawberry.field(
        description="When it was confirmed or rejected (null: not yet).")
    decided_by: str | None = strawberry.field(
        description="Who confirmed or rejected it (as AuditEntry.actor).")
    note: str | None = strawberry.field(description="The reason given on rejecting it.")
    proposed_by: str | None = strawberry.field(
        description="Who stated it (proposeUpdate's caller, or the writer whose write the"
        " update judge's model judged; null: the rule set found it on write). Kept once"
        " the link is confirmed or rejected, so a rejected link still says whose it was.")
    disputed_by: str | None = strawberry.field(
        description="The update judge's model, when it was shown this pair and did not say"
        " the newer memory replaces the older: search then ignores the candidate (no"
        " outdatedBy, no reordering) until someone confirms it; null: not disputed.")

    @classmethod
    def from_domain(cls, link: UpdateLink) -> MemoryUpdate:
        return cls(
            id=strawberry.ID(link.id),
            newer=Memory.from_domain(link.newer) if link.newer is not None else None,
            older=Memory.from_domain(link.older) if link.older is not None else None,
            status=UpdateStatus(link.status), kind=UpdateKind(link.kind),
            confidence=link.confidence, reason=link.reason, subject=link.subject,
            attribute=link.attribute, matched=list(link.matched), created_at=link.created_at,
            decided_at=link.decided_at, decided_by=link.decided_by, note=link.note,
            proposed_by=link.proposed_by, disputed_by=link.disputed_by)


@strawberry.type(description="An earlier memory that a memory may replace: one of its nearest"
                 " by meaning, for its writer to judge (proposeUpdate says it does).")
class ReplacementCandidate:
    memory: Memory = strawberry.field(description="The earlier memory (active, visible to"
                                      " the key, written before).")
    similarity: float | None = strawberry.field(description="Cosine similarity of the two"
                                                " memories' vectors, in [-1, 1]; null when"
                                                " either has none.")
    update: MemoryUpdate | None = strawberry.field(description=(
        "The update link that already joins the two (a candidate the rules found, or one"
        " proposed), if any; a rejected pair is never listed."))

    @classmethod
    def from_domain(cls, r: Replaceable) -> ReplacementCandidate:
        return cls(memory=Memory.from_domain(r.memory), similarity=r.similarity,
                   update=MemoryUpdate.from_domain(r.update) if r.update is not None else None)


async def replacement_candidates(info: Info, memory: Memory,
                                 first: int) -> list[ReplacementCandidate]:
    """`Memory.mayReplace`: read with the key's view of the memory's namespace."""
    tenant = info.context.tenant(memory.namespace, write=False)
    found = await _updates(info).may_replace(tenant=tenant, id=str(memory.id),
                                             text=memory.content, first=first)
    return [ReplacementCandidate.from_domain(r) for r in found]


UpdateIdArg = Annotated[strawberry.ID, arg("The update link's id (MemoryUpdate.id).")]


def _updates(info: Info) -> UpdateService:
    return UpdateService(info.context.service)


@strawberry.type
class UpdatesQuery:
    @strawberry.field(description="Update candidates of the namespace (or of one memory, either"
                      " side), newest first; only links whose both memories the key may see.")
    async def memory_updates(
        self, info: Info, namespace: NamespaceArg,
        statuses: Annotated[list[UpdateStatus] | None, arg(
            "Only links of these statuses; CANDIDATE and CONFIRMED when omitted.")] = None,
        memory_id: Annotated[strawberry.ID | None, arg(
            "Only the links of this memory, on either side.")] = None,
        first: Annotated[int, arg("At most this many links, 1 to 500.")] = 100,
    ) -> list[MemoryUpdate]:
        tenant = info.context.tenant(namespace, write=False)
        chosen = [str(s.value) for s in statuses] if statuses else ["candidate", "confirmed"]
        links = await _updates(info).list(tenant=tenant, statuses=chosen,
                                          memory_id=str(memory_id) if memory_id else None,
                                          first=first)
        return [MemoryUpdate.from_domain(link) for link in links]


@strawberry.type
class UpdatesMutation:
    @strawberry.mutation(description="Confirm an update candidate: the newer memory SUPERSEDES"
                         " the older (status SUPERSEDED, kept as history); audited and"
                         " announced. NOT_FOUND for a link the key may not see; CONFLICT for a"
                         " rejected link, an inactive memory or a SUPERSEDES cycle.")
    async def confirm_update(self, info: Info, namespace: NamespaceArg,
                             id: UpdateIdArg) -> MemoryUpdate:
        tenant = info.context.tenant(namespace, write=True)
        link = await _updates(info).confirm(tenant=tenant, id=str(id),
                                            actor=info.context.actor)
        return MemoryUpdate.from_domain(link)

    @strawberry.mutation(description=(
        "Say that a memory replaces an earlier one (what the writer knows and the rules"
        " may not read: see Memory.mayReplace). The pair gets an UPDATE link (the rules'"
        " own, if they made one), a candidate that recall treats like any other, or"
        " confirmed at once with `confirm` (the older memory SUPERSEDED, kept as history);"
        " audited (`propose-update`) and announced. Saying it again changes nothing."
        " NOT_FOUND for a memory the key may not see or of another namespace; VALIDATION"
        " when `newerId` was not written after `olderId`; CONFLICT for a rejected pair, a"
        " link the other way, an inactive memory or a SUPERSEDES cycle;"
        " EPISODIC_IMMUTABLE for an episodic record."))
    async def propose_update(
        self, info: Info, namespace: NamespaceArg,
        newer_id: Annotated[strawberry.ID, arg("The memory that holds the new state.")],
        older_id: Annotated[strawberry.ID, arg("The earlier memory it replaces.")],
        confirm: Annotated[bool, arg("Confirm at once: the older memory becomes SUPERSEDED."
                                     " False: a candidate, for confirmUpdate later.")] = False,
        attribute: Annotated[str, arg("What changed, in a word or two (residence, port,"
                                      " owner); up to 128 characters.")] = "",
        reason: Annotated[str | None, arg("Why, in words; kept in the link's reason (up to"
                                          " 2000 characters).")] = None,
    ) -> MemoryUpdate:
        tenant = info.context.tenant(namespace, write=True)
        link = await _updates(info).propose(
            tenant=tenant, newer=str(newer_id), older=str(older_id), actor=info.context.actor,
            attribute=attribute, reason=reason, confirm=confirm)
        return MemoryUpdate.from_domain(link)

    @strawberry.mutation(description="Reject an update candidate: kept as REJECTED, never"
                         " proposed again for that pair; audited and announced.")
    async def reject_update(
        self, info: Info, namespace: NamespaceArg, id: UpdateIdArg,
        note: Annotated[str | None, arg("Why it is wrong, kept with the link.")] = None,
    ) -> MemoryUpdate:
        tenant = info.context.tenant(namespace, write=True)
        link = await _updates(info).reject(tenant=tenant, id=str(id), note=note,
                                           actor=info.context.actor)
        return MemoryUpdate.from_domain(link)
