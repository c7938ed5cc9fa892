"""The bare baseline of a load run: the service's own Cypher, replayed by driver clients.

To compare the service with "Neo4j itself" fairly, the baseline must send
exactly what the service sends. So nothing is written by hand: every request
of the load's pool is run (twice, the second time with caches warm) through an
in-process app whose driver is tapped, and the queries that request sent, in
order, with their parameters and routing, become its bare replay. Background
work (the access recorder's flush, the re-embedder) runs in tasks of its own
and is not recorded: the tap listens only inside the request's context.

A write's events are appended to the shared log by the bus's writer task (a
group commit), not in the request's context, but before the request answers:
that append (`EventLogGraph.append`) is captured for the request being
captured too, so the baseline writes the events the service writes.

A managed transaction (the deduplicating write: lock stripes, look-up,
create, near-duplicates, in one transaction) is captured query by query,
those of its last attempt, and replayed as one managed write transaction.

On replay, datetimes become the current time and, for writes, every UUID
becomes a fresh one (consistently within one replay), so a replayed write
creates new memories and audit entries as the service would; so does every
content hash, with the lock stripe it selects, so that replays of one
captured write neither find each other as duplicates' candidates nor queue on
one stripe more than the service's writes of distinct contents do.
"""

from __future__ import annotations

import contextvars
import itertools
import re
import secrets
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Self

import httpx
from asgi_lifespan import LifespanManager
from neo4j import AsyncDriver, AsyncManagedTransaction, RoutingControl

from memlattice.core.model import utcnow
from memlattice.core.settings import EmbeddingSettings, Neo4jSettings, Settings
from memlattice.graph.client import terse
from memlattice.graph.duplicates import lock_key
from memlattice.server.app import create_app, runtime_of

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
CONTENT_HASH = re.compile(r"^[0-9a-f]{64}$")
STRIPE_KEY = re.compile(r"^(?P<namespace>.+)\|(?P<stripe>\d+)$")
Renew = Callable[[dict[str, Any], int], dict[str, Any]]


@dataclass(frozen=True)
class Sent:
    """One query a request sent through the driver; `transaction` numbers the managed
    transaction it ran in (None: its own `execute_query`)."""

    text: str
    params: dict[str, Any]
    routing: RoutingControl
    transaction: int | None = None


_capturing: contextvars.ContextVar[list[Sent] | None] = contextvars.ContextVar(
    "bench_capturing", default=None)
# Graph methods that background tasks run on behalf of the request being captured.
ON_BEHALF = frozenset({"EventLogGraph.append"})
# The capture in progress (requests are captured one at a time).
_in_progress: list[list[Sent]] = []


def _on_behalf_of_a_request() -> bool:
    frame = sys._getframe(2)
    for _ in range(4):
        if frame is None:
            return False
        if frame.f_code.co_qualname in ON_BEHALF:
            return True
        frame = frame.f_back
    return False


class Capturer:
    """An in-process app configured like the served one, whose driver is tapped."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def capture(self, body: dict[str, Any], renew: Renew | None = None) -> list[Sent]:
        """The queries `body` makes the service send, caches warm (second run).
        `renew(body, attempt)` gives each run its own body: a write of the same content
        twice would reinforce the first instead of creating (the service deduplicates)."""
        sent: list[Sent] = []
        for attempt in range(2):
            sent = []
            token = _capturing.set(sent)
            _in_progress.append(sent)
            try:
                response = await self.http.post(
                    "/graphql", json=renew(body, attempt) if renew else body)
            finally:
                _in_progress.pop()
                _capturing.reset(token)
            answer = response.json()
            if answer.get("errors"):
                raise RuntimeError(f"capturing failed: {answer['errors'][0]}")
        if not sent:
            raise RuntimeError("the request sent no query through execute_query")
        return sent


@asynccontextmanager
async def capturer(uri: str, password: str, dimension: int) -> AsyncIterator[Capturer]:
    settings = Settings(environment="test", auth_mode="keyless",
                        neo4j=Neo4jSettings(uri=uri, password=password),
                        embedding=EmbeddingSettings(provider="none", dimension=dimension))
    app = create_app(settings)
    async with LifespanManager(app, startup_timeout=300, shutdown_timeout=60) as manager:
        driver = runtime_of(app).client.driver
        tap(driver)
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://capture",
                                     timeout=120) as http:
            yield Capturer(http)


_transactions = itertools.count(1)


class _RecordingTransaction:
    """A managed transaction whose `run` calls are written down before they are sent."""

    def __init__(self, tx: AsyncManagedTransaction, into: list[Sent], number: int) -> None:
        self._tx = tx
        self._into = into
        self._number = number

    async def run(self, query: Any, parameters: dict[str, Any] | None = None,
                  **kwargs: Any) -> Any:
        self._into.append(Sent(str(query), dict(parameters or {}, **kwargs),
                               RoutingControl.WRITE, self._number))
        return await self._tx.run(query, parameters, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tx, name)


class _RecordingSession:
    """A session whose managed write transactions are recorded, their last attempt only
    (a retried attempt's queries were rolled back)."""

    def __init__(self, session: Any, sent: list[Sent]) -> None:
        self._session = session
        self._sent = sent

    async def __aenter__(self) -> Self:
        await self._session.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._session.__aexit__(*exc)

    async def execute_write(self, work: Any, *args: Any, **kwargs: Any) -> Any:
        number = next(_transactions)
        attempt: list[Sent] = []

        async def recorded(tx: AsyncManagedTransaction, *a: Any, **kw: Any) -> Any:
            attempt.clear()
            return await work(_RecordingTransaction(tx, attempt, number), *a, **kw)

        result = await self._session.execute_write(recorded, *args, **kwargs)
        self._sent.extend(attempt)
        return result

    async def execute_read(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("this request runs a managed read transaction; the bare"
                           " baseline replays execute_query calls and write transactions")


def tap(driver: AsyncDriver) -> None:
    """Record what `driver` sends inside a capture (`Capturer.capture`)."""
    execute = driver.execute_query
    session = driver.session

    async def tapped(query: Any, parameters: dict[str, Any] | None = None,
                     routing_: RoutingControl = RoutingControl.WRITE, **kwargs: Any) -> Any:
        sent = _capturing.get()
        if sent is None and _in_progress and _on_behalf_of_a_request():
            sent = _in_progress[-1]
        if sent is not None:
            sent.append(Sent(str(query), dict(parameters or {}), routing_))
        return await execute(query, parameters, routing_=routing_, **kwargs)

    def recording(*args: Any, **kwargs: Any) -> Any:
        sent = _capturing.get()
        opened = session(*args, **kwargs)
        return opened if sent is None else _RecordingSession(opened, sent)

    driver.execute_query = tapped  # type: ignore[method-assign]
    driver.session = recording  # type: ignore[method-assign]


@dataclass
class _Renewed:
    """What one replay replaces, consistently across its queries."""

    now: datetime
    ids: dict[str, str] | None
    hashes: dict[str, str]

    def value(self, value: Any) -> Any:
        if isinstance(value, datetime):
            return self.now
        if isinstance(value, str):
            return self._string(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            if value and isinstance(value[0], float):
                return value  # a vector: nothing to renew
            renewed = [self.value(v) for v in value]
            if value and all(isinstance(v, str) and STRIPE_KEY.match(v) for v in value):
                renewed.sort()  # lock stripes are taken in sorted order, as the service does
            return renewed
        return value

    def _string(self, value: str) -> str:
        if self.ids is None:
            return value
        if UUID.match(value):
            return self.ids.setdefault(value, str(uuid.uuid4()))
        if CONTENT_HASH.match(value):
            return self.hashes.setdefault(value, secrets.token_hex(32))
        stripe = STRIPE_KEY.match(value)
        if stripe:
            for old, new in self.hashes.items():
                if lock_key(stripe["namespace"], old) == value:
                    return lock_key(stripe["namespace"], new)
        return value


def _hashes_in(value: Any, found: dict[str, str]) -> None:
    """Every content hash of a capture, given its fresh replacement up front: the lock
    stripes are sent before the rows that carry the hashes they were computed from."""
    if isinstance(value, str) and CONTENT_HASH.match(value):
        found.setdefault(value, secrets.token_hex(32))
    elif isinstance(value, dict):
        for v in value.values():
            _hashes_in(v, found)
    elif isinstance(value, list) and not (value and isinstance(value[0], float)):
        for v in value:
            _hashes_in(v, found)


async def replay(driver: AsyncDriver, database: str, capture: list[Sent], *,
                 fresh_ids: bool) -> None:
    """Send one request's queries again, in order, as the service sent them."""
    hashes: dict[str, str] = {}
    if fresh_ids:
        for sent in capture:
            _hashes_in(sent.params, hashes)
    renewed = _Renewed(utcnow(), {} if fresh_ids else None, hashes)
    for number, group in itertools.groupby(capture, key=lambda s: s.transaction):
        queries = [(s.text, terse(renewed.value(s.params)), s.routing) for s in group]
        if number is None:
            for text, params, routing in queries:
                # terse(): the same parameter objects as the service's (see graph.client).
                await driver.execute_query(text,  # type: ignore[arg-type]
                                           params, database_=database, routing_=routing)
            continue

        async def work(tx: AsyncManagedTransaction,
                       queries: list[tuple[str, dict[str, Any], RoutingControl]] = queries
                       ) -> None:
            for text, params, _ in queries:
                result = await tx.run(text, params)  # type: ignore[arg-type]
                _ = [record async for record in result]

        async with driver.session(database=database) as session:
            await session.execute_write(work)
