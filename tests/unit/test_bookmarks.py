"""The bookmark header's codec, and a request's causal chain over the process's.

No Neo4j here: the codec is pure, and the chain is exercised through the
driver's own in-memory bookmark manager, the way the driver calls it (get
before a transaction, update after its commit). That the service really
hands the chain to Neo4j is tests/integration/test_causal_bookmarks.py.
"""

from __future__ import annotations

import asyncio
import base64
import json

import pytest
from neo4j import AsyncGraphDatabase

from memlattice.core import bookmarks
from memlattice.core.errors import BadBookmark, BadRequest
from memlattice.graph.causal import bookmarks_for_now, request_chain

NEO4J_LIKE = "FB:kcwQq1RS61dJTzatyRAr7ZbmF8lbXpA="


def token_of(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def test_a_token_carries_its_bookmarks_back() -> None:
    token = bookmarks.encode({NEO4J_LIKE, "FB:other"})
    assert "," not in token and "=" not in token
    assert bookmarks.decode([token]) == {NEO4J_LIKE, "FB:other"}
    # The same bookmarks give the same token, whatever their order.
    assert bookmarks.encode(["FB:other", NEO4J_LIKE]) == token


def test_no_bookmarks_is_no_token_and_an_empty_header_is_none() -> None:
    assert bookmarks.encode([]) == ""
    assert bookmarks.decode([]) == frozenset()
    assert bookmarks.decode(["", " , "]) == frozenset()


def test_several_tokens_and_repeated_headers_are_one_union() -> None:
    a, b, c = (bookmarks.encode([f"FB:{n}"]) for n in "abc")
    assert bookmarks.decode([f"{a}, {b}", c]) == {"FB:a", "FB:b", "FB:c"}
    padded = base64.urlsafe_b64encode(json.dumps(["FB:a"]).encode()).decode()
    assert bookmarks.decode([padded]) == {"FB:a"}


@pytest.mark.parametrize("value", [
    "not base64!",                      # characters outside URL-safe base64
    "bm90IGpzb24",                      # base64 of "not json"
    token_of({"a": "b"}),               # JSON, not a list
    token_of([]),                       # an empty list
    token_of([1, 2]),                   # not strings
    token_of([""]),                     # an empty bookmark
    token_of(["has space"]),            # not a bookmark's characters
    token_of(["\u00e9t\u00e9"]),        # not ASCII
    token_of(["x" * 513]),              # one bookmark too long
    base64.urlsafe_b64encode(b"\xff\xfe").decode(),  # not UTF-8
])
def test_a_value_this_service_did_not_issue_is_refused(value: str) -> None:
    with pytest.raises(BadBookmark) as refused:
        bookmarks.decode([value])
    assert refused.value.code == "BAD_BOOKMARK"
    assert isinstance(refused.value, BadRequest)
    assert bookmarks.HEADER in refused.value.message


def test_sizes_are_bounded() -> None:
    many = bookmarks.encode([f"FB:{n}" for n in range(bookmarks.MAX_BOOKMARKS + 1)])
    with pytest.raises(BadBookmark, match="more than"):
        bookmarks.decode([many])
    enough = bookmarks.encode([f"FB:{n}" for n in range(bookmarks.MAX_BOOKMARKS)])
    assert len(bookmarks.decode([enough])) == bookmarks.MAX_BOOKMARKS
    long = ",".join([enough] * 40)
    assert len(long) > bookmarks.MAX_HEADER_CHARS
    with pytest.raises(BadBookmark, match="longer than") as refused:
        bookmarks.decode([long])
    assert refused.value.details == {"limit": bookmarks.MAX_HEADER_CHARS}


async def test_without_a_request_the_process_chain_is_used() -> None:
    process = AsyncGraphDatabase.bookmark_manager()
    assert bookmarks_for_now(process) is process


async def test_a_request_waits_for_both_chains_and_advances_both() -> None:
    process = AsyncGraphDatabase.bookmark_manager()
    await process.update_bookmarks([], ["FB:process-1"])
    with request_chain({"FB:client-1"}) as chain:
        manager = bookmarks_for_now(process)
        started = set(await manager.get_bookmarks())
        assert started == {"FB:process-1", "FB:client-1"}
        # The transaction commits: what it started from is superseded by its bookmark.
        await manager.update_bookmarks(started, ["FB:tx-2"])
        assert chain.bookmarks == {"FB:tx-2"}
        assert set(await process.get_bookmarks()) == {"FB:tx-2"}
        # A transaction that brings no bookmark changes nothing.
        await bookmarks_for_now(process).update_bookmarks({"FB:tx-2"}, [])
        assert chain.bookmarks == {"FB:tx-2"}


async def test_overlapping_transactions_of_a_request_are_all_kept() -> None:
    process = AsyncGraphDatabase.bookmark_manager()
    with request_chain([]) as chain:
        manager = bookmarks_for_now(process)
        first = set(await manager.get_bookmarks())
        second = set(await manager.get_bookmarks())
        await manager.update_bookmarks(first, ["FB:a"])
        await manager.update_bookmarks(second, ["FB:b"])
        assert chain.bookmarks == {"FB:a", "FB:b"}


async def test_concurrent_requests_keep_their_own_chains() -> None:
    process = AsyncGraphDatabase.bookmark_manager()
    seen: dict[str, set[str]] = {}

    async def request(name: str) -> None:
        with request_chain({f"FB:sent-by-{name}"}) as chain:
            manager = bookmarks_for_now(process)
            started = set(await manager.get_bookmarks())
            await asyncio.sleep(0)  # let the other request interleave
            await manager.update_bookmarks(started, [f"FB:{name}-wrote"])
            seen[name] = set(chain.bookmarks)

    await asyncio.gather(request("a"), request("b"))
    # Each answers with its own transaction's bookmark, not the other's.
    assert seen == {"a": {"FB:a-wrote"}, "b": {"FB:b-wrote"}}


async def test_a_task_that_outlives_its_request_falls_back_to_the_process_chain() -> None:
    process = AsyncGraphDatabase.bookmark_manager()
    release = asyncio.Event()
    managers = []

    async def later() -> None:
        await release.wait()
        managers.append(bookmarks_for_now(process))

    with request_chain({"FB:unusable"}):
        task = asyncio.ensure_future(later())  # copies the request's context
    release.set()
    await task
    assert managers == [process]
