"""Keyset pages of memories: the page a listing returns and its opaque cursor."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import datetime

from memlattice.core.errors import ValidationError
from memlattice.core.times import to_utc
from memlattice.graph.codec import Memory


@dataclass(frozen=True)
class Page:
    items: list[Memory]
    total: int
    has_next: bool
    end_cursor: str | None


def encode_cursor(memory: Memory) -> str:
    raw = json.dumps([memory.created_at.isoformat(), memory.id])
    return base64.urlsafe_b64encode(raw.encode()).decode()


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """The (createdAt in UTC, id) a cursor stands for; VALIDATION for anything else,
    a hand-made cursor whose time UTC cannot hold included (`times.OutOfRange`)."""
    try:
        created, id = json.loads(base64.urlsafe_b64decode(cursor.encode()).decode())
        return to_utc(datetime.fromisoformat(created)), str(id)
    except (ValueError, TypeError, RecursionError) as exc:
        raise ValidationError("after is not a cursor this API returned", field="after") from exc
