"""The ASGI layer in front of every route: request id, body limit, access log.

* The request id comes from `x-request-id` (when it is a sane token) or is
  generated; it is echoed in the response header and set in the logging
  context variable for everything that runs on the request's behalf.
* Bodies over `max_body_bytes` are refused with 413 and a GraphQL-shaped
  error (`PAYLOAD_TOO_LARGE`) before the app sees them, whether the client
  declared a Content-Length or streamed chunks without one.
* One structured access line per request: method, path, status, duration.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import MutableMapping
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memlattice.server.observability.logs import REQUEST_ID
from memlattice.server.observability.metrics import Metrics

log = logging.getLogger("memlattice.access")

HEADER = "x-request-id"
_SANE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def request_id_from(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name == HEADER.encode():
            candidate: str = value.decode("latin-1")
            if _SANE_ID.match(candidate):
                return candidate
    return uuid.uuid4().hex


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class RequestGuard:
    def __init__(self, app: ASGIApp, *, metrics: Metrics, max_body_bytes: int) -> None:
        self.app = app
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                token = REQUEST_ID.set(request_id_from(scope))
                try:
                    await self.app(scope, receive, send)
                finally:
                    REQUEST_ID.reset(token)
            else:
                await self.app(scope, receive, send)
            return
        request_id = request_id_from(scope)
        token = REQUEST_ID.set(request_id)
        started = time.perf_counter()
        status: dict[str, int] = {"code": 0}

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                headers = list(message.get("headers", []))
                headers.append((HEADER.encode(), request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        self.metrics.in_flight.inc()
        try:
            replay = await self._read_body(scope, receive)
            if replay is None:
                await self._refuse(send_with_id, request_id)
                return
            await self.app(scope, replay, send_with_id)
        finally:
            self.metrics.in_flight.dec()
            log.info("%s %s %s", scope["method"], scope["path"], status["code"],
                     extra={"method": scope["method"], "path": scope["path"],
                            "status": status["code"],
                            "duration_ms": round((time.perf_counter() - started) * 1000, 2)})
            REQUEST_ID.reset(token)

    async def _read_body(self, scope: Scope, receive: Receive) -> Receive | None:
        """The whole body, replayed to the app; None when it is over the limit."""
        declared = _declared_length(scope)
        if declared is not None and declared > self.max_body_bytes:
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                # A disconnect before the body ended: let the app see it.
                pending: list[Message] = [message]
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                pending = []
                break
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            if pending:
                return pending.pop(0)
            return await receive()

        return replay

    async def _refuse(self, send: Send, request_id: str) -> None:
        self.metrics.error("PAYLOAD_TOO_LARGE")
        payload: MutableMapping[str, Any] = {"errors": [{
            "message": f"the request body is larger than {self.max_body_bytes} bytes",
            "extensions": {"code": "PAYLOAD_TOO_LARGE", "limit": self.max_body_bytes,
                           "requestId": request_id},
        }]}
        body = json.dumps(payload).encode()
        await send({"type": "http.response.start", "status": 413, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})
