"""Fairness between tenants on the wire: 429 with `Retry-After`, code RATE_LIMITED.

The decisions are memlattice.core.fairness's; here they meet HTTP:

- `RefuseEarly`, outside the key check, refuses a request of a key this
  process saw authenticate with the same secret within the last second and
  that is over its limits now (`Gate.early`): a flood's refusals then cost no
  Neo4j read; a key revoked or reconfigured meanwhile is judged in full once
  that second is over;
- `Throttle` wraps the GraphQL endpoint inside the key check: an authenticated
  request is admitted (its key's request rate and concurrency) before any
  GraphQL work, and released when its response is sent; a refused one is
  answered 429 with `Retry-After` and a GraphQL-shaped body, nothing run;
- the cost analysis (resolvers.limits) charges the operation's estimated cost
  once it is measured; an operation over the key's cost budget comes back as a
  RATE_LIMITED error, which the view turns into the same 429
  (memlattice.server.http_requests);
- a WebSocket operation holds a live-subscription slot while it runs
  (memlattice.server.ws_messages).

Every refusal is counted in `memlattice_rate_limited_total{key,limit}` and each
key's operations in flight in `memlattice_key_operations{key,kind}`.
"""

from __future__ import annotations

from starlette.requests import HTTPConnection
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from memlattice.core.errors import RateLimited
from memlattice.core.fairness import Gate, KeyLimits, Limiter, Refusal
from memlattice.core.settings import FairnessSettings
from memlattice.server.http_auth import presented_key, principal_of
from memlattice.server.http_requests import refusal, too_many
from memlattice.server.observability.metrics import Metrics
from memlattice.services.apikeys import bearer, digest, key_id_of


def build_gate(settings: FairnessSettings, metrics: Metrics | None) -> Gate | None:
    """The process's gate, its defaults from the settings; None when fairness is off."""
    if not settings.enabled:
        return None
    defaults = KeyLimits(rate=settings.rate, burst=settings.burst,
                         concurrent=settings.concurrent, streams=settings.streams,
                         cost_rate=settings.cost_rate, cost_burst=settings.cost_burst)
    limiter = Limiter(defaults, processes=settings.processes)
    if metrics is None:
        return Gate(limiter, early_s=settings.early_refusal_s)
    return Gate(limiter, refused=metrics.rate_limited, counts=metrics.key_operations,
                early_s=settings.early_refusal_s)


def rate_limited(refusal: Refusal) -> RateLimited:
    return RateLimited(refusal.message, limit=refusal.limit.value,
                       retryAfter=int(refusal.retry_after_header))


def rate_limited_response(error: RateLimited) -> Response:
    """429 with `Retry-After`, the body a request error's (nothing ran: no `data`)."""
    return refusal(too_many(error))


async def _refuse(refusal: Refusal, metrics: Metrics | None, scope: Scope, receive: Receive,
                  send: Send) -> None:
    """Answer 429 RATE_LIMITED for a refused request, counted as that error."""
    if metrics is not None:
        metrics.error(RateLimited.code)
    await rate_limited_response(rate_limited(refusal))(scope, receive, send)


def _fingerprint(scope: Scope) -> tuple[str, str] | None:
    """(key id, digest of the secret) a request presents, or None without a key."""
    token = presented_key(HTTPConnection(scope).headers)
    key_id = key_id_of(token)
    secret = bearer(token)
    return (key_id, digest(secret)) if key_id and secret else None


class RefuseEarly:
    """ASGI wrapper outside RequireKey: a request of a key that is over its limits
    by what this process saw of it a moment ago is refused before the key is looked
    up (`Gate.early`), so a flood's refusals cost Neo4j nothing."""

    def __init__(self, app: ASGIApp, gate: Gate | None,
                 metrics: Metrics | None = None) -> None:
        self.app = app
        self.gate = gate
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.gate is not None and scope["type"] == "http":
            presented = _fingerprint(scope)
            refusal = self.gate.early(*presented) if presented else None
            if refusal is not None:
                await _refuse(refusal, self.metrics, scope, receive, send)
                return
        await self.app(scope, receive, send)


class Throttle:
    """ASGI wrapper of the GraphQL endpoint, inside RequireKey (which put the principal
    in the scope); `holder` gives the app's gate once the app is built."""

    def __init__(self, app: ASGIApp, gate: Gate | None,
                 metrics: Metrics | None = None) -> None:
        self.app = app
        self.gate = gate
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = principal_of(scope)
        if self.gate is None or scope["type"] != "http" or principal.anonymous:
            await self.app(scope, receive, send)  # the GraphiQL page, or fairness off
            return
        presented = _fingerprint(scope)
        if presented is not None:
            self.gate.seen(principal, presented[1])
        refusal = self.gate.admit(principal)
        if refusal is not None:
            await _refuse(refusal, self.metrics, scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.gate.release(principal)

