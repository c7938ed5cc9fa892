"""graphql-transport-ws messages are checked for shape before strawberry reads them.

Strawberry indexes a message as `message["type"]` and `message["payload"]["query"]`
and only expects KeyError: a message that is JSON but not an object (`"hi"`,
`[1]`, `null`), a `subscribe` whose payload is not an object, or an id that
is not a string raised TypeError out of the socket's task (a logged crash, a
dropped connection). The protocol's answer to an invalid message is to close
the socket with 4400 and a reason, which is what these get; JSON nested past
MAX_REQUEST_DEPTH is refused the same way (memlattice.server.http_requests).
"""

from __future__ import annotations

from typing import Any

from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
)

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


class CheckedTransportWS(BaseGraphQLTransportWSHandler[Any, Any]):
    async def handle_message(self, message: Any) -> None:
        problem = message_problem(message)
        if problem is not None:
            await self.handle_invalid_message(problem)
            return
        await super().handle_message(message)
