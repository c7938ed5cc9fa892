"""Live change events: the `memoryEvents` subscription over graphql-transport-ws (async).

    async with client.memory_events("team/alice", kinds=["WRITTEN"]) as events:
        async for event in events:      # MemoryEvent, in commit order
            ...

The block starts once the server confirms the subscription (its SUBSCRIBED
event), so a change committed after that is delivered. Every event has a
`cursor`: `client.memory_events(ns, after=cursor)` resumes after it, on any
server process; `events.subscribed.missed` > 0 says the server no longer held
everything after it (re-read then). WebSockets need the
optional `httpx-ws` package (`pip install httpx-ws`); the rest of the client
does not. The API key travels in `connection_init`, as the server expects.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import datetime
from enum import Enum
from typing import Any, TypedDict

import httpx

from memlattice_client._errors import MemlatticeError, UnauthenticatedError, error_from_graphql
from memlattice_client._inputs import to_graphql
from memlattice_client._models import Edge, Memory, _Result
from memlattice_client._selections import EDGE, MEMORY

PROTOCOL = "graphql-transport-ws"
SUBSCRIPTIONS = ("memoryEvents",)
EVENTS = f"""subscription($ns: String!, $filter: MemoryEventFilterInput, $after: String) {{
  memoryEvents(namespace: $ns, filter: $filter, after: $after) {{
    seq cursor kind namespace memoryId memoryIds version actor at missed
    memory {{ {MEMORY} }} edge {{ {EDGE} }}
  }}
}}"""


class MemoryEventKind(str, Enum):
    SUBSCRIBED = "SUBSCRIBED"
    WRITTEN = "WRITTEN"
    UPDATED = "UPDATED"
    SUPERSEDED = "SUPERSEDED"
    FORGOTTEN = "FORGOTTEN"
    DELETED = "DELETED"
    EDGE_ADDED = "EDGE_ADDED"
    EDGE_DELETED = "EDGE_DELETED"


class MemoryEvent(_Result):
    """One committed change; `missed` > 0 says events were dropped (re-read then);
    `cursor` resumes a later subscription after this event."""

    seq: int
    cursor: str
    kind: MemoryEventKind
    namespace: str
    memory_id: str | None = None
    memory_ids: tuple[str, ...] = ()
    memory: Memory | None = None
    edge: Edge | None = None
    version: int | None = None
    actor: str | None = None
    at: datetime
    missed: int = 0


class EventFilter(TypedDict, total=False):
    """Which events to receive; omitted fields match everything."""

    kinds: Sequence[MemoryEventKind | str]
    tags_any: Sequence[str]
    memory_types: Sequence[str]
    agent_id: str
    user_id: str
    session_id: str
    task_id: str


class EventStream:
    """The events of one subscription; iterate it inside its `async with` block."""

    def __init__(self, ws: Any, subscribed: MemoryEvent, timeout: float | None) -> None:
        self._ws = ws
        self._timeout = timeout
        self.subscribed = subscribed

    def __aiter__(self) -> AsyncIterator[MemoryEvent]:
        return self._events()

    async def _events(self) -> AsyncIterator[MemoryEvent]:
        while True:
            event = await _next_event(self._ws, self._timeout)
            if event is None:
                return
            yield event


async def _next_event(ws: Any, timeout: float | None) -> MemoryEvent | None:
    """The next event, answering pings; None when the server completes the stream."""
    while True:
        message: dict[str, Any] = await ws.receive_json(timeout=timeout)
        kind = message.get("type")
        if kind == "ping":
            await ws.send_json({"type": "pong"})
        elif kind == "complete":
            return None
        elif kind == "error":
            raise error_from_graphql((message.get("payload") or [{}])[0])
        elif kind == "next":
            payload = message["payload"]
            if payload.get("errors"):
                raise error_from_graphql(payload["errors"][0])
            return MemoryEvent.model_validate(payload["data"]["memoryEvents"])


def _lone(group: BaseExceptionGroup[Any]) -> BaseException:
    """The one exception inside (possibly nested) single-member groups, else the group."""
    error: BaseException = group
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


@contextlib.asynccontextmanager
async def subscribe(
    http: httpx.AsyncClient, endpoint: str, authorization: str | None, namespace: str,
    flt: Mapping[str, Any], *, timeout: float | None, after: str | None = None,
) -> AsyncIterator[EventStream]:
    """Open the socket, authenticate, subscribe, and wait for SUBSCRIBED.

    httpx-ws runs the socket in a task group, which wraps whatever leaves the block
    (ours, or the caller's own exception) in an ExceptionGroup; a lone exception is
    unwrapped so callers catch `UnauthenticatedError` or their own errors as usual.
    """
    try:
        async with _subscribe(http, endpoint, authorization, namespace, flt,
                              timeout=timeout, after=after) as stream:
            yield stream
    except BaseExceptionGroup as group:
        error = _lone(group)
        if error is group:
            raise
        raise error from None


@contextlib.asynccontextmanager
async def _subscribe(
    http: httpx.AsyncClient, endpoint: str, authorization: str | None, namespace: str,
    flt: Mapping[str, Any], *, timeout: float | None, after: str | None,
) -> AsyncIterator[EventStream]:
    try:
        from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect, aconnect_ws
    except ModuleNotFoundError:  # pragma: no cover - depends on the environment
        raise MemlatticeError("memory_events needs the httpx-ws package: "
                              "pip install 'memlattice-client[events]'",
                              code="CLIENT_DEPENDENCY") from None
    ws: AsyncWebSocketSession  # aconnect_ws's session type is a TypeVar mypy cannot solve
    async with aconnect_ws(endpoint, http, subprotocols=[PROTOCOL]) as ws:
        init = {"authorization": authorization} if authorization else {}
        await ws.send_json({"type": "connection_init", "payload": init})
        try:
            ack = await ws.receive_json(timeout=timeout)
        except WebSocketDisconnect as exc:  # 4403: the key was refused
            raise UnauthenticatedError(f"the server closed the socket: {exc.code}"
                                       f" {exc.reason or ''}".strip()) from None
        if ack.get("type") != "connection_ack":
            raise UnauthenticatedError(f"the server did not acknowledge: {ack}")
        variables = {"ns": namespace, "filter": to_graphql(flt) if flt else None,
                     "after": after}
        await ws.send_json({"id": "1", "type": "subscribe",
                            "payload": {"query": EVENTS, "variables": variables}})
        first = await _next_event(ws, timeout)
        if first is None:
            raise MemlatticeError("the server ended the subscription at once", code="UNKNOWN")
        yield EventStream(ws, first, timeout)
