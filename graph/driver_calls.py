"""Giving up on a driver call without cancelling a connect midway.

The Neo4j driver (6.4.1) leaks a socket when it is cancelled while it opens a
connection: `_connect_secure` (neo4j/_async_compat/network/_bolt_socket.py)
creates the socket, awaits the TCP connect and, on `CancelledError`, re-raises
without closing it (its cleanup is an `except Exception`, which a cancellation
skips), and its caller has no socket object to close yet. Everywhere else a
cancelled call cleans up after itself: a handshake or HELLO cut short closes
the new socket, a query cut short kills its connection (Neo4j rolls the
transaction back). A request cancelled by its budget while the driver opened a
connection therefore left an unclosed socket behind: a file descriptor per
timeout in production, a `ResourceWarning` in the tests.

So every driver call of `GraphClient` runs in a task of its own, shielded from
whoever awaits it. When the caller is cancelled it goes at once (a request
answers TIMEOUT at its budget, not when a connect ends); the call is cancelled
at once too, unless it is inside that connect: then it is cancelled as soon as
it has left it, which the driver's own timeouts bound (the connection timeout
per address tried, the acquisition timeout in all). Until the
call has ended it is held here, so that closing the client waits for it
instead of leaving it to run against a closed driver.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from types import CodeType
from typing import Any, TypeVar

# Private to the driver, named on purpose: this is the one coroutine that must not be
# cancelled midway. Were it renamed, importing this module fails, rather than the
# guard silently protecting nothing (tests/unit/test_driver_calls.py checks the leak).
from neo4j._async_compat.network._bolt_socket import AsyncBoltSocketBase

from memlattice.core.errors import Unavailable

T = TypeVar("T")

_CONNECTING: CodeType = vars(AsyncBoltSocketBase)["_connect_secure"].__func__.__code__

# How often a call given up on during a connect is looked at again. Short, so that
# a connect that succeeds is cut before it gets far (at most this long into the Bolt
# handshake, which the driver closes cleanly); only abandoned connects are polled.
POLL_S = 0.01


def _awaited_code(task: asyncio.Task[Any]) -> Iterator[CodeType]:
    """The code of each coroutine on `task`'s await chain, outermost first."""
    awaited: Any = task.get_coro()
    while awaited is not None:
        code = getattr(awaited, "cr_code", None) or getattr(awaited, "ag_code", None)
        if code is None:
            return
        yield code
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "ag_await", None)


def connecting(task: asyncio.Task[Any]) -> bool:
    """Whether `task` is suspended inside the driver's socket connect."""
    return not task.done() and any(code is _CONNECTING for code in _awaited_code(task))


class DriverCalls:
    """Runs driver calls so that cancelling their caller never cancels a connect."""

    def __init__(self) -> None:
        # Calls whose caller was cancelled, and the watchers waiting to cancel them.
        self._abandoned: set[asyncio.Future[Any]] = set()
        # Every call not yet ended, for `close`.
        self._running: set[asyncio.Task[Any]] = set()
        # Set by `close`: a call started after it would run against a closing driver.
        self._closing = False

    @property
    def abandoned(self) -> int:
        """How many calls given up on by their caller have not ended yet."""
        return sum(1 for f in self._abandoned if not f.done())

    async def run(self, call: Coroutine[Any, Any, T]) -> T:
        """`call`'s result; cancelled with its caller, except during a connect.
        UNAVAILABLE once `close` has begun: the driver is about to close."""
        if self._closing:
            call.close()
            raise Unavailable("this server process is shutting down: try again")
        task = asyncio.create_task(call)
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.done():
                self._abandon(task)
            raise

    def _abandon(self, task: asyncio.Task[Any]) -> None:
        self._hold(task)
        if connecting(task):
            self._hold(asyncio.create_task(self._cancel_after_connect(task)))
        else:
            task.cancel()

    def _hold(self, future: asyncio.Future[Any]) -> None:
        self._abandoned.add(future)
        future.add_done_callback(self._abandoned.discard)

    @staticmethod
    async def _cancel_after_connect(task: asyncio.Task[Any]) -> None:
        while connecting(task):
            await asyncio.sleep(POLL_S)
        task.cancel()

    async def close(self) -> None:
        """Give up on every call still running, as a cancelled caller would, and wait
        for them to end. At shutdown no request waits for a call any more; what still
        runs is work nobody awaits (a read shared by callers that are gone, such as
        memlattice.core.read_through's), which the driver must not be closed under.
        A call started from now on is refused, so none can start under the close."""
        self._closing = True
        for task in list(self._running):
            if not task.done() and task not in self._abandoned:
                self._abandon(task)
        await self.settle()

    async def settle(self) -> None:
        """Wait until every abandoned call has ended (the driver's connection timeout
        bounds a connect; a cancelled call ends once the driver has cleaned up)."""
        while self._abandoned:
            await asyncio.wait(list(self._abandoned))
