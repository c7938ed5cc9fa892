"""GraphQL over HTTP: what a request must look like, and how a bad one is refused.

Mixed into the app's strawberry view. Strawberry answered a malformed request
with a plain-text 400 (no `extensions.code`), and some it did not foresee with
a 500: a body that is JSON but not an object (`"hello"`, `null`, `5`, a batch
of non-objects), JSON nested past the recursion limit, bytes that are not
UTF-8, a subscription sent by POST. Here every request error is a JSON body
with a coded GraphQL error and the request id:

    status  code         when
    400     BAD_REQUEST  not JSON / not UTF-8, not an object (or, with batching on,
                         a list of objects), nested deeper than MAX_REQUEST_DEPTH,
                         `query` / `variables` / `extensions` / `operationName` of
                         the wrong type, no query, a refused batch, a content type other than application/json,
                         a subscription (they need the WebSocket)
    405     BAD_REQUEST  a mutation by GET (graphql-over-http: MUST be 405), or a
                         method other than GET and POST; `Allow` says what is
    404     NOT_FOUND    GET without a query while GraphiQL is off
    200     PERSISTED_QUERY_NOT_FOUND  a persisted query's hash the caller's key has
                         not registered (memlattice.server.persisted_queries)
    429     RATE_LIMITED the API key is over its request rate, concurrency or cost
                         budget (memlattice.server.throttle); `Retry-After` says when

Request errors carry no `data` entry (graphql-over-http: the request was not
executed). The answer's media type follows `Accept` (memlattice.server.media_types):
as application/json, a well-formed request is answered 200, errors or not:
syntax errors and an unknown or missing `operationName` (BAD_REQUEST),
VALIDATION, and UNAVAILABLE too; as application/graphql-response+json, an
operation refused before it ran (syntax, validation, variable coercion,
operation selection, TOO_COMPLEX) is a 400 without `data` (see docs/api.md,
"Errors").
"""

from __future__ import annotations

import json
from typing import Any

from cross_web import AsyncHTTPRequestAdapter, HTTPException
from graphql import GraphQLError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send
from strawberry.exceptions import MissingQueryError
from strawberry.http import GraphQLRequestData
from strawberry.http.parse_content_type import parse_content_type
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.types import ExecutionResult
from strawberry.types.graphql import OperationType

from memlattice.core import nesting
from memlattice.core.errors import BadRequest, RateLimited
from memlattice.server.http_auth import principal_of
from memlattice.server.media_types import GRAPHQL_RESPONSE, JSON, negotiate, ran
from memlattice.server.observability.logs import REQUEST_ID
from memlattice.server.persisted_queries import (
    ANSWER_HEADERS,
    PersistedQueries,
    PersistedQueryMiss,
)

# Per request, in the ASGI scope: the negotiated media type, and for each result
# whether its operation ran.
MEDIA_TYPE_KEY = "memlattice.media_type"
RAN_KEY = "memlattice.ran"

RATE_LIMITED_STATUS = 429
SUBSCRIPTION_OVER_HTTP = (
    "subscriptions are not served over HTTP: open a WebSocket on /graphql with the"
    " graphql-transport-ws protocol")


class RequestRefused(HTTPException):
    """A request error with its code, extra extensions and response headers."""

    def __init__(self, status_code: int, reason: str, *, code: str = "BAD_REQUEST",
                 headers: dict[str, str] | None = None, **details: Any) -> None:
        super().__init__(status_code, reason)
        self.code = code
        self.headers = headers or {}
        self.details = details


class TooDeepJSON(json.JSONDecodeError):
    """JSON over the nesting limit. A JSONDecodeError, so strawberry's WebSocket
    handler closes the socket for it as it does for any message that is not JSON."""

    def __init__(self, refused: nesting.TooDeep, doc: str) -> None:
        super().__init__(str(refused), doc, 0)
        self.refused = refused


def refusal_body(message: str, code: str, **details: Any) -> dict[str, Any]:
    """The GraphQL-shaped body of a request error (no `data`: nothing ran)."""
    extensions: dict[str, Any] = {"code": code, **details}
    request_id = REQUEST_ID.get()
    if request_id:
        extensions["requestId"] = request_id
    return {"errors": [{"message": message, "extensions": extensions}]}


def refusal(exc: HTTPException, media_type: str = JSON) -> Response:
    """The JSON response for a request error strawberry or this module raised."""
    if isinstance(exc, RequestRefused):
        code, headers, details = exc.code, exc.headers, exc.details
    else:
        code = "NOT_FOUND" if exc.status_code == 404 else "BAD_REQUEST"
        headers = {"Allow": "GET, POST"} if exc.status_code == 405 else {}
        details = {}
    return JSONResponse(refusal_body(exc.reason, code, **details),
                        status_code=exc.status_code, headers=headers, media_type=media_type)


def answer_as(response: Response, scope: Scope) -> Response:
    """A GraphQL answer in the negotiated media type: 400 under
    application/graphql-response+json when no operation of it ran."""
    media_type = scope.get(MEDIA_TYPE_KEY, JSON)
    if media_type == JSON or not (response.headers.get("content-type") or "").startswith(JSON):
        return response  # legacy JSON, or not a GraphQL answer (GraphiQL's page)
    response.headers["content-type"] = media_type
    outcomes = scope.get(RAN_KEY) or []
    if outcomes and not any(outcomes) and response.status_code == 200:
        response.status_code = 400
    return response


def too_many(error: RateLimited) -> RequestRefused:
    """429 for a key over one of its limits (memlattice.server.throttle), `Retry-After`
    in whole seconds; the operation did not run."""
    retry_after = str(error.details.get("retryAfter", 1))
    return RequestRefused(RATE_LIMITED_STATUS, error.message, code=error.code,
                          headers={"Retry-After": retry_after}, **error.details)


def _request_data(item: Any, *, batched: bool) -> GraphQLRequestData:
    """One operation's request, its fields' JSON types checked."""
    where = "each operation of a batch" if batched else "the request body"
    if not isinstance(item, dict):
        raise RequestRefused(400, f"{where} must be a JSON object with a `query`")
    for name, kinds, what in (("query", (str,), "a string"),
                              ("operationName", (str,), "a string"),
                              ("variables", (dict,), "an object"),
                              ("extensions", (dict,), "an object")):
        value = item.get(name)
        if value is not None and not isinstance(value, kinds):
            raise RequestRefused(400, f"`{name}` must be {what} or null, if provided")
    return GraphQLRequestData(query=item.get("query"), variables=item.get("variables"),
                              operation_name=item.get("operationName"),
                              extensions=item.get("extensions"), protocol="http")


class CodedHTTP:
    """A mixin for `strawberry.asgi.GraphQL` (before it in the bases)."""

    persisted_queries: PersistedQueries = PersistedQueries(0)

    def should_render_graphql_ide(self, request: Any) -> bool:
        """GraphiQL for a browser's GET without a query, but not for a GET that
        names a persisted query's hash instead (Apollo's hashed GETs)."""
        return ("extensions" not in request.query_params
                and super().should_render_graphql_ide(request))  # type: ignore[misc]

    def persisted_document(self, request: Request, request_data: GraphQLRequestData
                           ) -> str | None:
        """The document to run: the request's own, or the one its persisted-query
        hash stands for (memlattice.server.persisted_queries), per key."""
        principal = principal_of(request.scope)
        owner = principal.key_id or principal.name
        try:
            return self.persisted_queries.resolve(owner, request_data.query,
                                                  request_data.extensions)
        except BadRequest as exc:
            raise RequestRefused(400, exc.message, **exc.details) from None
        except PersistedQueryMiss as miss:
            raise RequestRefused(200, miss.message, code=miss.code,
                                 headers=dict(ANSWER_HEADERS)) from None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)  # type: ignore[misc]
            return
        request = Request(scope=scope, receive=receive)
        media_type = scope[MEDIA_TYPE_KEY] = negotiate(request.headers.get("accept"))
        scope[RAN_KEY] = []
        try:
            response = answer_as(await self.run(request), scope)  # type: ignore[attr-defined]
        except HTTPException as exc:
            metrics = getattr(self, "metrics", None)
            response = refusal(exc, media_type)
            if metrics is not None:
                metrics.error(exc.code if isinstance(exc, RequestRefused) else
                              ("NOT_FOUND" if exc.status_code == 404 else "BAD_REQUEST"))
        await response(scope, receive, send)

    async def process_result(self, request: Request, result: ExecutionResult) -> Any:
        """Under application/graphql-response+json, an operation that never ran has
        no `data` entry; `answer_as` gives its answer the status."""
        body = await super().process_result(request, result)  # type: ignore[misc]
        executed = ran(result)
        request.scope.setdefault(RAN_KEY, []).append(executed)
        if not executed and request.scope.get(MEDIA_TYPE_KEY) == GRAPHQL_RESPONSE:
            body.pop("data", None)
        return body

    def decode_json(self, data: str | bytes) -> object:
        """JSON of at most MAX_REQUEST_DEPTH levels; HTTP bodies and WebSocket
        messages both come through here."""
        try:
            return nesting.loads(data, "the request")
        except nesting.TooDeep as exc:
            raise TooDeepJSON(exc, data if isinstance(data, str) else "") from None
        except UnicodeDecodeError as exc:
            raise json.JSONDecodeError("the body is not UTF-8", "", exc.start) from None

    def parse_json(self, data: str | bytes) -> Any:
        try:
            return self.decode_json(data)
        except TooDeepJSON as exc:
            raise RequestRefused(400, str(exc.refused), limit=exc.refused.limit) from None
        except json.JSONDecodeError as exc:
            raise RequestRefused(400, f"the body is not JSON: {exc.msg}") from None

    async def parse_http_body(
        self, request: AsyncHTTPRequestAdapter
    ) -> GraphQLRequestData | list[GraphQLRequestData]:
        """GET query parameters or a POSTed application/json body; nothing else
        (multipart uploads and streamed HTTP subscriptions are not served)."""
        content_type, _ = parse_content_type(request.content_type or "")
        if request.method == "GET":
            data: Any = self.parse_query_params(request.query_params)  # type: ignore[attr-defined]
        elif "application/json" in content_type:
            data = self.parse_json(await request.get_body())
        else:
            raise RequestRefused(400, "send the request as application/json (or a GET with"
                                      " `query` in the URL)", contentType=content_type or None)
        if isinstance(data, list):
            self._validate_batch_request(data, protocol="http")  # type: ignore[attr-defined]
            return [_request_data(item, batched=True) for item in data]
        return _request_data(data, batched=False)

    async def execute_single(
        self, request: Any, request_adapter: AsyncHTTPRequestAdapter, sub_response: Any,
        context: Any, root_value: Any, request_data: GraphQLRequestData,
    ) -> ExecutionResult:
        """Queries by GET, queries and mutations by POST, subscriptions never."""
        get = request_adapter.method == "GET"
        allowed = {OperationType.QUERY} if get else {OperationType.QUERY,
                                                     OperationType.MUTATION}
        document = self.persisted_document(request, request_data)
        try:
            result: ExecutionResult = await self.schema.execute(  # type: ignore[attr-defined]
                document, root_value=root_value,
                variable_values=request_data.variables, context_value=context,
                operation_name=request_data.operation_name, allowed_operation_types=allowed,
                operation_extensions=request_data.extensions)
        except CannotGetOperationTypeError as exc:
            # A request error of a well-formed request: 200, like a document that
            # names two operations and no `operationName` (resolvers.documents).
            error = BadRequest(exc.as_http_error_reason())
            return ExecutionResult(data=None, errors=[GraphQLError(
                error.message, original_error=error, extensions=error.extensions())])
        except InvalidOperationTypeError as exc:
            if exc.operation_type is OperationType.SUBSCRIPTION:
                raise RequestRefused(400, SUBSCRIPTION_OVER_HTTP,
                                     transport="graphql-transport-ws") from None
            raise RequestRefused(405, "mutations are not allowed by GET; send them by POST",
                                 headers={"Allow": "POST"}) from None
        except MissingQueryError:
            raise RequestRefused(400, "the request has no `query`") from None
        for refused in result.errors or ():
            if isinstance(refused.original_error, RateLimited):  # its key's cost budget
                raise too_many(refused.original_error) from None
        return result
