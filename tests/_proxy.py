"""A TCP proxy in front of Neo4j for fault tests: added latency, cut connections, refusals.

What the service sees of a Neo4j restart is its connections dropping and new
ones refused for a while; of a slow Neo4j, replies that take long to come.
This proxy does both on demand, in the test's own event loop, with no
privileges (no tc/netem): `cut(down_s)` resets every open connection and
refuses new ones for `down_s` seconds; `latency_s` delays every chunk Neo4j
sends back. `upstream_bytes` counts what clients sent, so a test can cut in
the middle of a request rather than before it. `stall()` turns the proxy's
port into one whose connects hang (tests._stalled): what the service sees of
a Neo4j host that stopped answering, down to the TCP connect.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from tests._stalled import StalledPort


class Neo4jProxy:
    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.latency_s = 0.0
        self.upstream_bytes = 0
        self._down_until = 0.0
        self._links: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None
        self._stalled: StalledPort | None = None
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        self.cut()
        if self._stalled is not None:
            self._stalled.close()
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
        for _ in range(3):  # let the aborted transports close their sockets
            await asyncio.sleep(0)

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    def cut(self, down_s: float = 0.0) -> None:
        """Drop every connection now; refuse new ones for `down_s` seconds."""
        self._down_until = time.monotonic() + down_s
        for writer in list(self._links):
            with contextlib.suppress(Exception):
                writer.transport.abort()
        self._links.clear()

    def stall(self) -> StalledPort:
        """Drop every connection and stop accepting: from now on a connect to the proxy
        hangs in the kernel, so the service's next query hangs in its TCP connect."""
        if self._server is not None:
            self._server.close()
        self._stalled = StalledPort(self.port)
        self.cut()
        return self._stalled

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        upstream: asyncio.StreamWriter | None = None
        try:
            if time.monotonic() < self._down_until:
                return
            try:
                up_reader, upstream = await asyncio.open_connection(*self.target)
            except OSError:
                return
            self._links.update((writer, upstream))
            await asyncio.gather(self._pipe(reader, upstream, upstream=True),
                                 self._pipe(up_reader, writer, upstream=False),
                                 return_exceptions=True)
        finally:
            for end in (writer, upstream):
                if end is not None:
                    self._links.discard(end)
                    with contextlib.suppress(Exception):
                        end.transport.abort()
            if task is not None:
                self._tasks.discard(task)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                    upstream: bool) -> None:
        try:
            while chunk := await reader.read(65536):
                if upstream:
                    self.upstream_bytes += len(chunk)
                elif self.latency_s:
                    await asyncio.sleep(self.latency_s)
                writer.write(chunk)
                await writer.drain()
        finally:
            with contextlib.suppress(Exception):
                writer.transport.abort()


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
