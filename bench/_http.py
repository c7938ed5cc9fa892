"""A minimal HTTP/1.1 keep-alive client for the load generator.

The load generator runs on the same two cores as the server and Neo4j, so
whatever CPU it spends per request is taken from them, and only on the
service's side of the comparison (the bare baseline sends no HTTP). httpx
spent 2.6-3.1 ms of CPU per search request on this machine (16 concurrent
clients; its connection pool checks every connection on every request,
through anyio), a fifth of what the server itself spends on a search. This
client sends a pre-encoded POST on its own connection and reads one
`Content-Length` answer, all a load test needs: 0.3 ms per request.
"""

from __future__ import annotations

import asyncio
import time
from urllib.parse import urlsplit

# uvicorn closes a keep-alive connection idle for 5 s (its default); one idle for
# longer than this is reopened before sending, rather than resending a POST that
# failed on a socket the server had closed (the bare rounds leave them idle).
IDLE_S = 4.0


class HTTPProtocolError(RuntimeError):
    """An answer this client does not read (no Content-Length, a closed connection)."""


class KeepAliveConnection:
    """One connection, one request at a time; reopened after any failure."""

    def __init__(self, base: str, headers: dict[str, str] | None = None) -> None:
        parts = urlsplit(base)
        # Sent with every request (an API key, for the fairness benchmark).
        self.extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._used = 0.0

    async def post(self, path: str, body: bytes, content_type: str = "application/json",
                   ) -> tuple[int, bytes]:
        """Status and body of `POST path`; the connection stays open for the next one."""
        try:
            return await self._exchange(path, body, content_type)
        except BaseException:
            self.close()
            raise

    async def _exchange(self, path: str, body: bytes, content_type: str) -> tuple[int, bytes]:
        if self._writer is not None and time.monotonic() - self._used > IDLE_S:
            self.close()
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        assert self._reader is not None
        self._writer.write(
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n{self.extra}"
            "\r\n".encode()
            + body)
        head = await self._reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if "content-length" not in headers:
            raise HTTPProtocolError(f"an answer without Content-Length (status {status})")
        answer = await self._reader.readexactly(int(headers["content-length"]))
        self._used = time.monotonic()
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, answer

    def close(self) -> None:
        """Close the socket (the transport finishes closing it on the loop)."""
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
