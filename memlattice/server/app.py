"""The Starlette application: one driver per process, opened in the lifespan.

`create_app(settings)` builds the routes from the settings it is given; no I/O
happens until the lifespan starts, which opens the runtime
(memlattice.server.runtime: driver, migrations, embedder, services, background
loops) and closes it on shutdown.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.exceptions import ConnectionRejectionError
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL
from strawberry.types import ExecutionResult
from strawberry.types.unset import UnsetType

from memlattice.core.errors import MemlatticeError
from memlattice.core.gate import Gate
from memlattice.core.origins import OriginPolicy
from memlattice.core.settings import Settings
from memlattice.graph.entities import link_noun_phrases
from memlattice.graph.migrations import pending
from memlattice.resolvers.context import Context
from memlattice.resolvers.errors import coded
from memlattice.resolvers.limits import limit_extensions
from memlattice.resolvers.operation_label import LabelOperation
from memlattice.resolvers.schema import MemlatticeSchema, build_schema, schema
from memlattice.search.rerank import RerankerRegistry
from memlattice.server.cors import OriginCORS, origin_policy
from memlattice.server.explorer import explorer_routes, graphiql_page
from memlattice.server.explorer import is_built as explorer_is_built
from memlattice.server.http_auth import RequireKey, principal_of, refuse_unless_operator
from memlattice.server.http_bookmarks import CausalBookmarks
from memlattice.server.http_requests import CodedHTTP
from memlattice.server.observability.http import RequestGuard
from memlattice.server.observability.metrics import Metrics
from memlattice.server.observability.view import GuardedView
from memlattice.server.persisted_queries import PersistedQueries
from memlattice.server.runtime import Runtime, configured_rerankers, open_runtime
from memlattice.server.throttle import (
    RefuseEarly,
    Throttle,
    Turns,
    build_gate,
    build_turns,
    neo4j_on_this_machine,
)
from memlattice.server.ws_messages import CheckedTransportWS

log = logging.getLogger(__name__)

ACTOR_HEADER = "x-memlattice-actor"
# `false` (or `0`): this request is a person reading, not an agent recalling, and
# its searches leave the hits' access counts alone (see docs/api.md).
RECORD_ACCESS_HEADER = "x-memlattice-record-access"


def records_access(value: str | None) -> bool:
    """What `x-memlattice-record-access` asks for; absent or anything else: record."""
    return (value or "").strip().lower() not in ("false", "0", "no")


KEYLESS_WARNING = (
    "AUTH IS OFF (MEMLATTICE_AUTH_MODE=keyless): every request acts as an all-powerful"
    " development caller. Never expose this server; set MEMLATTICE_AUTH_MODE=keys and"
    " create keys with `memlattice keys create`."
)


class MemlatticeGraphQL(GuardedView, CodedHTTP, GraphQL[Context, None]):
    graphql_transport_ws_handler_class = CheckedTransportWS

    def __init__(self, runtime_holder: dict[str, Runtime],
                 graphql_schema: MemlatticeSchema = schema, *,
                 origins: OriginPolicy | None = None,
                 persisted_queries: PersistedQueries | None = None, gate: Gate | None = None,
                 turns: Turns | None = None, **kwargs: Any) -> None:
        super().__init__(graphql_schema, **kwargs)
        self._runtime = runtime_holder
        self._gate = gate
        # Where a query or mutation sent over a WebSocket waits for its turn, as an
        # HTTP request does (memlattice.server.ws_messages).
        self.turns = turns
        self.origins = origins or OriginPolicy(frozenset(), loopback=False)
        self.persisted_queries = (persisted_queries if persisted_queries is not None
                                  else PersistedQueries(0))

    def is_websocket_origin_allowed(self, request: Any, origin: str) -> bool:
        """A page on another origin may open the socket when CORS lets it call
        (memlattice.core.origins); strawberry lets same-origin pages and clients
        that send no `Origin` (not browsers) through before asking."""
        return self.origins.allows(origin)

    async def process_result(self, request: Request, result: ExecutionResult) -> Any:
        """A last net: errors produced before execution (e.g. a cached parse) get codes too."""
        if result.errors:
            result.errors = [e if (e.extensions or {}).get("code") else coded(e)
                             for e in result.errors]
        return await super().process_result(request, result)

    async def render_graphql_ide(self, request: Request) -> Response:
        """GraphiQL bundled with the explorer (memlattice.server.explorer): no CDN."""
        return graphiql_page()

    async def get_context(self, request: Request | WebSocket, response: Any) -> Context:
        runtime = self._runtime["runtime"]
        principal = principal_of(request.scope)
        declared = request.headers.get(ACTOR_HEADER)
        return Context(service=runtime.service, knowledge=runtime.knowledge,
                       actor=principal.actor(declared),
                       declared_actor=declared, events=runtime.events,
                       record_access=records_access(request.headers.get(RECORD_ACCESS_HEADER)),
                       consolidation=runtime.consolidation,
                       session_facts=runtime.session_facts, principal=principal,
                       gate=self._gate)

    async def on_ws_connect(self, context: Context) -> UnsetType | dict[str, object] | None:
        """graphql-transport-ws `connection_init`: authenticate the key in its payload
        (`{"authorization": "Bearer <key>"}`); a refused key closes the socket (4403)."""
        params = context.connection_params or {}
        token = params.get("authorization") or params.get("Authorization")
        runtime = self._runtime["runtime"]
        try:
            context.principal = await runtime.authenticate(token)
        except MemlatticeError as exc:
            log.warning("refused a WebSocket connection: %s", exc.code)
            raise ConnectionRejectionError({"code": exc.code, "message": exc.message}) from exc
        context.actor = context.principal.actor(context.declared_actor)
        context.reauthenticate = functools.partial(runtime.authenticate, token)
        context.key_recheck_s = runtime.key_recheck_s
        return UnsetType()  # UNSET itself (a singleton), which strawberry types as Any


def create_app(settings: Settings, rerankers: RerankerRegistry | None = None) -> Starlette:
    """Build the app; `rerankers` lets an embedding program register Python rerankers."""
    holder: dict[str, Runtime] = {}
    metrics = Metrics()
    registry = configured_rerankers(settings, rerankers)
    link_noun_phrases(settings.entity_phrases)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with open_runtime(settings, metrics=metrics, rerankers=registry) as runtime:
            holder["runtime"] = runtime
            if settings.auth_mode == "keyless":
                log.warning(KEYLESS_WARNING)
            log.info("memlattice ready on Neo4j at %s", runtime.uri)
            try:
                yield
            finally:
                holder.pop("runtime", None)

    async def healthz(request: Request) -> Response:
        if settings.auth_mode == "keyless":
            return JSONResponse({"status": "ok", "auth": "keyless", "warning": KEYLESS_WARNING})
        return JSONResponse({"status": "ok", "auth": "keys"})

    async def readyz(request: Request) -> Response:
        runtime = holder.get("runtime")
        if runtime is None:
            return JSONResponse({"status": "starting"}, status_code=503)
        try:
            await runtime.client.verify()
            waiting = await pending(runtime.client, dimension=settings.embedding.dimension)
        except MemlatticeError as exc:
            return JSONResponse({"status": "unavailable", "code": exc.code}, status_code=503)
        if waiting:
            return JSONResponse({"status": "migrating", "pending": waiting}, status_code=503)
        return JSONResponse({"status": "ready"})

    async def root(request: Request) -> Response:
        """The explorer when its bundle is built, else GraphiQL."""
        return RedirectResponse("/explorer/" if explorer_is_built() else "/graphql")

    async def metrics_endpoint(request: Request) -> Response:
        """Prometheus text; with keys, for operators only: the metrics token or an
        admin key (MEMLATTICE_METRICS_PUBLIC opens it, for a private network)."""
        if settings.auth_mode == "keys" and not settings.metrics_public:
            refused = await refuse_unless_operator(request, holder, settings.metrics_token)
            if refused is not None:
                return refused
        body, content_type = metrics.render()
        return Response(body, media_type=content_type)

    hardened = build_schema(
        [*limit_extensions(settings.limits, introspection=settings.introspection_enabled),
         LabelOperation],
        max_batch_operations=settings.limits.max_batch_operations)
    origins = origin_policy(settings)
    # Per-key limits (memlattice.core.fairness): one gate per process.
    gate = build_gate(settings.fairness, metrics,
                      neo4j_here=neo4j_on_this_machine(settings.neo4j.uri))
    # Where requests and WebSocket queries of a busy process wait for their turns.
    turns = build_turns(gate, settings.fairness, metrics,
                        max_wait_s=settings.limits.request_timeout_s)
    graphql = MemlatticeGraphQL(holder, hardened, origins=origins, gate=gate, turns=turns,
                                metrics=metrics,
                                persisted_queries=PersistedQueries(
                                    settings.limits.persisted_queries_bytes),
                                timeout_s=settings.limits.request_timeout_s,
                                graphql_ide="graphiql" if settings.graphiql else None,
                                subscription_protocols=(GRAPHQL_TRANSPORT_WS_PROTOCOL,))
    app = Starlette(
        routes=[
            Route("/", root),
            Route("/healthz", healthz),
            Route("/readyz", readyz),
            Route("/metrics", metrics_endpoint),
            # Every method reaches the view, which answers other than GET and POST
            # with a coded 405 (Starlette's own is plain text). Bookmarks come first,
            # so that the key check waits for them too.
            Route("/graphql", CausalBookmarks(RefuseEarly(RequireKey(
                Throttle(graphql, turns, metrics), holder), gate, metrics,
                hold_s=settings.fairness.refusal_hold_s,
                max_held=settings.fairness.refusal_hold_max), metrics)),
            WebSocketRoute("/graphql", graphql),
            *explorer_routes(),
        ],
        lifespan=lifespan,
    )
    app.state.runtime_holder = holder
    app.state.metrics = metrics
    app.state.gate = gate
    app.add_middleware(RequestGuard, metrics=metrics,
                       max_body_bytes=settings.limits.max_body_bytes)
    # Outermost, so that every answer a page may read (a 413 too) carries CORS headers.
    app.add_middleware(OriginCORS, policy=origins)
    return app


def runtime_of(app: Starlette) -> Runtime:
    """The running app's shared objects (for embedding programs and tests)."""
    holder: dict[str, Runtime] = app.state.runtime_holder
    return holder["runtime"]
