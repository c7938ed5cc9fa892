"""The one exception tree of Memlattice.

    MemlatticeError                 code            when
    ├── ValidationError             VALIDATION      input is malformed; nothing was written
    │   └── DimensionMismatch       DIMENSION_MISMATCH  a vector of the wrong length
    ├── NotFound                    NOT_FOUND       the id does not exist (or is expired, or
    │                                               belongs to another namespace)
    ├── VersionConflict             VERSION_CONFLICT  expectedVersion is stale
    ├── Conflict                    CONFLICT        the write collides with the graph's state
    ├── Unavailable                 UNAVAILABLE     Neo4j (or the embedder) cannot be reached
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


class ValidationError(MemlatticeError):
    code = "VALIDATION"


class DimensionMismatch(ValidationError):
    code = "DIMENSION_MISMATCH"


class NotFound(MemlatticeError):
    code = "NOT_FOUND"


class VersionConflict(MemlatticeError):
    code = "VERSION_CONFLICT"


class Conflict(MemlatticeError):
    code = "CONFLICT"


class Unavailable(MemlatticeError):
    code = "UNAVAILABLE"


class ProvisioningError(MemlatticeError):
    code = "PROVISIONING"


__all__ = [
    "Conflict",
    "DimensionMismatch",
    "MemlatticeError",
    "NotFound",
    "ProvisioningError",
    "Unavailable",
    "ValidationError",
    "VersionConflict",
]
