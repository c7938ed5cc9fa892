"""Vector spaces: which embedding model a namespace searches with.

Every memory keeps its *primary* vector in `Memory.embedding` (the client's,
or the server's default model), indexed by `memory_embedding`. A namespace
may choose another model and dimension (`configureNamespace`); its vectors
then live beside the memories, one `(:MemoryVector)-[:EMBEDS]->(:Memory)` per
memory, under a property and a vector index of that space's own. Building
them never rewrites a memory (no new version, no audit entry), and until the
build is complete the namespace keeps searching in the space it had.

This module is pure: names and identities only. The graph side is
`graph.vector_spaces`, the background build `memlattice.services.reembed`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from memlattice.core.errors import ValidationError

_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class VectorSpace:
    """An embedding model at one dimension: vectors of one space are comparable."""

    model: str
    dimension: int

    def __post_init__(self) -> None:
        if not self.model or len(self.model) > 200:
            raise ValidationError("an embedding model name is 1 to 200 characters",
                                  field="embeddingModel")
        if not 1 <= self.dimension <= 4096:
            raise ValidationError("an embedding dimension is between 1 and 4096",
                                  field="embeddingDimension")

    @property
    def slug(self) -> str:
        """A name-safe identity: readable prefix, hash suffix so no two spaces collide."""
        readable = _SLUG.sub("_", self.model.lower()).strip("_")[:40] or "model"
        digest = hashlib.sha256(f"{self.model}\x00{self.dimension}".encode()).hexdigest()[:8]
        return f"{readable}_{self.dimension}_{digest}"

    @property
    def key(self) -> str:
        """What `MemoryVector.space` stores."""
        return f"{self.model}@{self.dimension}"

    @property
    def vector_property(self) -> str:
        """The `MemoryVector` property holding this space's vectors (one index per property)."""
        return f"v_{self.slug}"

    @property
    def index(self) -> str:
        return f"memory_vector_{self.slug}"


class BuildStatus(str, Enum):
    READY = "ready"
    BUILDING = "building"
    FAILED = "failed"


@dataclass(frozen=True)
class SpaceState:
    """A namespace's vector spaces: the one it searches (`active`; None = the
    primary `Memory.embedding`) and the one being built (`target`)."""

    namespace: str
    active: VectorSpace | None
    target: VectorSpace | None
    status: BuildStatus
    error: str | None = None
    updated_at: datetime | None = None

    @property
    def side_spaces(self) -> tuple[VectorSpace, ...]:
        """Spaces new writes must be embedded into besides the primary one."""
        spaces = [s for s in (self.active, self.target) if s is not None]
        return tuple(dict.fromkeys(spaces))

    @classmethod
    def primary(cls, namespace: str) -> SpaceState:
        return cls(namespace=namespace, active=None, target=None, status=BuildStatus.READY)


def requested_space(model: str, dimension: int, *, primary: VectorSpace) -> VectorSpace | None:
    """The side space a configuration asks for, or None when it names the primary space."""
    space = VectorSpace(model, dimension)
    return None if space == primary else space
