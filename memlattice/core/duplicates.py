"""What makes two plain memories the same one, and what reinforcing one does (pure).

A write whose content matches an active memory of the same namespace and scope
reinforces that memory instead of storing a second copy (graph.duplicates does
the look-up, inside the write's transaction). "The same content" is equality of
`normalise_content`: Unicode NFKC, case-folded, whitespace collapsed, invisible
format characters dropped and trailing sentence punctuation (`. , ; : ! ?`, an
ellipsis, their CJK, Arabic and Devanagari forms) ignored, so "Alice likes
tea." and "  alice LIKES   tea" are one memory while "Alice likes tea" and
"Alice likes coffee" are two. The stored `contentHash` is the SHA-256 of it.

Beyond the content, a duplicate must agree on everything that decides who
sees the memory and what it is (`DuplicateIdentity`): the scope level and its
ids (agent, user, session, task), the sensitivity (deduplication never
changes, nor ignores, who may read a memory), the `memoryType` and the `key`
(a caller that names a memory differently means another memory).

Reinforcing (`reinforcement`) keeps the existing memory's words, id, summary,
value, metadata and provenance, and takes from the repeated writes what can
only add: the tags are united (existing first, up to MAX_TAGS), confidence and
salience become the higher of the two, the expiry the later one (no expiry
wins), the `reinforcements` count grows by one per repeat and
`lastReinforcedAt` becomes the repeat's time.

A write that names its own `id` is never deduplicated (`plan_writes`): it is
stored under that id, or, when the id already holds the same content and
identity, it is a retry answered with that memory unchanged; any other holder
of the id refuses it (graph.explicit_ids). A write without an id in the same
batch whose identity matches such a new named memory reinforces it.

Near-duplicates (`near_duplicates`) are reported, never merged and never a
reason to refuse: an active memory of the same namespace and scope whose
vector's cosine to the new one is at least NEAR_DUPLICATE_COSINE (0.92, the
threshold storeFact's paraphrase hints use, see core.records.hints) comes back
as a SUPPORTS hint, or as a CONTRADICTS hint when the two are worded alike but
one negates the other or they name different numbers (what an embedding
cannot tell apart).
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memlattice.core.model import MAX_TAGS, MemoryInput
from memlattice.core.records.hints import NEAR_DUPLICATE_COSINE, Claim, Hint, disagreement

# Zero-width joiners shape emoji and Indic scripts; other format characters
# (zero-width space, BOM, word joiner, soft hyphen) only hide differences.
_KEPT_FORMAT = frozenset({"\u200c", "\u200d"})
# Punctuation that ends a sentence or clause, after NFKC (which turns the fullwidth
# forms and the ellipsis into these): ignored at the end. Not every punctuation
# mark: "5%" is not "5", "C#" is not "C", and brackets and quotes say something.
_TRAILING = ".,;:!?\u3002\u3001\uff61\u061f\u06d4\u0964\u0965"


def normalise_content(text: str) -> str:
    """The form two writes of the same content share (see the module docstring)."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    # No ASCII character is a format character (Cf): most contents skip the scan.
    visible = folded if folded.isascii() else "".join(
        c for c in folded if unicodedata.category(c) != "Cf" or c in _KEPT_FORMAT)
    collapsed = " ".join(visible.split())
    return collapsed.rstrip(_TRAILING + " ")


def content_hash(text: str) -> str:
    """SHA-256 (hex) of `normalise_content`: the indexed `contentHash` of a memory."""
    return hashlib.sha256(normalise_content(text).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class DuplicateIdentity:
    """Every property an existing memory must share with a write to be its duplicate."""

    content_hash: str
    scope: str | None
    agent_id: str | None
    user_id: str | None
    session_id: str | None
    task_id: str | None
    sensitivity: str
    memory_type: str
    key: str | None

    def params(self) -> dict[str, Any]:
        """The Cypher parameters graph.duplicates compares stored properties with."""
        return {"contentHash": self.content_hash, "scope": self.scope,
                "agentId": self.agent_id, "userId": self.user_id,
                "sessionId": self.session_id, "taskId": self.task_id,
                "sensitivity": self.sensitivity, "memoryType": self.memory_type,
                "key": self.key}


def identity_of(memory: MemoryInput) -> DuplicateIdentity:
    return DuplicateIdentity(
        content_hash=content_hash(memory.content),
        scope=memory.scope.value if memory.scope is not None else None,
        agent_id=memory.agent_id, user_id=memory.user_id, session_id=memory.session_id,
        task_id=memory.task_id, sensitivity=memory.sensitivity.value,
        memory_type=memory.memory_type, key=memory.key)


def groups(inputs: Sequence[MemoryInput]) -> list[list[int]]:
    """The batch's positions grouped by identity, in order of first appearance: a
    batch that holds the same memory twice stores it once."""
    by_identity: dict[DuplicateIdentity, list[int]] = {}
    for i, memory in enumerate(inputs):
        by_identity.setdefault(identity_of(memory), []).append(i)
    return list(by_identity.values())


@dataclass(frozen=True)
class WritePlan:
    """How a batch's inputs are written, by position (see `plan_writes`)."""

    # Inputs that name their own id: stored under it, the same memory again, or refused
    # (graph.explicit_ids); never deduplicated against another memory.
    named: tuple[int, ...]
    # Inputs without an id that allow duplicates: stored as they are.
    fresh: tuple[int, ...]
    # Inputs without an id, grouped by identity: each group repeats a stored memory,
    # joins the batch's first named input of its identity, or is stored once.
    deduped: tuple[tuple[int, ...], ...]


def plan_writes(inputs: Sequence[MemoryInput], allow_duplicate: Sequence[bool]) -> WritePlan:
    """Deduplication applies only to writes without an id: an id means that memory."""
    named = tuple(i for i, m in enumerate(inputs) if m.id is not None)
    fresh = tuple(i for i, m in enumerate(inputs) if m.id is None and allow_duplicate[i])
    deduped = tuple(kept for kept in (
        tuple(i for i in group if inputs[i].id is None and not allow_duplicate[i])
        for group in groups(inputs)) if kept)
    return WritePlan(named=named, fresh=fresh, deduped=deduped)


@dataclass(frozen=True)
class Kept:
    """The parts of a memory a reinforcement may change, as they are now."""

    tags: tuple[str, ...]
    confidence: float
    salience: float | None
    expires_at: datetime | None


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    """The later expiry; None (never expires) is later than any time."""
    if a is None or b is None:
        return None
    return max(a, b)


def _higher(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


def reinforcement(kept: Kept, repeats: Iterable[MemoryInput]) -> Kept:
    """`kept` once every write of `repeats` has reinforced it (see the module docstring)."""
    tags = list(kept.tags)
    confidence, salience, expires = kept.confidence, kept.salience, kept.expires_at
    for memory in repeats:
        tags += [t for t in memory.tags if t not in tags]
        confidence = max(confidence, memory.confidence)
        salience = _higher(salience, memory.salience)
        expires = _later(expires, memory.expires_at)
    return Kept(tags=tuple(tags[:MAX_TAGS]), confidence=confidence, salience=salience,
                expires_at=expires)


def kept_of(memory: MemoryInput) -> Kept:
    return Kept(tags=memory.tags, confidence=memory.confidence, salience=memory.salience,
                expires_at=memory.expires_at)


def near_duplicates(memory_id: str, text: str, candidates: Iterable[Claim]) -> list[Hint]:
    """Hints for the new memory `memory_id` against its nearest neighbours, strongest
    first: those at or above NEAR_DUPLICATE_COSINE (see the module docstring)."""
    new = Claim(memory_id, text)
    found: list[Hint] = []
    for old in candidates:
        if old.id == memory_id or old.similarity is None:
            continue
        if old.similarity < NEAR_DUPLICATE_COSINE:
            continue
        score = round(min(old.similarity, 1.0), 4)
        why = disagreement(new, old)
        if why is not None:
            found.append(Hint("CONTRADICTS", old.id, f"near-duplicate wording, but {why}",
                              score))
        else:
            found.append(Hint("SUPPORTS", old.id, "near-duplicate memory (embedding)", score))
    return sorted(found, key=lambda h: (-h.score, h.kind, h.memory_id))
