"""The one async Neo4j driver of a running service, and error translation.

Every query leaves through `GraphClient.read` / `write` (auto-retried managed
transactions via `execute_query`), `GraphClient.transaction` (a managed
write transaction for read-check-write sequences) or `GraphClient.read_once`
(one read transaction, never retried: the backup's scan). Driver exceptions are
turned into the project's error tree here, so nothing above `graph/` ever
imports `neo4j.exceptions`.

Clusters and Aura: reads are routed to readers (`read` uses read routing;
only read-check-write sequences, which must see the leader's state, go to the
writer), and every transaction of the process, whichever path it took,
chains causal bookmarks through one bookmark manager. A read that
follows a write therefore waits, on whichever cluster member serves it, until
that write is applied there: a client reads its own writes. With a single
server (`bolt://` or `neo4j://`) the bookmarks cost nothing noticeable.
Across processes, a request that carries a client's bookmarks also waits for
them and advances them (graph/causal.py).

Every driver call runs through `DriverCalls` (graph/driver_calls.py): a caller
cancelled (a request past its budget, a shutdown, a command interrupted) goes
at once, and the call is cancelled with it, but never while the driver is
opening a socket, which it would leak. Nothing else in the service uses this
driver: a session opened outside these methods would be outside that guard (the
one other driver, memlattice.neo4j_local's, is synchronous and says why it needs
none).

Before and after each driver call (never inside a transaction, which may hold
locks another operation waits for) is a stage boundary of the operation that
makes it (memlattice.core.pacing): in a crowded process, an operation of a key
that asked for more lately waits there while lighter keys' work runs.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import neo4j
from neo4j import AsyncDriver, AsyncGraphDatabase, AsyncManagedTransaction, RoutingControl
from neo4j import exceptions as neo4j_errors
from neo4j.api import AsyncBookmarkManager

from memlattice.core.errors import (
    BadBookmark,
    Conflict,
    MemlatticeError,
    Unavailable,
    ValidationError,
)
from memlattice.core.pacing import boundary
from memlattice.graph.causal import bookmarks_for_now
from memlattice.graph.driver_calls import DriverCalls

log = logging.getLogger(__name__)

T = TypeVar("T")
Query = tuple[str, dict[str, Any]]
# Told each query's short label (the graph method that sent it) and its duration.
QueryObserver = Callable[[str, float], None]


class _TerseList(list):  # type: ignore[type-arg]
    """A parameter list that prints as its length (see `terse`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<list of {len(self)}>"


class _TerseMap(dict):  # type: ignore[type-arg]
    """A parameter map that prints as its size (see `terse`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<map of {len(self)}>"


def terse(params: dict[str, Any]) -> dict[str, Any]:
    """The same parameters, with lists and maps that print short.

    The driver formats every RUN's parameters for a debug log line before it
    knows whether debug logging is on. For a search's 384-d vector that took a
    quarter of a millisecond, for a batch of 1000 vectors 50 ms, more than
    Neo4j needed to store them. The values are unchanged (subclasses of list
    and dict pack exactly the same); only their repr is short.
    """
    return {k: _TerseList(v) if type(v) is list else _TerseMap(v) if type(v) is dict else v
            for k, v in params.items()}


def _label(qualname: str) -> str:
    """`MemoryGraph.update.<locals>.work` -> `MemoryGraph.update`: few, stable metric labels."""
    return qualname.split(".<locals>")[0]


@contextmanager
def translated_errors() -> Iterator[None]:
    """Map driver exceptions to Memlattice errors, keeping the cause chained."""
    try:
        yield
    except MemlatticeError:
        raise
    except UnicodeEncodeError as exc:
        # A lone surrogate no input check caught: it cannot be sent, so nothing ran
        # (or the transaction rolls back).
        raise ValidationError("the input holds text that is not valid Unicode"
                              " (a lone surrogate)") from exc
    except neo4j_errors.ConstraintError as exc:
        raise Conflict(
            "the write collides with an existing record (an id that is already taken)"
        ) from exc
    except neo4j_errors.IncompleteCommit as exc:
        raise Unavailable(
            "Neo4j dropped the connection during commit; the write may or may not have"
            " been applied, read it back before retrying", retryable=True, outcome="unknown"
        ) from exc
    except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired,
            neo4j_errors.ConnectionPoolError) as exc:
        # A pool that cannot hand out a connection in time is as unavailable as a
        # refused one.
        raise Unavailable(
            "Neo4j cannot be reached right now; retry shortly", retryable=True
        ) from exc
    except neo4j_errors.AuthError as exc:
        raise Unavailable("Neo4j refused the service's credentials; check NEO4J_PASSWORD") from exc
    except neo4j_errors.TransientError as exc:
        if "Transaction.BookmarkTimeout" in (exc.code or ""):
            raise Unavailable("the Neo4j member serving this request has not caught up with"
                              " the request's bookmark yet; retry shortly",
                              retryable=True) from exc
        raise Unavailable("Neo4j is busy; retry shortly", retryable=True) from exc
    except neo4j_errors.ClientError as exc:
        code = exc.code or ""
        if "Transaction.InvalidBookmark" in code:  # also InvalidBookmarkMixture
            raise BadBookmark("Neo4j cannot use the request's bookmark (`x-memlattice-bookmark`):"
                              " send back the value a response of this deployment carried,"
                              " unchanged") from exc
        if "Statement.ArgumentError" in code or "Procedure.ProcedureCallFailed" in code:
            raise ValidationError("the query was rejected by Neo4j: input out of range") from exc
        raise


class GraphClient:
    """Owns the driver; created in the app lifespan and closed on shutdown."""

    def __init__(self, driver: AsyncDriver, database: str,
                 observer: QueryObserver | None = None) -> None:
        self.driver = driver
        self.database = database
        self.observer = observer
        # One causal chain for every query and transaction this client runs.
        self.bookmarks: AsyncBookmarkManager = AsyncGraphDatabase.bookmark_manager()
        # Every driver call goes through here (cancelled with its caller, but not
        # midway through a connect); closing waits for the calls given up on.
        self.calls = DriverCalls()

    @classmethod
    def connect(cls, uri: str, user: str, password: str, database: str, *,
                connection_timeout_s: float = 2.0, acquisition_timeout_s: float = 5.0,
                max_retry_time_s: float = 3.0, pool_size: int = 64,
                observer: QueryObserver | None = None) -> GraphClient:
        """No I/O happens here; the first query opens connections.

        The timeouts are short on purpose: with Neo4j down a request should
        fail with UNAVAILABLE in seconds, not hang in the driver's retry loop.
        """
        driver = AsyncGraphDatabase.driver(
            uri,
            auth=(user, password),
            max_connection_pool_size=pool_size,
            connection_acquisition_timeout=acquisition_timeout_s,
            connection_timeout=connection_timeout_s,
            max_transaction_retry_time=max_retry_time_s,
            # Schema-less reads (a property no node has yet) are normal here, not warnings.
            notifications_min_severity="OFF",
        )
        return cls(driver, database, observer)

    @contextmanager
    def _observed(self, label: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            if self.observer is not None:
                self.observer(label, time.perf_counter() - started)

    async def close(self) -> None:
        """Close the driver once every call has ended: calls still running are given up
        on first (one still connecting is left to finish its connect, which the
        connection timeout bounds), as a cancelled caller gives them up."""
        await self.calls.close()
        await self.driver.close()

    async def verify(self) -> None:
        with translated_errors():
            await self.calls.run(self.driver.verify_connectivity())

    async def read(self, query: Query) -> list[neo4j.Record]:
        text, params = query
        label = _label(sys._getframe(1).f_code.co_qualname)
        await boundary()
        with self._observed(label), translated_errors():
            records, _, _ = await self.calls.run(self.driver.execute_query(
                text, terse(params), database_=self.database, routing_=RoutingControl.READ,
                bookmark_manager_=bookmarks_for_now(self.bookmarks),
            ))
        await boundary()
        return records

    async def read_from_writer(self, query: Query) -> list[neo4j.Record]:
        """A read served by the database's writer (leader), which has applied every
        commit: for the rare read that must not be served by a member still behind,
        and that no bookmark can make wait (a cursor another process handed out)."""
        text, params = query
        label = _label(sys._getframe(1).f_code.co_qualname)
        await boundary()
        with self._observed(label), translated_errors():
            records, _, _ = await self.calls.run(self.driver.execute_query(
                text, terse(params), database_=self.database, routing_=RoutingControl.WRITE,
                bookmark_manager_=bookmarks_for_now(self.bookmarks),
            ))
        await boundary()
        return records

    async def write(self, query: Query) -> list[neo4j.Record]:
        text, params = query
        label = _label(sys._getframe(1).f_code.co_qualname)
        await boundary()
        with self._observed(label), translated_errors():
            records, _, _ = await self.calls.run(self.driver.execute_query(
                text, terse(params), database_=self.database, routing_=RoutingControl.WRITE,
                bookmark_manager_=bookmarks_for_now(self.bookmarks),
            ))
        await boundary()
        return records

    async def transaction(
        self, work: Callable[[AsyncManagedTransaction], Awaitable[T]]
    ) -> T:
        """Run `work` in a managed write transaction (retried on transient errors).

        A MemlatticeError raised inside `work` rolls the transaction back and
        propagates unchanged: that is how read-check-write steps refuse.
        """
        bookmarks = bookmarks_for_now(self.bookmarks)

        async def in_session() -> T:
            async with self.driver.session(database=self.database,
                                           bookmark_manager=bookmarks) as session:
                return await session.execute_write(work)

        await boundary()
        with self._observed(_label(work.__qualname__)), translated_errors():
            done = await self.calls.run(in_session())
        await boundary()
        return done

    async def read_once(self, work: Callable[[neo4j.AsyncTransaction], Awaitable[T]], *,
                        fetch_size: int = 1000) -> T:
        """Run `work` in one read transaction that is never retried and has no time limit.

        For a read that hands what it streams on as it goes (the backup writes each
        record to its file), which a managed transaction's retry would repeat. Records
        come `fetch_size` at a time. The session lives and ends inside one `DriverCalls`
        call, so a caller cancelled while its connection is being opened leaks no
        socket, and the session is closed by the task that uses it, never beside it.
        """
        bookmarks = bookmarks_for_now(self.bookmarks)

        async def in_session() -> T:
            async with self.driver.session(database=self.database, fetch_size=fetch_size,
                                           default_access_mode=neo4j.READ_ACCESS,
                                           bookmark_manager=bookmarks) as session:
                tx = await session.begin_transaction()
                try:
                    return await work(tx)
                finally:
                    await tx.close()  # rolls back: nothing was written

        with self._observed(_label(work.__qualname__)), translated_errors():
            return await self.calls.run(in_session())


async def run(tx: AsyncManagedTransaction, query: Query) -> list[neo4j.Record]:
    """Run one built query inside a transaction function and fetch every record."""
    text, params = query
    result = await tx.run(text, terse(params))
    return [record async for record in result]
