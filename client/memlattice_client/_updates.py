"""Update candidates: a newer memory states another value of what an older one
stated (found by the server on write, or said by the writer). Listed, confirmed (the
older memory becomes SUPERSEDED) or rejected (never proposed again); a memory's
nearest earlier memories are offered for the writer to judge. Defined once (see
`_operations`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memlattice_client._models import MemoryUpdate, ReplacementCandidate, UpdateStatus
from memlattice_client._operations import Call, operation
from memlattice_client._selections import MEMORY, MEMORY_REF, Detail, chosen

UPDATE = f"""
  id status kind confidence reason subject attribute matched createdAt decidedAt decidedBy
  note proposedBy disputedBy newer {{ {MEMORY} }} older {{ {MEMORY} }}
"""
# What a caller reads of each link `memory_updates` lists (the MCP `updates` tool, a
# reviewer's queue): what it says and how firmly, who proposed it, and its two
# memories' ids, contents and statuses (the list comes newest first; when a link was
# made, `created_at`, is None here). 24 cost units a link, against 104 for a whole
# `UPDATE` (two whole memories); `confirm_update` and the other single links stay whole.
UPDATE_BRIEF = f"""
  id status kind confidence reason subject attribute proposedBy
  newer {{ {MEMORY_REF} }} older {{ {MEMORY_REF} }}
"""


def _updates(raw: Any) -> list[MemoryUpdate]:
    return [MemoryUpdate.model_validate(u) for u in raw]


@operation("memoryUpdates")
def memory_updates(namespace: str, *, statuses: Sequence[UpdateStatus | str] | None = None,
                   memory_id: str | None = None, first: int = 20,
                   detail: Detail = "brief") -> Call[list[MemoryUpdate]]:
    """The `first` newest update candidates of a namespace (or of one memory, either
    side); CANDIDATE and CONFIRMED unless `statuses` says otherwise. Each names its
    two memories by id and content; `detail="full"` asks for every field of the link
    and of both memories."""
    wanted = [UpdateStatus(s).value for s in statuses] if statuses else None
    fields = chosen(detail, UPDATE_BRIEF, UPDATE)
    return Call("memoryUpdates",
                "query($ns: String!, $statuses: [UpdateStatus!], $id: ID, $first: Int!) {"
                " memoryUpdates(namespace: $ns, statuses: $statuses, memoryId: $id,"
                f" first: $first) {{ {fields} }} }}",
                {"ns": namespace, "statuses": wanted, "id": memory_id, "first": first},
                _updates)


@operation("confirmUpdate")
def confirm_update(namespace: str, id: str) -> Call[MemoryUpdate]:
    """The newer memory SUPERSEDES the older one (kept as history)."""
    return Call("confirmUpdate",
                "mutation($ns: String!, $id: ID!) { confirmUpdate(namespace: $ns, id: $id)"
                f" {{ {UPDATE} }} }}",
                {"ns": namespace, "id": id}, MemoryUpdate.model_validate)


@operation("rejectUpdate")
def reject_update(namespace: str, id: str, *, note: str | None = None) -> Call[MemoryUpdate]:
    """The candidate is wrong: kept as REJECTED, never proposed again for the pair."""
    return Call("rejectUpdate",
                "mutation($ns: String!, $id: ID!, $note: String) {"
                f" rejectUpdate(namespace: $ns, id: $id, note: $note) {{ {UPDATE} }} }}",
                {"ns": namespace, "id": id, "note": note}, MemoryUpdate.model_validate)


@operation("proposeUpdate")
def propose_update(namespace: str, newer_id: str, older_id: str, *, confirm: bool = False,
                   attribute: str = "", reason: str | None = None) -> Call[MemoryUpdate]:
    """Say that `newer_id` replaces `older_id` (what the server's rules may not read):
    a candidate link, or confirmed at once with `confirm` (the older memory SUPERSEDED)."""
    return Call("proposeUpdate",
                "mutation($ns: String!, $newer: ID!, $older: ID!, $confirm: Boolean!,"
                " $attribute: String!, $reason: String) { proposeUpdate(namespace: $ns,"
                " newerId: $newer, olderId: $older, confirm: $confirm, attribute: $attribute,"
                f" reason: $reason) {{ {UPDATE} }} }}",
                {"ns": namespace, "newer": newer_id, "older": older_id, "confirm": confirm,
                 "attribute": attribute, "reason": reason}, MemoryUpdate.model_validate)


def _candidates(raw: Any) -> list[ReplacementCandidate]:
    return [ReplacementCandidate.model_validate(c) for c in raw["mayReplace"]]


def may_replace(namespace: str, id: str, *, first: int = 3) -> Call[list[ReplacementCandidate]]:
    """The earlier memories `id` may replace, most alike first (`Memory.mayReplace`):
    show them to whoever wrote it, and `propose_update` the one it replaces."""
    return Call("memory",
                "query($ns: String!, $id: ID!, $first: Int!) { memory(namespace: $ns, id: $id)"
                f" {{ mayReplace(first: $first) {{ similarity memory {{ {MEMORY} }}"
                " update { id status kind confidence reason subject attribute matched } } } }",
                {"ns": namespace, "id": id, "first": first}, _candidates)
