"""The client's one exception tree; every GraphQL error code has its class.

    MemlatticeError                 (any code this client does not know)
    ├── ValidationError             VALIDATION, BAD_REQUEST
    │   ├── DimensionMismatchError  DIMENSION_MISMATCH
    │   └── BadBookmarkError        BAD_BOOKMARK (the causal bookmark sent is unusable)
    ├── NotFoundError               NOT_FOUND
    ├── VersionConflictError        VERSION_CONFLICT
    ├── ConflictError               CONFLICT
    │   └── EpisodicImmutableError  EPISODIC_IMMUTABLE (episodes are never revised)
    ├── UnauthenticatedError        UNAUTHENTICATED (no key, unknown or revoked key)
    ├── ForbiddenError              FORBIDDEN (the key may not touch that namespace)
    ├── LimitError                  the request exceeds a server limit; shrink it
    │   ├── TooComplexError         TOO_COMPLEX (deeper, wider or costlier than allowed)
    │   └── PayloadTooLargeError    PAYLOAD_TOO_LARGE
    ├── UnavailableError            UNAVAILABLE, and every transport failure
    │   ├── RequestTimeoutError     TIMEOUT (the server's time budget, or the client's)
    │   └── RateLimitedError        RATE_LIMITED (HTTP 429: the key is over one of its
    │                               limits; `.retry_after` says when to try again)
    └── InternalError               INTERNAL (the server logged it)

Each carries `.code`, `.message`, `.path` (the GraphQL path, or None) and
`.extensions` (everything the server put there), so callers can branch on the
class and log the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class MemlatticeError(Exception):
    """Root of every error the client raises."""

    code: str = "UNKNOWN"

    def __init__(
        self, message: str, *, code: str | None = None, path: Sequence[str | int] | None = None,
        extensions: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.path = list(path) if path is not None else None
        self.extensions: dict[str, Any] = dict(extensions or {})

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class ValidationError(MemlatticeError):
    code = "VALIDATION"


class DimensionMismatchError(ValidationError):
    code = "DIMENSION_MISMATCH"


class BadBookmarkError(ValidationError):
    """The `x-memlattice-bookmark` sent was refused; nothing ran. A client that
    carries bookmarks itself forgets the refused one, so a retry runs without it."""

    code = "BAD_BOOKMARK"


class NotFoundError(MemlatticeError):
    code = "NOT_FOUND"


class VersionConflictError(MemlatticeError):
    code = "VERSION_CONFLICT"


class ConflictError(MemlatticeError):
    code = "CONFLICT"


class EpisodicImmutableError(ConflictError):
    code = "EPISODIC_IMMUTABLE"


class UnauthenticatedError(MemlatticeError):
    code = "UNAUTHENTICATED"


class ForbiddenError(MemlatticeError):
    code = "FORBIDDEN"


class UnavailableError(MemlatticeError):
    code = "UNAVAILABLE"


class RequestTimeoutError(UnavailableError):
    code = "TIMEOUT"


class RateLimitedError(UnavailableError):
    """The API key is over its request rate, concurrency or cost budget: try again later."""

    code = "RATE_LIMITED"

    @property
    def retry_after(self) -> float | None:
        """Seconds to wait before trying again, as the server said (`Retry-After`)."""
        value = self.extensions.get("retryAfter")
        return float(value) if isinstance(value, int | float) else None


class LimitError(MemlatticeError):
    """The request is over one of the server's limits; retrying it unchanged will fail."""


class TooComplexError(LimitError):
    code = "TOO_COMPLEX"


class PayloadTooLargeError(LimitError):
    code = "PAYLOAD_TOO_LARGE"


class InternalError(MemlatticeError):
    code = "INTERNAL"


ERRORS_BY_CODE: dict[str, type[MemlatticeError]] = {
    "VALIDATION": ValidationError,
    "BAD_REQUEST": ValidationError,
    "DIMENSION_MISMATCH": DimensionMismatchError,
    "BAD_BOOKMARK": BadBookmarkError,
    "NOT_FOUND": NotFoundError,
    "VERSION_CONFLICT": VersionConflictError,
    "CONFLICT": ConflictError,
    "EPISODIC_IMMUTABLE": EpisodicImmutableError,
    "TOO_COMPLEX": TooComplexError,
    "PAYLOAD_TOO_LARGE": PayloadTooLargeError,
    "TIMEOUT": RequestTimeoutError,
    "UNAUTHENTICATED": UnauthenticatedError,
    "FORBIDDEN": ForbiddenError,
    "UNAVAILABLE": UnavailableError,
    "RATE_LIMITED": RateLimitedError,
    "INTERNAL": InternalError,
}

_BY_HTTP_STATUS: dict[int, type[MemlatticeError]] = {
    400: ValidationError, 401: UnauthenticatedError, 403: ForbiddenError, 404: NotFoundError,
    409: ConflictError, 413: PayloadTooLargeError, 429: RateLimitedError,
}


def error_from_graphql(error: Mapping[str, Any]) -> MemlatticeError:
    """The typed exception for one entry of a GraphQL response's `errors`."""
    extensions = error.get("extensions") or {}
    code = str(extensions.get("code") or "UNKNOWN")
    cls = ERRORS_BY_CODE.get(code, MemlatticeError)
    return cls(str(error.get("message") or code), code=code, path=error.get("path"),
               extensions=extensions)


def error_from_status(status: int, text: str) -> MemlatticeError:
    """An HTTP failure that carried no GraphQL errors (a proxy, an auth layer, a crash)."""
    cls = _BY_HTTP_STATUS.get(status, UnavailableError if status >= 500 else MemlatticeError)
    message = f"HTTP {status}: {text.strip()[:500] or 'no body'}"
    return cls(message, code=cls.code if cls is not MemlatticeError else f"HTTP_{status}")
