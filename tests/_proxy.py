"""A TCP proxy in front of Neo4j for fault tests: added latency, cut connections, refusals.

What the service sees of a Neo4j restart is its connections dropping and new
ones refused for a while; of a slow Neo4j, replies that take long to come.
This proxy does both on demand, in the test's own event loop, with no
privileges (no tc/netem): `cut(down_s)` drops every open connection and
refuses new ones for `down_s` seconds; `latency_s` delays every chunk Neo4j
sends back; `hold()` keeps every reply back, the connections open, until
`release()` (a client caught mid-read, for as long as a test needs). `upstream_bytes` counts what clients sent, so a test can cut in
the middle of a request rather than before it. `stall()` turns the proxy's
port into one whose connects hang (tests._stalled): what the service sees of
a Neo4j host that stopped answering, down to the TCP connect.

It relays plain non-blocking sockets and accepts them itself, so that every
socket it opens is its own from the moment it exists: `close` ends every
relay and returns once every socket is closed. (On asyncio's `start_server`,
a connection accepted just before the server closed was lost with its socket
on Python 3.11, and one whose handler had not started yet was relayed after
`close` had returned.)
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import time
from collections.abc import AsyncIterator, Coroutine
from typing import Any

from tests._stalled import StalledPort

# Closing with this linger resets the connection, as a Neo4j that went away would.
_RESET = struct.pack("ii", 1, 0)


class _Link:
    """One client connection and its upstream: the sockets, and the tasks relaying them.
    The link ends with either direction; its sockets are closed when its last task
    has ended (never under a task still waiting on them)."""

    def __init__(self, client: socket.socket) -> None:
        self.sockets = [client]
        self.tasks: set[asyncio.Task[None]] = set()
        self.closed = False

    def drop(self) -> None:
        """End the connection now: its peers see it shut, and its tasks are cancelled (one
        may be holding a reply for `latency_s`); the last to end closes the sockets."""
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for task in self.tasks:
            if task is not asyncio.current_task():
                task.cancel()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
            sock.close()


class Neo4jProxy:
    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.latency_s = 0.0
        self.upstream_bytes = 0
        self._down_until = 0.0
        self._replies = asyncio.Event()
        self._replies.set()
        self._links: set[_Link] = set()
        self._listener: socket.socket | None = None
        self._stalled: StalledPort | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.port = 0

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        listener.setblocking(False)
        self._listener = listener
        self.port = listener.getsockname()[1]
        self._loop.add_reader(listener.fileno(), self._accept)

    async def close(self) -> None:
        """Stop accepting, drop every connection, and return once every relay has ended
        and every socket the proxy opened is closed."""
        self._stop_accepting()
        if self._stalled is not None:
            self._stalled.close()
        self.cut()
        while tasks := {task for link in self._links for task in link.tasks}:
            await asyncio.gather(*tasks, return_exceptions=True)
        for link in list(self._links):  # links with no task left (refused, or never begun)
            self._end(link)

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    def cut(self, down_s: float = 0.0) -> None:
        """Drop every connection now; refuse new ones for `down_s` seconds."""
        self._down_until = time.monotonic() + down_s
        for link in list(self._links):
            link.drop()

    def hold(self) -> None:
        """Keep back every reply Neo4j sends from now on (what a client already
        received stays received), until `release`."""
        self._replies.clear()

    def release(self) -> None:
        self._replies.set()

    def stall(self) -> StalledPort:
        """Drop every connection and stop accepting: from now on a connect to the proxy
        hangs in the kernel, so the service's next query hangs in its TCP connect."""
        self._stop_accepting()
        self._stalled = StalledPort(self.port)
        self.cut()
        return self._stalled

    def _stop_accepting(self) -> None:
        if self._listener is not None and self._loop is not None:
            self._loop.remove_reader(self._listener.fileno())
            self._listener.close()
            self._listener = None

    def _accept(self) -> None:
        """The loop's callback when connections wait: each is owned from here on."""
        assert self._listener is not None and self._loop is not None
        while True:
            try:
                client, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            client.setblocking(False)
            link = _Link(client)
            self._links.add(link)
            if time.monotonic() < self._down_until:
                self._end(link)  # refused: accepted, then reset at once
            else:
                self._spawn(link, self._relay(link, client))

    def _spawn(self, link: _Link, work: Coroutine[Any, Any, None]) -> None:
        assert self._loop is not None
        task = self._loop.create_task(work)
        link.tasks.add(task)

        def ended(_: asyncio.Task[None]) -> None:
            link.tasks.discard(task)
            if not link.tasks:
                self._end(link)

        task.add_done_callback(ended)

    def _end(self, link: _Link) -> None:
        link.close()
        self._links.discard(link)

    async def _relay(self, link: _Link, client: socket.socket) -> None:
        assert self._loop is not None
        upstream = socket.socket()
        upstream.setblocking(False)
        link.sockets.append(upstream)
        try:
            await self._loop.sock_connect(upstream, self.target)
        except OSError:
            return
        self._spawn(link, self._pipe(link, client, upstream, upstream=True))
        self._spawn(link, self._pipe(link, upstream, client, upstream=False))

    async def _pipe(self, link: _Link, source: socket.socket, sink: socket.socket, *,
                    upstream: bool) -> None:
        assert self._loop is not None
        try:
            while chunk := await self._loop.sock_recv(source, 65536):
                if upstream:
                    self.upstream_bytes += len(chunk)
                else:
                    if self.latency_s:
                        await asyncio.sleep(self.latency_s)
                    await self._replies.wait()
                await self._loop.sock_sendall(sink, chunk)
        except OSError:
            pass
        finally:
            link.drop()  # one direction ended: the connection ends


@contextlib.asynccontextmanager
async def neo4j_proxy(uri: str) -> AsyncIterator[Neo4jProxy]:
    """A proxy to the Neo4j at `uri` (bolt://host:port) for the duration of the block."""
    host, port = uri.split("://", 1)[1].rsplit(":", 1)
    proxy = Neo4jProxy(host, int(port))
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.close()
