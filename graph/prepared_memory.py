"""A memory ready to be written: its validated input and what the service resolved for it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import uuid_utils

from memlattice.core.model import MemoryInput
from memlattice.graph.codec import MEMORY_TIMES, epoch_parts, memory_properties
from memlattice.graph.entities import mention_rows


def new_id() -> str:
    """UUIDv7: time-ordered, so ids sort roughly by creation."""
    return str(uuid_utils.uuid7())


@dataclass(frozen=True)
class PreparedMemory:
    """A validated input plus what the service resolved for it (id, time, vector)."""

    input: MemoryInput
    id: str
    now: datetime
    embedding: list[float] | None
    embedding_model: str | None
    # When what it tells of happened (memlattice.core.event_time), if its text says.
    event_start: datetime | None = None
    event_end: datetime | None = None


def written_properties(memories: Sequence[PreparedMemory]) -> list[dict[str, Any]]:
    """The node properties each memory is written with: what a created `Memory` is
    read from, without a second round trip."""
    return [memory_properties(m.input, id=m.id, now=m.now, embedding=m.embedding,
                              embedding_model=m.embedding_model,
                              event=(m.event_start, m.event_end)) for m in memories]


def creation_rows(written: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """`queries.create_memories`' rows: the properties less their times, the times as
    epoch parts (`codec.MEMORY_TIMES` order), a fresh audit id for each, and the
    names the content mentions (graph.entities)."""
    return [{"props": {k: v for k, v in props.items() if k not in MEMORY_TIMES},
             "times": [epoch_parts(props.get(name)) for name in MEMORY_TIMES],
             "auditId": new_id(),
             "mentions": mention_rows(str(props.get("content") or ""))} for props in written]
