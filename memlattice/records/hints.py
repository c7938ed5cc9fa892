"""Contradiction and support hints on write, without an LLM (pure rules).

A new claim is compared with existing active claims of its namespace:

- same subject and predicate, another object  -> CONTRADICTS candidate
- same subject, predicate and object          -> SUPPORTS candidate (a duplicate)
- word overlap (Jaccard) >= NEAR_DUPLICATE    -> SUPPORTS candidate (a near-duplicate)

The contradiction rule wins over the overlap rule: "Alice lives in Lisbon"
and "Alice lives in Porto" share most words and still disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NEAR_DUPLICATE = 0.6
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset({"a", "an", "the", "of", "in", "on", "at", "to", "is", "are", "was", "were",
                   "be", "and", "or", "for", "with", "by"})


@dataclass(frozen=True)
class Claim:
    id: str
    text: str
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None


@dataclass(frozen=True)
class Hint:
    kind: str  # "CONTRADICTS" | "SUPPORTS"
    memory_id: str
    reason: str
    score: float


def words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in _STOP)


def overlap(a: str, b: str) -> float:
    """Jaccard similarity of the content words of two texts, in [0, 1]."""
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def hints_for(new: Claim, candidates: list[Claim]) -> list[Hint]:
    """Hints for `new` against `candidates`, strongest first, one per candidate."""
    found: list[Hint] = []
    for old in candidates:
        if old.id == new.id:
            continue
        same_sp = (new.subject is not None and new.subject == old.subject
                   and new.predicate == old.predicate)
        if same_sp and new.object != old.object:
            found.append(Hint("CONTRADICTS", old.id,
                              "same subject and predicate, another object", 1.0))
        elif same_sp:
            found.append(Hint("SUPPORTS", old.id, "same subject, predicate and object", 1.0))
        else:
            score = overlap(new.text, old.text)
            if score >= NEAR_DUPLICATE:
                found.append(Hint("SUPPORTS", old.id, "near-duplicate claim", round(score, 4)))
    return sorted(found, key=lambda h: (-h.score, h.kind, h.memory_id))
