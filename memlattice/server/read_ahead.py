"""A request's ASGI `receive`, read ahead while it waits, so a client that leaves is seen.

A request of a busy process may wait for its turn (memlattice.server.throttle.Turns):
a key's queued requests up to the request timeout. A client that gives up meanwhile
and closes its connection says so only through `receive` (an `http.disconnect`
message), and nothing reads `receive` before the request runs: without reading
ahead, the request would still run, and write, once its turn came, for no one.

`ReadAhead.gone` reads the messages as they come, keeps them, and returns once the
client has left; the application then reads the same messages, in order, from the
`ReadAhead` itself. Reading ahead changes nothing for a client that stays: its body
is buffered as the server would hand it over anyway.
"""

from __future__ import annotations

from collections import deque

from starlette.types import Message, Receive


class ReadAhead:
    """`receive`, with the messages read ahead by `gone` given back first."""

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        self._read: deque[Message] = deque()
        self.left = False

    async def gone(self) -> None:
        """Return once the client has disconnected (keeping every message read)."""
        while not self.left:
            message = await self._receive()
            self._read.append(message)
            self.left = message["type"] == "http.disconnect"

    async def __call__(self) -> Message:
        if self._read:
            return self._read.popleft()
        return await self._receive()
