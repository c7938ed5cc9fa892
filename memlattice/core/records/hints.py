"""Contradiction and support hints on write, without an LLM (pure rules).

A new claim is compared with existing active claims of its namespace:

- same subject and predicate, another object  -> CONTRADICTS candidate
- same subject, predicate and object          -> SUPPORTS candidate (a duplicate)
- word overlap (Jaccard) >= NEAR_DUPLICATE    -> SUPPORTS candidate (a near-duplicate)
- embedding cosine >= NEAR_DUPLICATE_COSINE, and the claims agree
                                              -> SUPPORTS candidate (a paraphrase)

The contradiction rule wins over the others: "Alice lives in Lisbon" and
"Alice lives in Porto" share most words and still disagree. So do claims
worded alike (by words or by embedding) where one negates the other or they
name different numbers ("The build requires Java 17" / "... Java 21"): those
are CONTRADICTS candidates, not near-duplicates.

The embedding rule adds recall for paraphrases that share few words ("Alice
lives in Lisbon" / "Alice is a resident of Lisbon": Jaccard 0.5, cosine
0.93 with the local WordLlama model). Its threshold was tuned on that model,
an average of token vectors that is blind to word order, negation and which
number is which: "Alice does not live in Lisbon" scores 0.94 and "The build
requires Java 17" 0.91 against their opposites. So a paraphrase only counts
when the claims agree on what such a model cannot see: both negated or
neither, the same numbers, and for two subject-predicate-object claims the
same subject and object (the predicate may be worded differently).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NEAR_DUPLICATE = 0.6
# Cosine in [-1, 1] (Neo4j's vector functions report (1 + cosine) / 2; graph.hints
# converts). 0.92 keeps "Alice is a resident of Lisbon" (0.925) and leaves out
# "Deployments happen every Monday morning" against "... every Friday afternoon" (0.81).
NEAR_DUPLICATE_COSINE = 0.92
_WORD = re.compile(r"[a-z0-9]+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NEGATION = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor",
                       "cannot", "without"})
_STOP = frozenset({"a", "an", "the", "of", "in", "on", "at", "to", "is", "are", "was", "were",
                   "be", "and", "or", "for", "with", "by"})


@dataclass(frozen=True)
class Claim:
    id: str
    text: str
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    # Cosine similarity of this claim's vector to the new claim's, when both have one.
    similarity: float | None = None


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


def negated(text: str) -> bool:
    """Whether a text says "not" in some form (including "isn't", "can't", "won't")."""
    lowered = text.lower()
    return "n't" in lowered or "n\u2019t" in lowered or bool(
        _NEGATION & set(_WORD.findall(lowered)))


def numbers(text: str) -> frozenset[str]:
    return frozenset(_NUMBER.findall(text))


def disagreement(new: Claim, old: Claim) -> str | None:
    """How two similarly worded claims still say different things, if they do:
    one negates the other, or they name different numbers."""
    if negated(new.text) != negated(old.text):
        return "one claim negates the other"
    new_numbers, old_numbers = numbers(new.text), numbers(old.text)
    if new_numbers and old_numbers and new_numbers != old_numbers:
        return "the claims name different numbers"
    return None


def agree(new: Claim, old: Claim) -> bool:
    """Whether two similar claims may be taken as saying the same thing (see above)."""
    if negated(new.text) != negated(old.text) or numbers(new.text) != numbers(old.text):
        return False
    if new.subject is not None and old.subject is not None:
        return new.subject == old.subject and new.object == old.object
    return True


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
            close = old.similarity is not None and old.similarity >= NEAR_DUPLICATE_COSINE
            why = disagreement(new, old) if score >= NEAR_DUPLICATE or close else None
            if why is not None:
                strength = max(score, old.similarity or 0.0)
                found.append(Hint("CONTRADICTS", old.id, f"near-duplicate wording, but {why}",
                                  round(strength, 4)))
            elif score >= NEAR_DUPLICATE:
                found.append(Hint("SUPPORTS", old.id, "near-duplicate claim", round(score, 4)))
            elif close and agree(new, old):
                found.append(Hint("SUPPORTS", old.id, "near-duplicate claim (embedding)",
                                  round(old.similarity or 0.0, 4)))
    return sorted(found, key=lambda h: (-h.score, h.kind, h.memory_id))
