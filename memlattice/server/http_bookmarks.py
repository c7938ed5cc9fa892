"""Causal bookmarks on HTTP: read `x-memlattice-bookmark`, answer with the new one.

Wraps the GraphQL route outside the key check, so that even the key lookup
of a request waits for the bookmarks it carries (a key created through one
replica works at once through another). A header this service cannot read is
refused with HTTP 400 and `BAD_BOOKMARK` before authentication or any GraphQL
work: nothing runs, so nothing is written. Bookmarks that decode but that
Neo4j refuses fail the request's first transaction, and with it every other
(they all wait for the same bookmarks), with the same code.

The response of every request carries the chain its transactions ended on (or
the one it was sent, when it ran none); a request that neither sent nor made
any bookmark gets no header. The value is complete when the response starts:
strawberry executes the whole operation before it sends a byte.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memlattice.core import bookmarks
from memlattice.core.errors import BadBookmark
from memlattice.graph.causal import request_chain
from memlattice.server.http_requests import refusal_body
from memlattice.server.media_types import negotiate
from memlattice.server.observability.metrics import Metrics

_HEADER = bookmarks.HEADER.encode()


def received_values(scope: Scope) -> list[str]:
    """Every `x-memlattice-bookmark` value of the request, in order."""
    return [value.decode("latin-1") for name, value in scope.get("headers", ())
            if name.lower() == _HEADER]


class CausalBookmarks:
    """ASGI wrapper of the HTTP GraphQL route (WebSockets pass through untouched)."""

    def __init__(self, app: ASGIApp, metrics: Metrics | None = None) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            received = bookmarks.decode(received_values(scope))
        except BadBookmark as exc:
            if self.metrics is not None:
                self.metrics.error(exc.code)
            accept = dict(scope.get("headers", ())).get(b"accept", b"").decode("latin-1")
            refused = JSONResponse(refusal_body(exc.message, exc.code, **exc.details),
                                   status_code=400, media_type=negotiate(accept))
            await refused(scope, receive, send)
            return
        with request_chain(received) as chain:

            async def send_with_bookmark(message: Message) -> None:
                if message["type"] == "http.response.start" and chain.bookmarks:
                    headers = MutableHeaders(scope=message)
                    headers[bookmarks.HEADER] = bookmarks.encode(chain.bookmarks)
                await send(message)

            await self.app(scope, receive, send_with_bookmark)
