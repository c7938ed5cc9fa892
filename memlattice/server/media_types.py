"""GraphQL over HTTP's two response media types, and which one a request gets.

    application/graphql-response+json   what current clients (Apollo Client 4,
                                        graphql-http, GraphiQL) ask for first: an
                                        operation that never ran (a syntax error,
                                        a validation or variable-coercion failure,
                                        an unknown operation, a limit) is a 4xx
                                        with no `data` entry, so a client tells
                                        "refused" from "ran and failed" by status
    application/json                    the legacy type, for clients that do not
                                        ask for the other: 200 for every
                                        well-formed request, `data: null` included

The `Accept` header decides, by its q-values; at an equal q an explicit
`application/graphql-response+json` wins over an explicit `application/json`,
and a wildcard alone (`*/*`), no header, or a header naming neither type
gets `application/json` (the spec lets a server disregard an `Accept` it
cannot satisfy rather than answer 406). UNAVAILABLE and TIMEOUT ran (or were
about to) and are the service's trouble, not the request's: they keep `data:
null` and 200 under both types (see memlattice.server.http_auth).
"""

from __future__ import annotations

from graphql import GraphQLError
from strawberry.types import ExecutionResult
from strawberry.types.execution import PreExecutionError

GRAPHQL_RESPONSE = "application/graphql-response+json"
JSON = "application/json"
# The service's own trouble: the operation was accepted, so the answer keeps `data`.
_SERVICE_CODES = frozenset({"UNAVAILABLE", "TIMEOUT"})
# Raised by the service's own checks before anything runs (limits, operation choice).
_REFUSAL_CODES = frozenset({"TOO_COMPLEX", "BAD_REQUEST"})


def _ranges(accept: str) -> list[tuple[str, float]]:
    """The media ranges of an Accept header with their q-values (parameters dropped)."""
    ranges = []
    for part in accept.split(","):
        kind, *params = (piece.strip() for piece in part.split(";"))
        if not kind:
            continue
        quality = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        ranges.append((kind.lower(), quality))
    return ranges


def _preference(media_type: str, ranges: list[tuple[str, float]]) -> tuple[float, int]:
    """(q, specificity) of the most specific range that matches: 2 exact, 1 `type/*`, 0 `*/*`."""
    best = (0.0, -1)
    major = media_type.split("/")[0]
    for kind, quality in ranges:
        specificity = 2 if kind == media_type else 1 if kind == f"{major}/*" else (
            0 if kind == "*/*" else -1)
        if specificity > best[1]:
            best = (quality, specificity)
    return best


def negotiate(accept: str | None) -> str:
    """The media type to answer a request whose `Accept` header is `accept`."""
    if not accept:
        return JSON
    ranges = _ranges(accept)
    modern, legacy = _preference(GRAPHQL_RESPONSE, ranges), _preference(JSON, ranges)
    if modern[0] > 0 and modern[1] == 2 and modern[0] >= legacy[0]:
        return GRAPHQL_RESPONSE
    if legacy[0] <= 0 < modern[0]:
        return GRAPHQL_RESPONSE
    return JSON


def _code(error: GraphQLError) -> object:
    return (error.extensions or {}).get("code")


def _refusal(error: GraphQLError) -> bool:
    """An error of a request refused before execution: graphql-core's own (variable
    coercion: no path, no exception behind it), or a limit or request check's. An
    error a resolver raised has an exception behind it, and mostly a path."""
    return error.path is None and (error.original_error is None
                                   or _code(error) in _REFUSAL_CODES)


def ran(result: ExecutionResult) -> bool:
    """Whether an answer reports an operation that ran (its body keeps `data`):
    False for one refused before execution (parse, validation, variable coercion,
    operation selection, limits)."""
    errors = result.errors or []
    if any(_code(error) in _SERVICE_CODES for error in errors):
        return True
    if isinstance(result, PreExecutionError):
        return False
    if result.data is not None or not errors:
        return True
    return not all(_refusal(error) for error in errors)
