"""The MCP server's way into Memlattice: the GraphQL schema, executed in-process.

An MCP tool builds the same operation the Python client would send
(`memlattice_client._operations`) and runs it with `schema.execute` on a
`Context` that carries the caller's `Principal`: no HTTP, no second
implementation of any rule. The resolvers authorise the namespace, scope and
clearance and the service validates input exactly as for GraphQL callers, so
an MCP agent and a GraphQL client holding the same key see the same memories.

`open_gateway(settings)` opens the Memlattice runtime the app's lifespan opens
(memlattice.server.runtime: one Neo4j driver, migrations, the embedder, the
services and their background loops, the API-key store), so the MCP process is
configured by the same settings and environment as `memlattice serve`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TypeVar

from memlattice.core.auth import Principal
from memlattice.core.settings import Settings
from memlattice.resolvers.context import Context
from memlattice.resolvers.schema import MemlatticeSchema, schema
from memlattice.server.app import KEYLESS_WARNING
from memlattice.server.runtime import Runtime, open_runtime
from memlattice_client._errors import error_from_graphql
from memlattice_client._operations import Call

T = TypeVar("T")

log = logging.getLogger(__name__)


class Gateway:
    """Runs client operations against the schema as one authenticated caller."""

    def __init__(self, runtime: Runtime, graphql_schema: MemlatticeSchema = schema) -> None:
        self.runtime = runtime
        self.schema = graphql_schema

    async def authenticate(self, token: str | None) -> Principal:
        """A key (`mlk_...` or `Bearer mlk_...`) to its Principal, exactly as /graphql
        does it; raises the server's Unauthenticated for a missing, unknown or revoked key."""
        return await self.runtime.authenticate(token)

    async def run(self, call: Call[T], principal: Principal) -> T:
        """Execute `call` as `principal`; a GraphQL error becomes the client's typed
        exception (`ForbiddenError`, `ValidationError`, ...) carrying its code."""
        context = Context(service=self.runtime.service, knowledge=self.runtime.knowledge,
                          actor=principal.actor("mcp"),
                          events=self.runtime.events, principal=principal,
                          session_facts=self.runtime.session_facts)
        result = await self.schema.execute(call.document, variable_values=call.variables,
                                           context_value=context)
        if result.errors:
            raise error_from_graphql(result.errors[0].formatted)
        assert result.data is not None
        return call.result(result.data)


@contextlib.asynccontextmanager
async def open_gateway(settings: Settings) -> AsyncIterator[Gateway]:
    """Open the Memlattice runtime (as `memlattice serve` does) and yield a gateway over it."""
    async with open_runtime(settings) as runtime:
        if settings.auth_mode == "keyless":
            log.warning(KEYLESS_WARNING)
        yield Gateway(runtime)
