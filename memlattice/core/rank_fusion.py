"""Reciprocal-rank fusion: one order from several, where their scores do not compare.

Used where a memory's earlier neighbours by vector and by words are put in one order:
the offers `Memory.mayReplace` gives (services.updates) and the write path's question
which earlier memory a new one is nearest to (graph.updates.store).
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = 60) -> list[str]:
    """The ids of `rankings` (each best first) by the sum of 1 / (k + rank) over the
    lists that hold them (Cormack, Clarke and Buettcher 2009; k = 60 is theirs); a
    tie keeps the order of first appearance. Used where the lists' scores do not
    compare, or where too few candidates make a z-score meaningless."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, id in enumerate(ranking, start=1):
            fused[id] = fused.get(id, 0.0) + 1.0 / (k + rank)
    first_seen = {id: i for i, id in enumerate(dict.fromkeys(
        id for ranking in rankings for id in ranking))}
    return sorted(fused, key=lambda id: (-fused[id], first_seen[id]))


def order_by(items: Sequence[T], score: Callable[[T], float | None],
             key: Callable[[T], str]) -> list[str]:
    """The keys of the `items` `score` scores, best first (ties by key), for fusing."""
    scored = [item for item in items if score(item) is not None]
    return [key(item) for item in sorted(scored, key=lambda item: (-(score(item) or 0.0),
                                                                   key(item)))]
