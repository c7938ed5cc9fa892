"""Update candidates: a newer memory states another value of what an older one
stated (found by the server on write). Listed, confirmed (the older memory becomes
SUPERSEDED) or rejected (never proposed again); defined once (see `_operations`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memlattice_client._models import MemoryUpdate, UpdateStatus
from memlattice_client._operations import MEMORY, Call, operation

UPDATE = f"""
  id status kind confidence reason subject attribute matched createdAt decidedAt decidedBy
  note newer {{ {MEMORY} }} older {{ {MEMORY} }}
"""


def _updates(raw: Any) -> list[MemoryUpdate]:
    return [MemoryUpdate.model_validate(u) for u in raw]


@operation("memoryUpdates")
def memory_updates(namespace: str, *, statuses: Sequence[UpdateStatus | str] | None = None,
                   memory_id: str | None = None, first: int = 100) -> Call[list[MemoryUpdate]]:
    """Update candidates of a namespace (or of one memory, either side), newest first;
    CANDIDATE and CONFIRMED unless `statuses` says otherwise."""
    chosen = [UpdateStatus(s).value for s in statuses] if statuses else None
    return Call("memoryUpdates",
                "query($ns: String!, $statuses: [UpdateStatus!], $id: ID, $first: Int!) {"
                " memoryUpdates(namespace: $ns, statuses: $statuses, memoryId: $id,"
                f" first: $first) {{ {UPDATE} }} }}",
                {"ns": namespace, "statuses": chosen, "id": memory_id, "first": first},
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
