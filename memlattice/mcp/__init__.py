"""Memlattice as an MCP server: stdio for local agents, streamable HTTP for remote ones.

    run_stdio(settings, api_key)     one agent, one key (MEMLATTICE_API_KEY)
    http_app(settings)               ASGI app serving /mcp; each request's
                                     `Authorization: Bearer <key>` is the caller

Both start the Memlattice runtime in-process (see `gateway`) and expose the
tools of `tools`; calls that name no namespace use `default_namespace`
(MEMLATTICE_MCP_NAMESPACE, read by `memlattice mcp`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

from mcp.server.mcpserver import Context
from starlette.applications import Starlette
from starlette.routing import Mount

from memlattice.core.settings import Settings
from memlattice.mcp.gateway import Gateway, open_gateway
from memlattice.mcp.runner import HTTP_KEY_HINT, STDIO_KEY_HINT, Runner
from memlattice.mcp.tools import build_server
from memlattice.server.http_auth import presented_key

__all__ = ["http_app", "run_stdio", "stdio_runner"]


class _Holder:
    """The gateway once the runtime has started (tools are registered before that)."""

    gateway: Gateway | None = None

    def __call__(self) -> Gateway:
        if self.gateway is None:
            raise RuntimeError("the Memlattice runtime has not started")
        return self.gateway


def stdio_runner(gateway: Callable[[], Gateway], api_key: str | None,
                 default_namespace: str | None = None) -> Runner:
    """Every call as the one caller `api_key` identifies; one without a key is told to
    set MEMLATTICE_API_KEY (a stdio agent has no header to send)."""
    return Runner(gateway, lambda ctx: api_key, default_namespace, STDIO_KEY_HINT)


async def run_stdio(settings: Settings, api_key: str | None,
                    default_namespace: str | None = None) -> None:
    """Serve MCP on stdin/stdout as the one caller `api_key` identifies."""
    holder = _Holder()
    server = build_server(stdio_runner(holder, api_key, default_namespace))
    async with open_gateway(settings) as gateway:
        holder.gateway = gateway
        await server.run_stdio_async()


def _header_key(ctx: Context) -> str | None:
    headers = ctx.headers
    return presented_key({k.lower(): v for k, v in headers.items()}) if headers else None


def http_app(settings: Settings, *, path: str = "/mcp",
             default_namespace: str | None = None) -> Starlette:
    """Streamable HTTP at `path`; every request authenticates with its own API key."""
    holder = _Holder()
    server = build_server(Runner(holder, _header_key, default_namespace, HTTP_KEY_HINT))
    mcp_app = server.streamable_http_app(streamable_http_path=path, host=settings.host)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with open_gateway(settings) as gateway:
            holder.gateway = gateway
            async with mcp_app.router.lifespan_context(mcp_app):
                yield
            holder.gateway = None

    return Starlette(routes=[Mount("/", app=mcp_app)], lifespan=lifespan)
