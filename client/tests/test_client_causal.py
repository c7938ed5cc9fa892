"""The client carries `x-memlattice-bookmark` from each answer to its next request.

No server here: an `httpx.MockTransport` answers with a fresh token per request
and notes what each request sent. With real servers (two processes, a write
through one read through the other) see tests/integration/test_causal_bookmarks.py.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import httpx
import pytest

from memlattice_client import AsyncMemlatticeClient, BadBookmarkError, MemlatticeClient
from memlattice_client._causal import HEADER, MAX_TOKENS, CausalChain

MEMORY = {"id": "m1", "namespace": "n", "content": "c", "tags": [], "memoryType": "note",
          "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:05Z",
          "version": 1}


class Server:
    """Answers every request with token `t<n>`, and records the header each sent."""

    def __init__(self) -> None:
        self.sent: list[str | None] = []
        self.numbers = itertools.count(1)
        self.refuse: set[str] = set()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        sent = request.headers.get(HEADER)
        self.sent.append(sent)
        if sent and set(sent.split(",")) & self.refuse:
            return httpx.Response(400, json={"errors": [{"message": "refused", "extensions": {
                "code": "BAD_BOOKMARK"}}]})
        body: dict[str, Any] = {"data": {"memory": MEMORY}}
        return httpx.Response(200, json=body, headers={HEADER: f"t{next(self.numbers)}"})


def test_each_request_sends_what_the_one_before_was_answered() -> None:
    server = Server()
    with MemlatticeClient("http://x", transport=httpx.MockTransport(server)) as client:
        for _ in range(3):
            client.memory("n", "m1")
        assert client.bookmark == "t3"
    assert server.sent == [None, "t1", "t2"]


def test_a_bookmark_given_at_creation_is_sent_first() -> None:
    server = Server()
    with MemlatticeClient("http://x", transport=httpx.MockTransport(server),
                          bookmark="from-elsewhere") as client:
        client.memory("n", "m1")
    assert server.sent == ["from-elsewhere"]


def test_opting_out_sends_nothing_and_keeps_nothing() -> None:
    server = Server()
    with MemlatticeClient("http://x", transport=httpx.MockTransport(server),
                          causal=False, bookmark="ignored") as client:
        client.memory("n", "m1")
        client.memory("n", "m1")
        assert client.bookmark is None
    assert server.sent == [None, None]


def test_a_refused_bookmark_is_forgotten() -> None:
    server = Server()
    server.refuse = {"stale"}
    with MemlatticeClient("http://x", transport=httpx.MockTransport(server),
                          bookmark="stale") as client:
        with pytest.raises(BadBookmarkError) as refused:
            client.memory("n", "m1")
        assert refused.value.code == "BAD_BOOKMARK"
        assert client.bookmark is None
        client.memory("n", "m1")
    assert server.sent == ["stale", None]


def test_overlapping_requests_keep_every_answer() -> None:
    """Three requests in flight at once: none of their answers is dropped, and the
    next request sends all three (the server waits for every one)."""
    server = Server()

    async def run() -> None:
        in_flight: list[httpx.Request] = []
        all_in = asyncio.Event()

        async def overlapping(request: httpx.Request) -> httpx.Response:
            """Requests 2-4 are answered only once all three have been sent."""
            if len(server.sent) >= 1 and len(in_flight) < 3:
                in_flight.append(request)
                if len(in_flight) == 3:
                    all_in.set()
                await all_in.wait()
            return server(request)

        async with AsyncMemlatticeClient("http://x",
                                         transport=httpx.MockTransport(overlapping)) as client:
            await client.memory("n", "m1")
            await asyncio.gather(*(client.memory("n", "m1") for _ in range(3)))
            assert sorted((client.bookmark or "").split(",")) == ["t2", "t3", "t4"]
            await client.memory("n", "m1")
            assert client.bookmark == "t5"

    asyncio.run(run())
    assert server.sent[1:4] == ["t1", "t1", "t1"]
    assert sorted(server.sent[4].split(",")) == ["t2", "t3", "t4"]  # type: ignore[union-attr]


def test_an_answer_replaces_only_what_its_request_sent() -> None:
    chain = CausalChain("a,b")
    sent = chain.outgoing()
    chain.advance(("x",), "c")        # an overlapping request, sent with something else
    assert chain.value == "a,b,c"
    chain.advance(sent, "d")
    assert chain.value == "c,d"
    chain.advance(("c", "d"), None)   # no answer (an old server): keep what we have
    assert chain.value == "c,d"


def test_the_chain_stays_bounded() -> None:
    chain = CausalChain()
    for n in range(MAX_TOKENS + 10):
        chain.advance((), f"t{n}")
    kept = chain.outgoing()
    assert len(kept) == MAX_TOKENS and kept[-1] == f"t{MAX_TOKENS + 9}" and "t0" not in kept
