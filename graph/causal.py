"""A request's own causal chain, on top of the process's.

Every transaction of a process chains through one bookmark manager
(`GraphClient.bookmarks`), so a process reads its own writes. Across
processes (replicas behind a load balancer, each with its own driver) that
is not enough: a client that wrote through replica A must be able to make
replica B wait for that write. The HTTP layer therefore opens a
`request_chain` with the bookmarks the client sent; while it is open, every
transaction the request runs waits for them as well as for the process's
chain, and advances both. What the chain holds at the end is what the
response hands back to the client.

The chain lives in a context variable, so nothing between the HTTP layer and
`graph/` passes it along. It answers only while the request is open: a task
the request started that outlives it (a background count, a session-facts
reading) falls back to the process's chain instead of carrying a finished
request's bookmarks forever.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from neo4j.api import AsyncBookmarkManager


class RequestChain:
    """The bookmarks one request waits for and, as its transactions commit, ends on."""

    def __init__(self, received: Iterable[str]) -> None:
        self.bookmarks: set[str] = set(received)
        self.open = True

    def advance(self, previous: Collection[str], new: Collection[str]) -> None:
        """The driver's rule: a transaction that started from `previous` and ended
        on `new` supersedes what it started from."""
        if new:
            self.bookmarks.difference_update(previous)
            self.bookmarks.update(new)


_CURRENT: ContextVar[RequestChain | None] = ContextVar("memlattice_request_chain",
                                                       default=None)


@contextmanager
def request_chain(received: Iterable[str]) -> Iterator[RequestChain]:
    """Open a chain for the code run inside (and the tasks it starts meanwhile)."""
    chain = RequestChain(received)
    token = _CURRENT.set(chain)
    try:
        yield chain
    finally:
        chain.open = False
        _CURRENT.reset(token)


class _ChainedBookmarks(AsyncBookmarkManager):
    """The process's manager, plus one request's chain."""

    def __init__(self, process: AsyncBookmarkManager, chain: RequestChain) -> None:
        self.process = process
        self.chain = chain

    async def update_bookmarks(self, previous_bookmarks: Collection[str],
                               new_bookmarks: Collection[str]) -> None:
        await self.process.update_bookmarks(previous_bookmarks, new_bookmarks)
        self.chain.advance(previous_bookmarks, new_bookmarks)

    async def get_bookmarks(self) -> Collection[str]:
        return set(await self.process.get_bookmarks()) | self.chain.bookmarks


def bookmarks_for_now(process: AsyncBookmarkManager) -> AsyncBookmarkManager:
    """The manager a transaction starting now should use: the process's, chained with
    the open request's when there is one."""
    chain = _CURRENT.get()
    if chain is None or not chain.open:
        return process
    return _ChainedBookmarks(process, chain)
