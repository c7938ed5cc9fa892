"""The rules a change to existing memories must pass, checked inside its transaction:
versions, immutable episodes, typed records and facts, SUPERSEDES cycles.
"""

from __future__ import annotations

from typing import Any

from neo4j import AsyncManagedTransaction

from memlattice.core.errors import Conflict, EpisodicImmutable, ValidationError, VersionConflict
from memlattice.core.records.payloads import TYPED_MEMORY_TYPES
from memlattice.graph.client import run
from memlattice.graph.codec import Memory
from memlattice.graph.edge_queries import lock_supersedes_chains, supersedes_cycle


async def refuse_supersedes_cycle(tx: AsyncManagedTransaction,
                                  pairs: list[dict[str, str]]) -> None:
    """Succession is a history: a SUPERSEDES cycle would make a memory its own
    successor. Checked after the write, in its transaction, so the refusal
    (CONFLICT, reason SUPERSEDES_CYCLE) rolls the whole batch back."""
    await run(tx, lock_supersedes_chains(pairs))
    found = await run(tx, supersedes_cycle(pairs))
    if found:
        cycle = list(found[0]["cycle"])
        # Only the memories the caller named: the rest of the path may be memories
        # its key may not see (another scope, a higher sensitivity), whose ids a
        # refusal must not give away.
        named = {id for pair in pairs for id in (pair["source"], pair["target"])}
        shown = [id for id in cycle if id in named]
        raise Conflict(
            f"these SUPERSEDES relationships would make a cycle of {len(cycle)} memories"
            f" through {', '.join(shown)}; nothing was added",
            reason="SUPERSEDES_CYCLE", cycle=shown[:20], cycleLength=len(cycle))


def refuse_episodic(current: Memory, verb: str) -> None:
    """Episodic records are immutable: every revision of one fails the same way."""
    if current.memory_type == "episodic":
        raise EpisodicImmutable(
            f"memory {current.id} is an episodic record and cannot be {verb}; episodes are"
            " immutable (write a new record instead)", id=current.id,
        )


def refuse_typed_text(current: Memory, changes: dict[str, Any]) -> None:
    """A record's text and value follow its payload, a fact's claim is its identity:
    the plain `updateMemory` may retag or re-weigh them, not rewrite them."""
    if current.memory_type not in TYPED_MEMORY_TYPES:
        return
    touched = sorted(f for f in ("content", "value", "embedding") if f in changes)
    if not touched:
        return
    if current.memory_type == "fact":
        how = ("a fact's claim is its identity: store the new claim with storeFact"
               " (and invalidateFacts the old one)")
    else:
        how = "change the payload with updateRecord, or replace it with supersedeRecord"
    raise ValidationError(
        f"memory {current.id} is a {current.memory_type} record whose {', '.join(touched)}"
        f" updateMemory may not change; {how}", id=current.id, fields=touched)


def refuse_typed_supersede(old: Memory) -> None:
    """A plain memory must not replace a typed record or fact (its successor would
    carry no label, payload or evidence)."""
    if old.memory_type in TYPED_MEMORY_TYPES:
        raise ValidationError(
            f"memory {old.id} is a {old.memory_type} record; supersede it with"
            " supersedeRecord, whose successor is validated like the original",
            id=old.id, field="id")


def check_version(current: Memory, expected: int | None) -> None:
    if expected is not None and current.version != expected:
        raise VersionConflict(
            f"memory {current.id} is at version {current.version}, not {expected};"
            " re-read it and retry",
            expected=expected, actual=current.version,
        )
