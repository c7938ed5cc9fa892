"""A WebSocket's queries and mutations run with its key checked again.

HTTP authenticates every request as it arrives (memlattice.server.http_auth). A
WebSocket authenticates once, at connection_init, and may live for hours, so
each operation it sends re-checks the key first: revoking a key stops a
connection's reads and writes at its next operation. Subscriptions re-check
on their own clock (resolvers.subscriptions), since strawberry does not let
an extension stop one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from graphql import GraphQLError
from strawberry.extensions import SchemaExtension
from strawberry.types import ExecutionResult

from memlattice.core.errors import MemlatticeError


class KeyRecheck(SchemaExtension):
    async def on_execute(self) -> AsyncIterator[None]:
        context = self.execution_context
        if getattr(context.context, "reauthenticate", None) is not None and context.result is None:
            try:
                await context.context.recheck_key()
            except MemlatticeError as exc:
                context.result = ExecutionResult(
                    data=None, errors=[GraphQLError(exc.message, original_error=exc)])
        yield
