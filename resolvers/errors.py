"""Every error leaves as a GraphQL error with a stable `extensions.code`.

    MemlatticeError            -> its own code and message (details included)
    syntax error in the query  -> BAD_REQUEST
    any other request error    -> VALIDATION (unknown fields, wrong types, bad enums,
                                  variables that do not coerce: errors with no path)
    anything else              -> INTERNAL, message masked, stack trace logged
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Iterator
from contextlib import aclosing
from typing import Any

from graphql import GraphQLError
from strawberry.extensions import SchemaExtension
from strawberry.types import ExecutionResult

from memlattice.core.errors import MemlatticeError

log = logging.getLogger("memlattice.errors")


def coded(error: GraphQLError) -> GraphQLError:
    original = error.original_error
    if isinstance(original, MemlatticeError):
        return GraphQLError(original.message, nodes=error.nodes, path=error.path,
                            original_error=original, extensions=original.extensions())
    if original is None or error.path is None:
        # No path: the request failed before execution (parsing, validation or
        # variable coercion), so the message describes the caller's input.
        code = "BAD_REQUEST" if error.message.startswith("Syntax Error") else "VALIDATION"
        return GraphQLError(error.message, nodes=error.nodes, path=error.path,
                            extensions={**(error.extensions or {}), "code": code})
    log.error("unexpected error in %s", ".".join(map(str, error.path or [])),
              exc_info=original)
    return GraphQLError("Internal server error; it has been logged.", nodes=error.nodes,
                        path=error.path, extensions={"code": "INTERNAL"})


class ErrorCodes(SchemaExtension):
    def on_operation(self) -> Iterator[None]:
        yield
        result = self.execution_context.result
        if result is not None and result.errors:
            result.errors = [coded(e) for e in result.errors]


def with_code(error: GraphQLError) -> GraphQLError:
    """`coded`, keeping a pre-execution error's own type (transports look at it)."""
    if (error.extensions or {}).get("code"):
        return error
    if error.original_error is None and error.path is None:
        code = "BAD_REQUEST" if error.message.startswith("Syntax Error") else "VALIDATION"
        error.extensions = {**(error.extensions or {}), "code": code}
        return error
    return coded(error)


async def coded_stream(source: AsyncGenerator[Any, None]) -> AsyncGenerator[Any, None]:
    """Give every error of a streamed (subscription) result its stable code."""
    async with aclosing(source):
        async for result in source:
            if isinstance(result, ExecutionResult) and result.errors:
                result.errors = [with_code(e) for e in result.errors]
            yield result
