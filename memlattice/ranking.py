"""Pure ranking: fuse vector and fulltext candidates into one ordered list.

No I/O here, so the same code ranks inside the service and inside the
benchmarks, and is unit-tested on its own. Order is deterministic: equal
scores are broken by id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memlattice.model import SearchMode

RRF_K = 60


@dataclass(frozen=True)
class Candidate:
    id: str
    score: float


@dataclass(frozen=True)
class Fused:
    id: str
    score: float
    similarity: float | None
    fts: float | None
    similarity_rank: int | None
    fts_rank: int | None


def _ranked(candidates: Sequence[Candidate]) -> dict[str, tuple[int, float]]:
    """id -> (1-based rank, score), best first, ties by id; duplicates keep the best."""
    ordered = sorted(candidates, key=lambda c: (-c.score, c.id))
    ranks: dict[str, tuple[int, float]] = {}
    for candidate in ordered:
        if candidate.id not in ranks:
            ranks[candidate.id] = (len(ranks) + 1, candidate.score)
    return ranks


def fuse(
    semantic: Sequence[Candidate],
    lexical: Sequence[Candidate],
    mode: SearchMode,
    *,
    rrf_k: int = RRF_K,
) -> list[Fused]:
    """Reciprocal-rank fusion for hybrid; a single list's own score otherwise.

    RRF needs no score calibration between cosine similarity and BM25, which
    live on unrelated scales; that is why it is the hybrid default.
    """
    sem = _ranked(semantic) if mode is not SearchMode.LEXICAL else {}
    lex = _ranked(lexical) if mode is not SearchMode.SEMANTIC else {}
    fused: list[Fused] = []
    for id in sem.keys() | lex.keys():
        s = sem.get(id)
        f = lex.get(id)
        if mode is SearchMode.SEMANTIC:
            score = s[1] if s else 0.0
        elif mode is SearchMode.LEXICAL:
            score = f[1] if f else 0.0
        else:
            score = sum(1.0 / (rrf_k + rank) for rank, _ in (x for x in (s, f) if x))
        fused.append(Fused(
            id=id,
            score=score,
            similarity=s[1] if s else None,
            fts=f[1] if f else None,
            similarity_rank=s[0] if s else None,
            fts_rank=f[0] if f else None,
        ))
    fused.sort(key=lambda x: (-x.score, x.id))
    return fused
