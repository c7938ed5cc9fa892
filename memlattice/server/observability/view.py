"""What the GraphQL view adds to every operation: a time budget, metrics, request ids.

Mixed into the app's strawberry view. An operation that runs past
`request_timeout_s` is cancelled and answered with TIMEOUT (a write cut off
that way may still have committed in Neo4j if the commit was already sent;
the message says to read before retrying). Every error leaves with the
request id in its extensions and is counted by code.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from graphql import GraphQLError
from strawberry.types import ExecutionResult

from memlattice.core.errors import Timeout
from memlattice.resolvers.operation_label import CURRENT, OperationLabel
from memlattice.server.observability.logs import REQUEST_ID
from memlattice.server.observability.metrics import Metrics

log = logging.getLogger("memlattice.requests")


class GuardedView:
    """A mixin for `strawberry.asgi.GraphQL`; place it before GraphQL in the bases."""

    def __init__(self, *args: Any, metrics: Metrics | None = None, timeout_s: float = 30.0,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.metrics = metrics or Metrics()
        self.timeout_s = timeout_s

    async def execute_single(self, *args: Any, **kwargs: Any) -> ExecutionResult:
        label = OperationLabel()
        token = CURRENT.set(label)
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self.timeout_s):
                result: ExecutionResult = await super().execute_single(  # type: ignore[misc]
                    *args, **kwargs)
        except TimeoutError:
            log.warning("operation %s timed out after %.1fs", label.operation, self.timeout_s)
            error = Timeout(f"the request took longer than {self.timeout_s:g}s and was"
                            " cancelled; a write may or may not have been applied",
                            timeoutSeconds=self.timeout_s)
            result = ExecutionResult(data=None, errors=[
                GraphQLError(error.message, original_error=error,
                             extensions=error.extensions())])
        finally:
            CURRENT.reset(token)
        self.metrics.requests.labels(operation=label.operation, type=label.type).observe(
            time.perf_counter() - started)
        return result

    async def process_result(self, request: Any, result: ExecutionResult) -> Any:
        if result.errors:
            request_id = REQUEST_ID.get()
            for error in result.errors:
                extensions = dict(error.extensions or {})
                self.metrics.error(str(extensions.get("code", "INTERNAL")))
                if request_id:
                    extensions["requestId"] = request_id
                error.extensions = extensions
        return await super().process_result(request, result)  # type: ignore[misc]
