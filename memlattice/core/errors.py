"""The one exception tree of Memlattice.

    MemlatticeError                 code            when
    ├── BadRequest                  BAD_REQUEST     the request itself is malformed: not a
    │                                               GraphQL-over-HTTP request, unparsable or
    │                                               too deeply nested, no or an ambiguous
    │                                               operation, a subscription over HTTP
    │   └── BadBookmark             BAD_BOOKMARK    an `x-memlattice-bookmark` header that is
    │                                               not one this service (or Neo4j) can read
    ├── ValidationError             VALIDATION      input is malformed; nothing was written
    │   ├── DimensionMismatch       DIMENSION_MISMATCH  a vector of the wrong length
    │   └── EmbeddingModelMismatch  EMBEDDING_MODEL_MISMATCH  a backup's memories were
    │                                               embedded by another model than this
    │                                               server's (`memlattice restore`)
    ├── NotFound                    NOT_FOUND       the id does not exist (or is expired, or
    │                                               belongs to another namespace)
    ├── VersionConflict             VERSION_CONFLICT  expectedVersion is stale
    ├── Conflict                    CONFLICT        the write collides with the graph's state
    │   └── EpisodicImmutable       EPISODIC_IMMUTABLE  a revision of an episodic record
    ├── Unavailable                 UNAVAILABLE     Neo4j (or the embedder) cannot be reached
    ├── TooComplex                  TOO_COMPLEX     the query is deeper, wider or costlier than
    │                                               the configured limits allow
    ├── Timeout                     TIMEOUT         the request ran past its time budget
    ├── RateLimited                 RATE_LIMITED    the API key is over its request rate,
    │                                               concurrency, live-subscription or cost
    │                                               limit (HTTP 429, `Retry-After`)
    ├── PayloadTooLarge             PAYLOAD_TOO_LARGE  the request body is over the size limit
    ├── Unauthenticated             UNAUTHENTICATED no API key, or one that is unknown or revoked
    ├── Forbidden                   FORBIDDEN       the key may not do this (namespace, write,
    │                                               scope above its maximum, sensitivity above
    │                                               its clearance, admin only)
    └── ProvisioningError           PROVISIONING    local Neo4j could not be set up

Every error carries a stable `code` that the GraphQL layer copies into
`extensions.code`, and a message a person can act on. Driver exceptions are
translated inside `graph/` with `raise ... from exc`, so nothing above it ever
sees a `neo4j.exceptions` type.
"""

from __future__ import annotations

from typing import Any


class MemlatticeError(Exception):
    """Root of every error Memlattice raises on purpose."""

    code: str = "INTERNAL"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def extensions(self) -> dict[str, Any]:
        """The JSON-safe payload for a GraphQL error's `extensions`."""
        return {"code": self.code, **self.details}


class BadRequest(MemlatticeError):
    code = "BAD_REQUEST"


class BadBookmark(BadRequest):
    """A causal bookmark the request carries cannot be used: nothing ran for it."""

    code = "BAD_BOOKMARK"


class ValidationError(MemlatticeError):
    code = "VALIDATION"


class DimensionMismatch(ValidationError):
    code = "DIMENSION_MISMATCH"


class EmbeddingModelMismatch(ValidationError):
    """Vectors of another embedding model than the server's: of the same size, they
    would be indexed and compared with queries embedded by this one, and mean nothing."""

    code = "EMBEDDING_MODEL_MISMATCH"


class NotFound(MemlatticeError):
    code = "NOT_FOUND"


class VersionConflict(MemlatticeError):
    code = "VERSION_CONFLICT"


class Conflict(MemlatticeError):
    code = "CONFLICT"


class EpisodicImmutable(Conflict):
    """Episodes are what happened: they are never updated, superseded or merged."""

    code = "EPISODIC_IMMUTABLE"


class Unavailable(MemlatticeError):
    code = "UNAVAILABLE"


class TooComplex(MemlatticeError):
    code = "TOO_COMPLEX"


class Timeout(MemlatticeError):
    code = "TIMEOUT"


class RateLimited(MemlatticeError):
    """A key over one of its limits (memlattice.core.fairness); `retryAfter` says when
    to try again, in seconds, as the HTTP `Retry-After` header does."""

    code = "RATE_LIMITED"


class PayloadTooLarge(MemlatticeError):
    code = "PAYLOAD_TOO_LARGE"


class Unauthenticated(MemlatticeError):
    code = "UNAUTHENTICATED"


class Forbidden(MemlatticeError):
    code = "FORBIDDEN"


class ProvisioningError(MemlatticeError):
    code = "PROVISIONING"


__all__ = [
    "BadBookmark",
    "BadRequest",
    "Conflict",
    "DimensionMismatch",
    "EmbeddingModelMismatch",
    "EpisodicImmutable",
    "MemlatticeError",
    "NotFound",
    "PayloadTooLarge",
    "ProvisioningError",
    "Timeout",
    "TooComplex",
    "Unauthenticated",
    "Unavailable",
    "ValidationError",
    "VersionConflict",
]
