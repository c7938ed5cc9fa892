"""Relay's first/after/last/before as a keyset window, and the page it makes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memlattice.core.errors import ValidationError
from memlattice.core.model import Status
from memlattice.graph.codec import Memory
from memlattice.graph.cursors import (
    DEFAULT_PAGE,
    Window,
    decode_cursor,
    encode_cursor,
    page_of,
    window,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def memory(i: int) -> Memory:
    at = T0 + timedelta(minutes=i)
    return Memory(id=f"m{i}", namespace="ns", content=f"c{i}", version=1, created_at=at,
                  updated_at=at, status=Status.ACTIVE)


def test_neither_size_means_the_first_default_page() -> None:
    assert window(first=None, last=None, after=None, before=None, max_size=500) == Window(
        DEFAULT_PAGE)


def test_last_pages_backward_and_both_cursors_are_decoded() -> None:
    a, b = encode_cursor(memory(1)), encode_cursor(memory(5))
    got = window(first=None, last=3, after=a, before=b, max_size=500)
    assert got == Window(3, backward=True, after=(memory(1).created_at, "m1"),
                         before=(memory(5).created_at, "m5"))


@pytest.mark.parametrize(("first", "last", "field"), [
    (2, 2, "last"), (0, None, "first"), (501, None, "first"), (None, 0, "last"),
    (None, -1, "last"), (None, 501, "last"),
])
def test_contradicting_or_out_of_range_sizes_are_validation(
    first: int | None, last: int | None, field: str,
) -> None:
    with pytest.raises(ValidationError) as caught:
        window(first=first, last=last, after=None, before=None, max_size=500)
    assert caught.value.details["field"] == field


def test_a_bad_before_cursor_names_before() -> None:
    with pytest.raises(ValidationError) as caught:
        window(first=None, last=2, after=None, before="garbage", max_size=500)
    assert caught.value.details["field"] == "before"
    assert decode_cursor(encode_cursor(memory(2)), field="before") == (memory(2).created_at, "m2")


def test_a_forward_page_says_more_follow_from_the_extra_row() -> None:
    rows = [memory(9), memory(8), memory(7)]  # newest first, one more than asked
    page = page_of(rows, total=10, asked=Window(2, after=(T0, "x")), beyond=True)
    assert [m.id for m in page.items] == ["m9", "m8"]
    assert (page.has_next, page.has_previous) == (True, True)
    assert page.start_cursor == encode_cursor(memory(9))
    assert page.end_cursor == encode_cursor(memory(8))


def test_a_backward_page_is_turned_round_into_list_order() -> None:
    rows = [memory(1), memory(2), memory(3)]  # oldest first, one more than asked
    page = page_of(rows, total=10, asked=Window(2, backward=True), beyond=False)
    assert [m.id for m in page.items] == ["m2", "m1"]
    assert (page.has_next, page.has_previous) == (False, True)
    assert page.start_cursor == encode_cursor(memory(2))


def test_an_empty_page_has_no_cursors() -> None:
    page = page_of([], total=0, asked=Window(5, backward=True), beyond=False)
    assert (page.items, page.start_cursor, page.end_cursor) == ([], None, None)
    assert (page.has_next, page.has_previous) == (False, False)
