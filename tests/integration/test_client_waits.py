"""The Python client against the real server and a key over its own rate: a request
refused with 429 (RATE_LIMITED, `Retry-After`) is sent again after that time, once,
and served; with no patience the refusal is raised, and nothing was written.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from memlattice.core.fairness import KeyLimits
from memlattice_client import AsyncMemlatticeClient, RateLimitedError
from tests.integration._support import count_memories
from tests.integration.test_fairness import limited_key

# One request every four seconds after a burst of one: the second request of a test
# is refused unless the first took four seconds, and its `Retry-After` is at most 4,
# within the client's default patience (10 s).
TIGHT = KeyLimits(rate=0.25, burst=1)


class Recording(httpx.AsyncBaseTransport):
    """The session app's transport, noting each answer's status."""

    def __init__(self, app: Any) -> None:
        self.inner = httpx.ASGITransport(app=app)
        self.statuses: list[int] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        self.statuses.append(response.status_code)
        return response


@asynccontextmanager
async def client_of(session_app: tuple[Any, Any], secret: str,
                    **options: Any) -> AsyncIterator[tuple[AsyncMemlatticeClient, Recording]]:
    transport = Recording(session_app[1])
    async with AsyncMemlatticeClient("http://test", api_key=secret, transport=transport,
                                     **options) as client:
        yield client, transport


async def test_the_client_waits_its_turn_and_is_served(
    session_app: tuple[Any, Any], namespace: str, graph_client: Any,
) -> None:
    _, secret = await limited_key(session_app, namespace, TIGHT)
    async with client_of(session_app, secret) as (client, transport):
        for i in range(2):
            await client.write_memory(namespace, f"the gauge read {i} bar at the inlet")
    assert await count_memories(graph_client, namespace) == 2, "each write once"
    refused = transport.statuses.count(429)
    assert transport.statuses == [200] + [429] * refused + [200], transport.statuses
    if not refused:  # the first write alone took the four seconds; nothing to check
        return
    assert refused == 1, "one wait of the Retry-After it was given is enough"


async def test_without_patience_the_refusal_is_raised_and_nothing_is_written(
    session_app: tuple[Any, Any], namespace: str, graph_client: Any,
) -> None:
    _, secret = await limited_key(session_app, namespace, KeyLimits(rate=1 / 3600, burst=1))
    async with client_of(session_app, secret, rate_limit_patience=0) as (client, transport):
        await client.write_memory(namespace, "the valve was serviced in March")
        try:
            await client.write_memory(namespace, "one too many")
        except RateLimitedError as refused:
            assert refused.retry_after is not None and refused.retry_after >= 1
        else:
            raise AssertionError("a key with one request an hour was served twice")
    assert transport.statuses == [200, 429]
    assert await count_memories(graph_client, namespace) == 1
