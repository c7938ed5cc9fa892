"""Reading a request's messages ahead (memlattice.server.read_ahead): the application
reads them all, in order, and a disconnect is seen while the request waits."""

from __future__ import annotations

import asyncio

from starlette.types import Message

from memlattice.server.read_ahead import ReadAhead

HANG_S = 30.0  # a bound against a hang, never a timing


def source(messages: list[Message], left: asyncio.Event) -> ReadAhead:
    async def receive() -> Message:
        if messages:
            return messages.pop(0)
        await left.wait()
        return {"type": "http.disconnect"}

    return ReadAhead(receive)


async def test_what_was_read_ahead_is_given_back_in_order() -> None:
    left = asyncio.Event()
    read = source([{"type": "http.request", "body": b"{\"qu", "more_body": True},
                   {"type": "http.request", "body": b"ery\"}", "more_body": False}], left)
    watching = asyncio.create_task(read.gone())
    while not read._read or len(read._read) < 2:  # both read ahead (a condition)
        await asyncio.sleep(0)
    watching.cancel()  # the request's turn came: it stops watching
    assert not read.left
    bodies = [(await read())["body"], (await read())["body"]]
    assert b"".join(bodies) == b"{\"query\"}"
    left.set()
    assert (await read())["type"] == "http.disconnect"  # and then the server's own


async def test_gone_returns_once_the_client_leaves_and_keeps_the_message() -> None:
    left = asyncio.Event()
    read = source([{"type": "http.request", "body": b"{}", "more_body": False}], left)
    watching = asyncio.create_task(read.gone())
    await asyncio.sleep(0)
    assert not watching.done()
    left.set()
    async with asyncio.timeout(HANG_S):
        await watching
    assert read.left
    assert [(await read())["type"], (await read())["type"]] == ["http.request",
                                                                "http.disconnect"]
