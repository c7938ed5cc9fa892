"""Causal bookmarks carried from each response to the next request.

Why: behind a load balancer a client's write may go through one service
replica and its next read through another; on a Neo4j cluster that read
could be served by a member that has not applied the write yet. Every
response carries `x-memlattice-bookmark`; a request that sends it back makes
whichever replica serves it wait until the write is visible. A client does
this for you unless created with `causal=False`.

Tokens are opaque. A client whose requests overlap (the async client under
`asyncio.gather`, the sync one shared by threads) keeps the answer of each:
an answer replaces only the tokens its own request was sent with, so no
concurrent write is forgotten, and the next request sends them all (the
server waits for every one and answers with a single token again).
"""

from __future__ import annotations

import threading

HEADER = "x-memlattice-bookmark"
# Past this many overlapping answers, the oldest are dropped so the header stays
# well inside the server's limit (128 bookmarks); only a client with more requests
# in flight at once than this can lose causality for the oldest of them.
MAX_TOKENS = 64


def _tokens(value: str | None) -> list[str]:
    return [t.strip() for t in (value or "").split(",") if t.strip()]


class CausalChain:
    """The tokens a client sends with its next request (thread-safe)."""

    def __init__(self, initial: str | None = None) -> None:
        self._lock = threading.Lock()
        # A dict keeps the order tokens were received in, oldest first.
        self._tokens: dict[str, None] = dict.fromkeys(_tokens(initial))

    @property
    def value(self) -> str | None:
        """The header value to send now; None when there is nothing to wait for."""
        with self._lock:
            return ",".join(self._tokens) or None

    def outgoing(self) -> tuple[str, ...]:
        """A snapshot of the tokens a request is about to send."""
        with self._lock:
            return tuple(self._tokens)

    def advance(self, sent: tuple[str, ...], received: str | None) -> None:
        """A response to a request sent with `sent` carried `received`."""
        fresh = _tokens(received)
        if not fresh:
            return
        with self._lock:
            for token in sent:
                self._tokens.pop(token, None)
            for token in fresh:
                self._tokens.pop(token, None)
                self._tokens[token] = None
            while len(self._tokens) > MAX_TOKENS:
                del self._tokens[next(iter(self._tokens))]

    def forget(self, sent: tuple[str, ...]) -> None:
        """The server refused `sent` (BAD_BOOKMARK): stop sending them."""
        with self._lock:
            for token in sent:
                self._tokens.pop(token, None)
