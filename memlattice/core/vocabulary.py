"""The closed vocabularies of the domain: sensitivity, status, relationship types,
directions and search modes (scopes are in memlattice.core.scopes).
"""

from __future__ import annotations

from enum import StrEnum


class Sensitivity(StrEnum):
    """How sensitive a record is, least first; a caller sees up to its key's clearance.

    Ordered by rank (`Sensitivity.LOW < Sensitivity.HIGH`), not alphabetically.
    Records written before sensitivity existed count as LOW.
    """

    PUBLIC = "public"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    HYPER = "hyper"

    @property
    def rank(self) -> int:
        return SENSITIVITY_ORDER.index(self)

    def __lt__(self, other: object) -> bool:
        return self.rank < Sensitivity(other).rank  # type: ignore[arg-type]

    def __le__(self, other: object) -> bool:
        return self.rank <= Sensitivity(other).rank  # type: ignore[arg-type]

    def __gt__(self, other: object) -> bool:
        return self.rank > Sensitivity(other).rank  # type: ignore[arg-type]

    def __ge__(self, other: object) -> bool:
        return self.rank >= Sensitivity(other).rank  # type: ignore[arg-type]


SENSITIVITY_ORDER: tuple[Sensitivity, ...] = tuple(Sensitivity)
DEFAULT_SENSITIVITY = Sensitivity.LOW


class Status(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    FORGOTTEN = "forgotten"
    # A record or fact withdrawn as wrong (retract, invalidateFacts); kept for audit.
    RETRACTED = "retracted"


class WriteEffect(StrEnum):
    """What one write of a plain memory did (graph.duplicates), said on its result."""

    # Stored as a new memory: under the caller's id when it named one.
    CREATED = "created"
    # A write without an id repeated an active memory, which it reinforced (duplicateOf).
    REINFORCED = "reinforced"
    # The caller's id already held this content: a retry; nothing was written.
    UNCHANGED = "unchanged"


class EdgeType(StrEnum):
    """The relationship types between memories; the only ones Cypher will ever see."""

    RELATED = "RELATED"
    DERIVED = "DERIVED"
    CONTRADICTS = "CONTRADICTS"
    SUPPORTS = "SUPPORTS"
    SUPERSEDES = "SUPERSEDES"


class Direction(StrEnum):
    OUT = "out"
    IN = "in"
    BOTH = "both"


class SearchMode(StrEnum):
    LEXICAL = "lexical"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"


class ScoringMode(StrEnum):
    """How candidates are scored: raw similarity, weighted parts, rank fusion, or
    score fusion (memlattice.search.fusion)."""

    SIMILARITY = "similarity"
    HYBRID = "hybrid"
    RRF = "rrf"
    FUSION = "fusion"
