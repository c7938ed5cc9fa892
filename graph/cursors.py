"""Keyset pages of memories: the page a listing returns, the slice of the newest-first
order it asks for (Relay's first/after and last/before), and the opaque cursor."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import datetime

from memlattice.core.errors import ValidationError
from memlattice.core.times import to_utc
from memlattice.graph.codec import Memory

Position = tuple[datetime, str]
"""Where a memory sits in the listing's order: (createdAt in UTC, id), both descending."""

DEFAULT_PAGE = 50


@dataclass(frozen=True)
class Window:
    """Which slice of the newest-first order a page takes.

    Forward (`first`): the `size` memories right after `after` (from the newest
    when it is None). Backward (`last`): the `size` memories right before `before`
    (the oldest ones when it is None). Both bounds may be given at once; each keeps
    only what lies strictly between them, as Relay's ApplyCursorsToEdges does."""

    size: int
    backward: bool = False
    after: Position | None = None
    before: Position | None = None


@dataclass(frozen=True)
class Page:
    items: list[Memory]
    total: int
    has_next: bool
    end_cursor: str | None
    has_previous: bool = False
    start_cursor: str | None = None


def window(*, first: int | None, last: int | None, after: str | None, before: str | None,
           max_size: int) -> Window:
    """The slice Relay's four arguments ask for; VALIDATION when they contradict.

    `first` and `last` together are refused (the Relay spec strongly discourages
    them; their meaning is a trim of a trim nobody asks for), as is a size outside
    [1, max_size]; neither given means the first DEFAULT_PAGE."""
    if first is not None and last is not None:
        raise ValidationError("give first or last, not both", field="last")
    name, size = ("last", last) if last is not None else ("first", first)
    if size is None:
        size = min(DEFAULT_PAGE, max_size)
    if not 1 <= size <= max_size:
        raise ValidationError(f"{name} must be between 1 and {max_size}", field=name)
    return Window(size=size, backward=last is not None,
                  after=decode_cursor(after, field="after") if after else None,
                  before=decode_cursor(before, field="before") if before else None)


def page_of(rows: list[Memory], *, total: int, asked: Window, beyond: bool) -> Page:
    """The page from up to `size + 1` rows read in the window's direction.

    One row too many means more lie past the page in that direction (hasNextPage
    going forward, hasPreviousPage going backward); `beyond` says whether any
    memory lies on the other side of the cursor the page started from, which the
    listing query checks in the same round trip."""
    more = len(rows) > asked.size
    items = rows[:asked.size]
    if asked.backward:
        items.reverse()
    return Page(
        items=items, total=total,
        has_next=beyond if asked.backward else more,
        has_previous=more if asked.backward else beyond,
        start_cursor=encode_cursor(items[0]) if items else None,
        end_cursor=encode_cursor(items[-1]) if items else None,
    )


def encode_cursor(memory: Memory) -> str:
    raw = json.dumps([memory.created_at.isoformat(), memory.id])
    return base64.urlsafe_b64encode(raw.encode()).decode()


def decode_cursor(cursor: str, *, field: str = "after") -> Position:
    """The (createdAt in UTC, id) a cursor stands for; VALIDATION for anything else,
    a hand-made cursor whose time UTC cannot hold included (`times.OutOfRange`)."""
    try:
        created, id = json.loads(base64.urlsafe_b64decode(cursor.encode()).decode())
        return to_utc(datetime.fromisoformat(created)), str(id)
    except (ValueError, TypeError, RecursionError) as exc:
        raise ValidationError(f"{field} is not a cursor this API returned", field=field
                              ) from exc
