"""What callers send to write records and facts, validated once (no I/O).

A record input is a memory input without a mandatory `content` (it is made
from the payload when absent, so every record is searchable as text) plus a
type, a payload and world time. Both become a plain `MemoryInput` for the
parts every memory shares (scope, sensitivity, tags, embedding...).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field, field_validator, model_validator

from memlattice.core.errors import ValidationError
from memlattice.core.lucene import words
from memlattice.core.model import MemoryInput, as_utc, validated
from memlattice.core.records.payloads import EvidenceRef, Payload, RecordType, parse_payload
from memlattice.core.records.text import describe

MAX_EVIDENCE = 100
# The kind of a fact written through writeMemory (`memoryType: "fact"`) without a
# `metadata.factKind`: storeFact requires a kind, a plain memory has none.
DEFAULT_FACT_KIND = "general"


class RecordInput(MemoryInput):
    """A typed record as a caller writes it; `content` defaults to a text of the payload."""

    content: str = Field(default="", max_length=100_000)
    type: RecordType
    payload: dict[str, Any]
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    # How fast this record's salience decays (consolidation's default when unset).
    salience_half_life_days: float | None = Field(default=None, gt=0.0, le=36_500)

    @field_validator("content")
    @classmethod
    def _content_not_blank(cls, value: str) -> str:  # blank means "derive it"
        return value

    _world = field_validator("valid_from", "valid_to")(classmethod(lambda cls, v: as_utc(v)))

    @model_validator(mode="after")
    def _world_time(self) -> RecordInput:
        if self.valid_from and self.valid_to and self.valid_to <= self.valid_from:
            raise ValueError("validTo must be after validFrom")
        return self

    def parsed(self) -> tuple[Payload, MemoryInput]:
        """The validated payload and the memory the record is stored as."""
        payload = parse_payload(self.type, self.payload)
        base = self.model_dump(exclude={"type", "payload", "valid_from", "valid_to",
                                        "salience_half_life_days"})
        base["content"] = self.content if self.content.strip() else describe(payload)
        base["memory_type"] = self.type.value
        return payload, MemoryInput(**base)


class FactInput(MemoryInput):
    """`storeFact`: a claim of some kind, how sure, what it rests on, until when."""

    content: str = Field(default="", max_length=100_000)
    kind: str = Field(pattern=r"^[a-z][a-z0-9_.:-]{0,63}$")
    claim: str = Field(min_length=1, max_length=10_000)
    evidence: tuple[EvidenceRef, ...] = Field(default=(), max_length=MAX_EVIDENCE)
    valid_until: datetime | None = None

    @field_validator("content")
    @classmethod
    def _content_not_blank(cls, value: str) -> str:  # the claim is the content
        return value

    @field_validator("claim")
    @classmethod
    def _claim(cls, value: str) -> str:
        # A claim without a word can be neither searched nor told apart from another.
        if not words(value):
            raise ValueError("claim has no word (letters or digits)")
        return value.strip()

    _until = field_validator("valid_until")(classmethod(lambda cls, v: as_utc(v)))

    @classmethod
    def from_memory(cls, memory: MemoryInput) -> FactInput:
        """A plain memory sent with `memoryType: "fact"` read as storeFact reads its input.

        Writing a fact through writeMemory is the first thing a newcomer tries; rather
        than refuse it, the content becomes the claim and `metadata.factKind` the kind
        (DEFAULT_FACT_KIND when absent), so the fact is deduplicated and reinforced like
        any other. A fact's id is derived from its claim, so an `id` is refused.
        """
        if memory.id is not None:
            raise ValidationError(
                "a fact's id is derived from its claim (the same claim again reinforces it):"
                " leave `id` out, or give the memory another memoryType", field="id")
        base = memory.model_dump(exclude={"id", "memory_type", "content"})
        kind = base["metadata"].get("factKind", DEFAULT_FACT_KIND)
        return validated(cls, **base, kind=kind, claim=memory.content)

    def as_memory(self, id: str) -> MemoryInput:
        base = self.model_dump(exclude={"kind", "claim", "evidence", "valid_until", "id"})
        base.update(id=id, content=self.claim, memory_type="fact",
                    expires_at=self.valid_until or self.expires_at,
                    metadata={**self.metadata, "factKind": self.kind})
        return MemoryInput(**base)
