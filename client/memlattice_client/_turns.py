"""Waiting for a turn: how long a client waits before sending a refused request again.

The server refuses a request that is over its key's limits, or that a busy process
puts behind another key's work, before anything runs (HTTP 429, RATE_LIMITED, with
`Retry-After`). Sending it again unchanged once that time has passed is therefore
safe for a query and for a mutation alike. A caller bounds the waits in all (its
patience): a key told to wait longer than that gets the error at once.
"""

from __future__ import annotations

from memlattice_client._errors import RateLimitedError

# Seconds one request may wait, in all, for its turn when the server answers 429.
DEFAULT_PATIENCE_S = 10.0


def next_wait(refused: RateLimitedError, waited: float, patience: float) -> float | None:
    """Seconds to wait before sending `refused`'s request again, having waited `waited`
    already; None: the wait would pass `patience`, so raise it."""
    wait = refused.retry_after or 1.0
    return wait if waited + wait <= patience else None
