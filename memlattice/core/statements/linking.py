"""Which pairs of memories to link, from what each states and when it was written.

Every statement of a memory being written is compared with the statements of
the same attribute key that other memories made (the graph's `Attribute` node
gathers them) and with the batch's own. For each new statement only its
nearest neighbours in time are linked: the latest earlier statement of the same
subject and attribute (if its value differs: an update or a contradiction; if
it agrees, nothing, the earlier states having been linked in turn), and, for a
statement written out of order, the earliest later one. So a chain of states
A -> B -> C becomes two links, B updates A and C updates B. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from memlattice.core.statements.compare import Verdict, about_same, compare
from memlattice.core.statements.extract import Statement


@dataclass(frozen=True, slots=True)
class Stated:
    """A statement of one memory: which memory, when it was written, from which
    source (a speaker's or a writer's key: a source restating its own fact updates
    it) and the memories it is already linked with (never linked twice)."""

    memory_id: str
    at: datetime
    source: str | None
    statement: Statement
    linked: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Link:
    newer: str
    older: str
    verdict: Verdict


def _order(s: Stated) -> tuple[datetime, str]:
    return s.at, s.memory_id


def links(new: Sequence[Stated], earlier: Iterable[Stated]) -> list[Link]:
    """The links the new statements make, with each other and with `earlier`."""
    pool = sorted([*new, *earlier], key=_order)
    fresh = {id(s) for s in new}
    made: dict[tuple[str, str], Link] = {}
    for i, s in enumerate(pool):
        if id(s) not in fresh:
            continue
        before = next((p for p in reversed(pool[:i])
                       if p.memory_id != s.memory_id and about_same(p.statement, s.statement)),
                      None)
        if before is not None:
            _add(made, before, s)
        after = next((p for p in pool[i + 1:]
                      if p.memory_id != s.memory_id and id(p) not in fresh
                      and about_same(p.statement, s.statement)), None)
        if after is not None:
            _add(made, s, after)
    return list(made.values())


def _add(made: dict[tuple[str, str], Link], older: Stated, newer: Stated) -> None:
    pair = (newer.memory_id, older.memory_id)
    if pair in made or (pair[::-1]) in made:
        return
    if older.memory_id in newer.linked or newer.memory_id in older.linked:
        return
    verdict = compare(older.statement, newer.statement,
                      same_source=older.source is not None and older.source == newer.source)
    if verdict is not None:
        made[pair] = Link(newer.memory_id, older.memory_id, verdict)
