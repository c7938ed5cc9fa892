"""A request the server refuses for now (429, RATE_LIMITED: nothing ran) is sent
again after its `Retry-After`, while the client's `rate_limit_patience` lasts.

No server here: an `httpx.MockTransport` refuses the first requests it is sent
with a short `retryAfter`, then answers. Against the real server (a key over its
own rate) see tests/integration/test_client_waits.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from memlattice_client import AsyncMemlatticeClient, MemlatticeClient, RateLimitedError

MEMORY = {"id": "m1", "namespace": "n", "content": "c", "tags": [], "memoryType": "note",
          "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:05Z",
          "version": 1}


class Server:
    """Refuses the first `refusals` requests with `retry_after` seconds, then serves;
    keeps every request body it was sent."""

    def __init__(self, refusals: int, retry_after: float = 0.01) -> None:
        self.refusals = refusals
        self.retry_after = retry_after
        self.bodies: list[bytes] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(request.content)
        if len(self.bodies) <= self.refusals:
            return httpx.Response(429, headers={"retry-after": "1"}, json={"errors": [{
                "message": "over the key's rate", "extensions": {
                    "code": "RATE_LIMITED", "limit": "rate", "retryAfter": self.retry_after}}]})
        data: dict[str, Any] = {"memory": MEMORY, "writeMemory": MEMORY}
        return httpx.Response(200, json={"data": data})


def test_a_refused_request_is_sent_again_unchanged_until_it_is_served() -> None:
    server = Server(refusals=2)
    with MemlatticeClient("http://x", transport=httpx.MockTransport(server)) as client:
        assert client.write_memory("n", "c").id == "m1"
    assert len(server.bodies) == 3
    assert len(set(server.bodies)) == 1, "the same mutation each time"


def test_the_waits_stop_at_the_clients_patience() -> None:
    server = Server(refusals=10, retry_after=0.02)
    client = MemlatticeClient("http://x", transport=httpx.MockTransport(server),
                              rate_limit_patience=0.05)
    with client, pytest.raises(RateLimitedError) as refused:
        client.memory("n", "m1")
    assert refused.value.retry_after == 0.02
    assert len(server.bodies) == 3, "waited 0.02 twice; a third wait would pass 0.05"


def test_a_patience_of_zero_raises_the_first_refusal() -> None:
    server = Server(refusals=1)
    client = MemlatticeClient("http://x", transport=httpx.MockTransport(server),
                              rate_limit_patience=0)
    with client, pytest.raises(RateLimitedError):
        client.memory("n", "m1")
    assert len(server.bodies) == 1


def test_a_wait_longer_than_the_patience_is_not_begun() -> None:
    server = Server(refusals=1, retry_after=60)
    client = MemlatticeClient("http://x", transport=httpx.MockTransport(server))
    with client, pytest.raises(RateLimitedError) as refused:
        client.memory("n", "m1")
    assert refused.value.retry_after == 60
    assert len(server.bodies) == 1


def test_a_negative_patience_is_refused() -> None:
    with pytest.raises(ValueError, match="rate_limit_patience"):
        MemlatticeClient("http://x", rate_limit_patience=-1)


def test_the_async_client_waits_the_same_way() -> None:
    server = Server(refusals=2)

    async def run() -> str:
        async with AsyncMemlatticeClient("http://x", transport=httpx.MockTransport(server)) as c:
            return (await c.memory("n", "m1")).id

    assert asyncio.run(run()) == "m1"
    assert len(server.bodies) == 3
