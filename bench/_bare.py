"""The bare baseline of a load run: the service's own Cypher, replayed by driver clients.

To compare the service with "Neo4j itself" fairly, the baseline must send
exactly what the service sends. So nothing is written by hand: every request
of the load's pool is run (twice, the second time with caches warm) through an
in-process app whose driver is tapped, and the queries that request sent, in
order, with their parameters and routing, become its bare replay. Background
work (the access recorder's flush, the re-embedder) runs in tasks of its own
and is not recorded: the tap listens only inside the request's context.

On replay, datetimes become the current time and, for writes, every UUID
becomes a fresh one (consistently within one replay), so a replayed write
creates new memories and audit entries as the service would.
"""

from __future__ import annotations

import contextvars
import re
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx
from asgi_lifespan import LifespanManager
from neo4j import AsyncDriver, RoutingControl

from memlattice.core.model import utcnow
from memlattice.core.settings import EmbeddingSettings, Neo4jSettings, Settings
from memlattice.graph.client import terse
from memlattice.server.app import create_app, runtime_of

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


@dataclass(frozen=True)
class Sent:
    """One query a request sent through the driver."""

    text: str
    params: dict[str, Any]
    routing: RoutingControl


_capturing: contextvars.ContextVar[list[Sent] | None] = contextvars.ContextVar(
    "bench_capturing", default=None)


class Capturer:
    """An in-process app configured like the served one, whose driver is tapped."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def capture(self, body: dict[str, Any]) -> list[Sent]:
        """The queries `body` makes the service send, caches warm (second run)."""
        sent: list[Sent] = []
        for attempt in range(2):
            sent = []
            token = _capturing.set(sent)
            try:
                response = await self.http.post("/graphql", json=body)
            finally:
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
        _tap(driver)
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://capture",
                                     timeout=120) as http:
            yield Capturer(http)


def _tap(driver: AsyncDriver) -> None:
    execute = driver.execute_query
    session = driver.session

    async def tapped(query: Any, parameters: dict[str, Any] | None = None,
                     routing_: RoutingControl = RoutingControl.WRITE, **kwargs: Any) -> Any:
        sent = _capturing.get()
        if sent is not None:
            sent.append(Sent(str(query), dict(parameters or {}), routing_))
        return await execute(query, parameters, routing_=routing_, **kwargs)

    def untappable(*args: Any, **kwargs: Any) -> Any:
        if _capturing.get() is not None:
            raise RuntimeError("this request runs a managed transaction; the bare"
                               " baseline replays only execute_query calls")
        return session(*args, **kwargs)

    driver.execute_query = tapped  # type: ignore[method-assign]
    driver.session = untappable  # type: ignore[method-assign]


def _fresh(value: Any, ids: dict[str, str] | None, now: datetime) -> Any:
    if isinstance(value, datetime):
        return now
    if ids is not None and isinstance(value, str) and UUID.match(value):
        return ids.setdefault(value, str(uuid.uuid4()))
    if isinstance(value, dict):
        return {k: _fresh(v, ids, now) for k, v in value.items()}
    if isinstance(value, list):
        if value and isinstance(value[0], float):
            return value  # a vector: nothing to renew
        return [_fresh(v, ids, now) for v in value]
    return value


async def replay(driver: AsyncDriver, database: str, capture: list[Sent], *,
                 fresh_ids: bool) -> None:
    """Send one request's queries again, in order, as the service sent them."""
    ids: dict[str, str] | None = {} if fresh_ids else None
    now = utcnow()
    for sent in capture:
        # terse(): the same parameter objects as the service's (see graph.client).
        await driver.execute_query(sent.text,  # type: ignore[arg-type]
                                   terse(_fresh(sent.params, ids, now)),
                                   database_=database, routing_=sent.routing)
