"""The Starlette application: one driver per process, opened in the lifespan.

`create_app(settings)` builds everything from the settings it is given; no
I/O happens until the lifespan starts, where the driver connects, migrations
run and the embedder is wrapped in the Neo4j-backed cache.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.types import ExecutionResult

from graph.client import GraphClient
from graph.memories import EmbeddingCacheGraph, MemoryGraph
from graph.migrations import migrate, pending
from memlattice.access import AccessRecorder
from memlattice.embeddings import CachedEmbedder, make_embedder
from memlattice.errors import MemlatticeError
from memlattice.rerank import RerankerRegistry, http_reranker
from memlattice.service import MemoryService
from memlattice.settings import Settings
from resolvers.context import Context
from resolvers.errors import coded
from resolvers.schema import schema

log = logging.getLogger(__name__)

ACTOR_HEADER = "x-memlattice-actor"


@dataclass
class Runtime:
    """What the lifespan opens and every request shares."""

    client: GraphClient
    service: MemoryService


def resolve_neo4j_uri(settings: Settings) -> str:
    """NEO4J_URI when set; otherwise the locally provisioned server's address."""
    from memlattice.neo4j_local import bolt_uri

    return settings.neo4j.uri or bolt_uri(settings.local_neo4j)


class MemlatticeGraphQL(GraphQL[Context, None]):
    def __init__(self, runtime_holder: dict[str, Runtime], **kwargs: Any) -> None:
        super().__init__(schema, **kwargs)
        self._runtime = runtime_holder

    async def process_result(self, request: Request, result: ExecutionResult) -> Any:
        """A last net: errors produced before execution (e.g. a cached parse) get codes too."""
        if result.errors:
            result.errors = [e if (e.extensions or {}).get("code") else coded(e)
                             for e in result.errors]
        return await super().process_result(request, result)

    async def get_context(self, request: Request | WebSocket, response: Any) -> Context:
        runtime = self._runtime["runtime"]
        actor = request.headers.get(ACTOR_HEADER, "anonymous")[:256]
        return Context(service=runtime.service, actor=actor)


def create_app(settings: Settings, rerankers: RerankerRegistry | None = None) -> Starlette:
    """Build the app; `rerankers` lets an embedding program register Python rerankers."""
    holder: dict[str, Runtime] = {}
    registry = rerankers or RerankerRegistry()
    if settings.rerank.base_url:
        key = settings.rerank.api_key.get_secret_value() if settings.rerank.api_key else None
        registry.register("http", http_reranker(settings.rerank.base_url, settings.rerank.model,
                                                key))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        uri = resolve_neo4j_uri(settings)
        client = GraphClient.connect(
            uri, settings.neo4j.user, settings.neo4j.password.get_secret_value(),
            settings.neo4j.database,
        )
        try:
            await client.verify()
            applied = await migrate(client, dimension=settings.embedding.dimension,
                                    index=settings.vector_index)
            if applied:
                log.info("applied migrations %s", applied)
            embedder = make_embedder(settings.embedding)
            if embedder is not None:
                embedder = CachedEmbedder(embedder, EmbeddingCacheGraph(client))
            graph = MemoryGraph(client)
            access = AccessRecorder(graph)
            access.start()
            service = MemoryService(
                graph, embedder, dimension=settings.embedding.dimension,
                candidates=settings.search_candidates, access=access, rerankers=registry,
            )
            holder["runtime"] = Runtime(client=client, service=service)
            log.info("memlattice ready on Neo4j at %s", uri)
            yield
        finally:
            runtime = holder.pop("runtime", None)
            if runtime is not None:
                if runtime.service.access is not None:
                    await runtime.service.access.stop()
                if runtime.service.embedder is not None:
                    await runtime.service.embedder.aclose()
            await client.close()

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

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
        return RedirectResponse("/graphql")

    graphql = MemlatticeGraphQL(holder, graphql_ide="graphiql" if settings.graphiql else None)
    return Starlette(
        routes=[
            Route("/", root),
            Route("/healthz", healthz),
            Route("/readyz", readyz),
            Route("/graphql", graphql, methods=["GET", "POST"]),
        ],
        lifespan=lifespan,
    )
