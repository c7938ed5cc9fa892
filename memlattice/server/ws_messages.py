"""graphql-transport-ws messages are checked for shape before strawberry reads them.

Strawberry indexes a message as `message["type"]` and `message["payload"]["query"]`
and only expects KeyError: a message that is JSON but not an object (`"hi"`,
`[1]`, `null`), a `subscribe` whose payload is not an object, or an id that
is not a string raised TypeError out of the socket's task (a logged crash, a
dropped connection). The protocol's answer to an invalid message is to close
the socket with 4400 and a reason, which is what these get; JSON nested past
MAX_REQUEST_DEPTH is refused the same way (memlattice.server.http_requests).

An operation refused before it runs is answered with the protocol's `error`
message, carrying the codes HTTP gives the same document (BAD_REQUEST for a
syntax error, nesting past the limit or several operations without
`operationName`; VALIDATION; TOO_COMPLEX), and the socket stays open for the
caller's other operations. Strawberry closed the socket for a syntax error,
sent a bare `complete` for a refusal raised by a document check (logging
"Exception in worker task"), and a `next` for a variable that did not coerce.

A subscription on the socket holds one of its key's live-subscription slots
(`streams`) while it runs, after taking a request token (memlattice.core.fairness).
A query or mutation sent over it is a request like one sent over HTTP: it takes a
request token and one of the key's `concurrent` slots, waits for its turn in a busy
process and gives way at its stage boundaries in a crowded one (the process's one
`Turns`, memlattice.server.throttle), so a key cannot escape its limits, or the
sharing of the process, by sending its searches over a WebSocket. A refused one
gets an `error` message coded RATE_LIMITED with `retryAfter`, and the socket stays
open.
"""

from __future__ import annotations

from typing import Any

from graphql import GraphQLError
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
    Operation,
)
from strawberry.types import ExecutionResult

from memlattice.core.errors import MemlatticeError, RateLimited
from memlattice.resolvers.documents import is_subscription
from memlattice.resolvers.errors import with_code
from memlattice.server.media_types import ran
from memlattice.server.throttle import run_paced

_OPTIONAL_PAYLOAD_FIELDS = (("variables", dict), ("extensions", dict), ("operationName", str))


def message_problem(message: Any) -> str | None:
    """Why `message` is not a well-formed graphql-transport-ws message, or None."""
    if not isinstance(message, dict):
        return "a message must be a JSON object"
    kind = message.get("type")
    if not isinstance(kind, str):
        return "a message needs a string `type`"
    if kind in ("subscribe", "complete") and not isinstance(message.get("id"), str):
        return f"a {kind} message needs a string `id`"
    if kind == "subscribe":
        payload = message.get("payload")
        if not isinstance(payload, dict) or not isinstance(payload.get("query"), str):
            return "a subscribe message needs a payload object with a string `query`"
        for name, kind_of in _OPTIONAL_PAYLOAD_FIELDS:
            value = payload.get(name)
            if value is not None and not isinstance(value, kind_of):
                return f"`payload.{name}` has the wrong type"
    return None


class _FirstRefused(Exception):
    """The stream's first result says the operation never ran."""

    def __init__(self, errors: list[GraphQLError]) -> None:
        super().__init__("refused before it ran")
        self.errors = errors


async def _checked_first(source: Any) -> Any:
    """`source`, except a first result that never ran, raised as `_FirstRefused`."""
    first = True
    async for result in source:
        if first and isinstance(result, ExecutionResult) and not ran(result):
            raise _FirstRefused([with_code(error) for error in result.errors or []])
        first = False
        yield result


class CheckedTransportWS(BaseGraphQLTransportWSHandler[Any, Any]):
    async def handle_message(self, message: Any) -> None:
        problem = message_problem(message)
        if problem is not None:
            await self.handle_invalid_message(problem)
            return
        await super().handle_message(message)

    async def _send_result_stream(self, operation: Operation[Any, Any], result_source: Any
                                  ) -> None:
        """Results as strawberry sends them, but an operation refused before it ran
        ends with an `error` message (after which strawberry sends no `complete`)."""
        try:
            await super()._send_result_stream(operation, _checked_first(result_source))
        except _FirstRefused as refused:
            await operation.send_initial_errors(refused.errors)
        except MemlatticeError as exc:  # a document check (resolvers.documents) refused it
            await operation.send_initial_errors([GraphQLError(
                exc.message, original_error=exc, extensions=exc.extensions())])
        except GraphQLError as error:  # a syntax error, raised by the parser cache
            await operation.send_initial_errors([with_code(error)])


    async def run_operation(self, operation: Operation[Any, Any]) -> None:
        context = self.context
        gate = getattr(context, "gate", None)
        principal = getattr(context, "principal", None)
        if gate is None or principal is None or principal.anonymous:
            await super().run_operation(operation)
            return
        turns = getattr(self.view, "turns", None)
        if turns is not None and not is_subscription(operation.query,
                                                     operation.operation_name):
            # A query or mutation: a request like any sent over HTTP.
            refusal = await turns.admit(principal)
            if refusal is None:
                await run_paced(turns, principal, super().run_operation(operation))
                return
        else:
            refusal = gate.admit(principal, stream=True)
            if refusal is None:
                try:
                    await super().run_operation(operation)
                finally:
                    gate.release(principal, stream=True)
                return
        error = RateLimited(refusal.message, limit=refusal.limit.value,
                            retryAfter=int(refusal.retry_after_header))
        await operation.send_initial_errors([GraphQLError(
            error.message, original_error=error, extensions=error.extensions())])
