"""Relay connections: the paged lists of the API (`memories`) and their PageInfo, as the
Relay cursor connections spec has them, so Relay's and Apollo's pagination helpers
(relayStylePagination) page them unchanged."""

from __future__ import annotations

import strawberry

from memlattice.resolvers.types import Memory


@strawberry.type(description=(
    "Where a page of a connection sits in the whole list (the Relay cursor connections"
    " spec's PageInfo). Pass `endCursor` as `after` with `first` for the next page, or"
    " `startCursor` as `before` with `last` for the previous one."))
class PageInfo:
    has_next_page: bool = strawberry.field(description=(
        "Paging forward (`first`): more items follow this page. Paging backward (`last`):"
        " some item lies at or after the `before` cursor (false without `before`)."))
    has_previous_page: bool = strawberry.field(description=(
        "Paging backward (`last`): more items precede this page. Paging forward (`first`):"
        " some item lies at or before the `after` cursor (false without `after`)."))
    start_cursor: str | None = strawberry.field(description=(
        "The cursor of the page's first edge; null when the page is empty."))
    end_cursor: str | None = strawberry.field(description=(
        "The cursor of the page's last edge; null when the page is empty."))


@strawberry.type(description="One memory of a page, with the cursor of its place in the list.")
class MemoryEdge:
    cursor: str = strawberry.field(description=(
        "Opaque; pass it as `after` (or `before`) to page on from this memory. It stays"
        " valid when memories are added or removed: a page resumes at this memory's place."))
    node: Memory = strawberry.field(description="The memory.")


@strawberry.type(description=(
    "A Relay connection over memories, newest first (by createdAt, then id). Pages"
    " forward with `first`/`after` and backward with `last`/`before`."))
class MemoryConnection:
    edges: list[MemoryEdge] = strawberry.field(description=(
        "This page's memories in list order (newest first), whichever way it was paged."))
    page_info: PageInfo = strawberry.field(description="Where this page sits in the list.")
    total_count: int = strawberry.field(description=(
        "How many memories match the filter in all, whatever the page (the caller's own"
        " visible ones only)."))
