"""API keys on HTTP: the GraphQL route authenticates before any GraphQL work happens.

A key arrives as `Authorization: Bearer <key>` or `x-api-key: <key>`. A request
without a valid key is answered 401 with a GraphQL-shaped body whose error
code is UNAUTHENTICATED, so no resolver runs for it (a key that cannot be
checked because Neo4j is away is UNAVAILABLE, HTTP 200); an accepted request
carries its `Principal` in the ASGI scope, where `get_context` finds it.
`GET /graphql` without a `query` or `extensions` (the GraphiQL page) passes:
the page itself holds no data, and the queries it sends need the key like any
other (a GET naming a persisted query's hash needs it too).
WebSockets authenticate in `connection_init` instead (see the app's
`on_ws_connect`).
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any, Protocol

from pydantic import SecretStr
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from memlattice.core.auth import Principal
from memlattice.core.errors import Forbidden, MemlatticeError, Unauthenticated, Unavailable
from memlattice.server.media_types import GRAPHQL_RESPONSE, JSON, negotiate
from memlattice.services.apikeys import bearer

PRINCIPAL_SCOPE_KEY = "memlattice.principal"
# UNAVAILABLE on /graphql is HTTP 200, whether Neo4j fails while the key is
# checked or while the operation runs. graphql-over-http asks for 200 for every
# well-formed request answered as application/json, and for 2xx whenever the
# body has a `data` entry (here null); a 503 would also tempt proxies to
# replace the body that carries `retryable` and the request id. Only
# /readyz and /metrics, which are not GraphQL, answer 503.
GRAPHQL_UNAVAILABLE_STATUS = 200
API_KEY_HEADER = "x-api-key"


class Authenticates(Protocol):
    async def authenticate(self, token: str | None) -> Principal: ...


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The key a request presents: `Authorization` first, else `x-api-key`."""
    return headers.get("authorization") or headers.get(API_KEY_HEADER)


def principal_of(scope: Mapping[str, Any]) -> Principal:
    """The caller this request authenticated as; nobody if it did not."""
    principal = scope.get(PRINCIPAL_SCOPE_KEY)
    return principal if isinstance(principal, Principal) else Principal.nobody()


def _error(exc: MemlatticeError, status: int, media_type: str = JSON) -> JSONResponse:
    """As application/graphql-response+json, a refused key's answer has no `data`
    (nothing ran); as application/json it keeps the `data: null` it always had."""
    headers = {"WWW-Authenticate": 'Bearer realm="memlattice"'} if status == 401 else None
    body: dict[str, Any] = {"errors": [{"message": exc.message,
                                        "extensions": exc.extensions()}]}
    if media_type != GRAPHQL_RESPONSE or status < 400:
        body = {"data": None, **body}
    return JSONResponse(body, status_code=status, headers=headers, media_type=media_type)


class RequireKey:
    """ASGI wrapper of the GraphQL endpoint; `auth` is looked up per request (the
    authenticator exists only once the lifespan has started)."""

    def __init__(self, app: ASGIApp, holder: Mapping[str, Any]) -> None:
        self.app = app
        self.holder = holder

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        connection = HTTPConnection(scope)
        if scope.get("method") == "GET" and not ({"query", "extensions"}
                                                 & set(connection.query_params)):
            await self.app(scope, receive, send)
            return
        runtime = self.holder.get("runtime")
        media_type = negotiate(connection.headers.get("accept"))
        if runtime is None:
            await _error(Unavailable("starting up", retryable=True), 200,
                         media_type)(scope, receive, send)
            return
        try:
            principal = await runtime.auth.authenticate(presented_key(connection.headers))
        except Unauthenticated as exc:
            await _error(exc, 401, media_type)(scope, receive, send)
            return
        except MemlatticeError as exc:
            # Neo4j cannot check the key: UNAVAILABLE, with the same 200 as when
            # it fails during execution (see GRAPHQL_UNAVAILABLE_STATUS).
            await _error(exc, GRAPHQL_UNAVAILABLE_STATUS, media_type)(scope, receive, send)
            return
        scope[PRINCIPAL_SCOPE_KEY] = principal
        await self.app(scope, receive, send)


async def refuse_unless_operator(connection: HTTPConnection, holder: Mapping[str, Any],
                                 token: SecretStr | None = None) -> JSONResponse | None:
    """None when the request presents `token` or an admin key; otherwise the answer
    to send (401 without a valid key, 403 for a key that is not an operator's, 503
    while the service starts or Neo4j is away). For operator endpoints outside
    GraphQL (`/metrics`). The token is checked without Neo4j, so a scraper that
    sends it still gets its figures while the database is down."""
    presented = bearer(presented_key(connection.headers))
    if token is not None and presented is not None and hmac.compare_digest(
            presented.encode(), token.get_secret_value().encode()):
        return None
    runtime = holder.get("runtime")
    if runtime is None:
        return JSONResponse({"data": None, "errors": [{"message": "starting up",
                             "extensions": {"code": "UNAVAILABLE"}}]}, status_code=503)
    try:
        principal = await runtime.auth.authenticate(presented_key(connection.headers))
        principal.require_admin()
    except Unauthenticated as exc:
        return _error(exc, 401)
    except Forbidden as exc:
        return _error(exc, 403)
    except MemlatticeError as exc:
        return _error(exc, 503)
    return None
