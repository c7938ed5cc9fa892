"""CORS on HTTP, by the origin policy the WebSocket check uses too.

A page on an allowed origin (memlattice.core.origins) may call `/graphql`
with its key (`Authorization` or `x-api-key`), JSON bodies and the project's
headers, and read the bookmark and request id of the answer. A disallowed
origin gets no CORS headers at all (its preflight a 403), so the browser keeps
the answer from the page; a WebSocket handshake from it is refused (HTTP 403,
before `connection_init`; see the app's view). Requests without `Origin`
(curl, servers, the Python client) and same-origin pages are not affected:
CORS protects browsers' users, and API keys are what protects the data.
"""

from __future__ import annotations

from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memlattice.core.bookmarks import HEADER as BOOKMARK_HEADER
from memlattice.core.origins import OriginPolicy
from memlattice.core.settings import Settings
from memlattice.server.http_auth import API_KEY_HEADER
from memlattice.server.observability.http import HEADER as REQUEST_ID_HEADER

METHODS = ("GET", "POST")
# Headers a page may send (beside the CORS-safelisted ones): the key, JSON bodies,
# the request id, causal bookmarks, the declared actor and the access-count switch;
# Apollo Client adds its client-awareness pair when given a name and version.
REQUEST_HEADERS = ("authorization", "content-type", API_KEY_HEADER, REQUEST_ID_HEADER,
                   BOOKMARK_HEADER, "x-memlattice-actor", "x-memlattice-record-access",
                   "apollographql-client-name", "apollographql-client-version")
# Headers a page may read from an answer (beside the safelisted ones).
EXPOSED_HEADERS = (BOOKMARK_HEADER, REQUEST_ID_HEADER)
PREFLIGHT_MAX_AGE_S = 600


def origin_policy(settings: Settings) -> OriginPolicy:
    """The policy of these settings (development or keyless: loopback by default)."""
    return OriginPolicy.of(settings.cors_origins, development=settings.environment
                           == "development" or settings.auth_mode == "keyless")


class OriginCORS(CORSMiddleware):
    """Starlette's CORS middleware with the origin decided by an `OriginPolicy`,
    and nothing CORS-related sent to an origin it refuses (Starlette would still
    send the allowed methods, headers and exposed headers)."""

    def __init__(self, app: ASGIApp, *, policy: OriginPolicy) -> None:
        super().__init__(app, allow_origins=("*",) if policy.any_origin else (),
                         allow_methods=METHODS, allow_headers=REQUEST_HEADERS,
                         expose_headers=EXPOSED_HEADERS, max_age=PREFLIGHT_MAX_AGE_S)
        self.policy = policy

    def is_allowed_origin(self, origin: str) -> bool:
        return self.policy.allows(origin)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        origin = Headers(scope=scope).get("origin") if scope["type"] == "http" else None
        if origin is None or self.policy.allows(origin):
            await super().__call__(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
            refused = JSONResponse({"errors": [{
                "message": f"pages from {origin} may not call this API"
                           " (MEMLATTICE_CORS_ORIGINS lists the origins that may)",
                "extensions": {"code": "FORBIDDEN"}}]}, status_code=403,
                headers={"Vary": "Origin"})
            await refused(scope, receive, send)
            return

        async def send_varying(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).add_vary_header("Origin")
            await send(message)

        await self.app(scope, receive, send_varying)
