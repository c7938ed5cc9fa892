"""The process's limiter on the process's clock, asked per principal (no I/O).

memlattice.core.fairness decides; this is what the server holds (memlattice.server
.throttle): the decisions on the process's clock, told to the metrics, plus the
early refusal that keeps a flood's refusals from costing a Neo4j read. Kept apart
from the pure decisions so each module reads on its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from memlattice.core.fairness import Limit, Limiter, Refusal

if TYPE_CHECKING:  # core.auth imports core.fairness, as this module does
    from memlattice.core.auth import Principal


# How long a key's last authentication lets its refusals skip the Neo4j look-up.
EARLY_REFUSAL_S = 1.0


def key_of(principal: Principal) -> str:
    """The name a principal's limits are kept under: its key id (keyless: one caller)."""
    return principal.key_id or "keyless"


class Gate:
    """The process's Limiter on the process's clock, asked per principal; `refused` is
    told of every refusal (the metrics), `counts` of every change in flight, `charged`
    of every cost charged (what a key's budget is spent on, to size it by)."""

    def __init__(self, limiter: Limiter, *, clock: Callable[[], float] = time.monotonic,
                 refused: Callable[[str, Refusal], None] | None = None,
                 counts: Callable[[str, int, int], None] | None = None,
                 charged: Callable[[str, float], None] | None = None,
                 early_s: float = EARLY_REFUSAL_S) -> None:
        self.limiter = limiter
        self.clock = clock
        self._refused = refused
        self._counts = counts
        self._charged = charged
        self.early_s = early_s
        # key id -> (fingerprint of the secret it authenticated with, when)
        self._seen: dict[str, tuple[str, float]] = {}
        # key -> when it was last refused (its client was told to wait)
        self._refused_at: dict[str, float] = {}

    def seen(self, principal: Principal, fingerprint: str) -> None:
        """Note that `principal` just authenticated with the secret of `fingerprint`."""
        if principal.key_id is not None:
            self._seen[principal.key_id] = (fingerprint, self.clock())

    def early(self, key_id: str, fingerprint: str) -> Refusal | None:
        """Refuse, before the key is looked up in Neo4j, a request of a key that
        authenticated with this very secret less than `early_s` ago and would be
        refused now anyway: a flood's refusals then cost no database read. A key
        revoked or given other limits meanwhile is judged anew once the window ends;
        a forged secret never matches the fingerprint, so it cannot spend a key's
        budget."""
        seen = self._seen.get(key_id)
        if seen is None or seen[0] != fingerprint:
            return None
        now = self.clock()
        if now - seen[1] >= self.early_s:
            return None
        refusal = self.limiter.peek(key_id, now)
        if refusal is not None and self._refused is not None:
            self._refused(key_id, refusal)
        return refusal

    def refused_lately(self, key_id: str) -> bool:
        """Whether `key_id` was refused less than `early_s` ago: a request of it now
        comes from a client that was told to wait (`Retry-After`, at least a second)
        and did not, which memlattice.server.throttle.RefuseEarly holds. A client
        whose last answer was a success has ignored nothing, and is answered at once."""
        at = self._refused_at.get(key_id)
        return at is not None and self.clock() - at < self.early_s

    def refusal_sent(self, key_id: str) -> None:
        """Note that a refusal of `key_id` was sent just now (after any hold: its
        client may come back only from then)."""
        self._refused_at[key_id] = self.clock()

    def forget(self, key_id: str) -> None:
        """Judge the key's next request after its full check (as the window's end does)."""
        self._seen.pop(key_id, None)

    def admit(self, principal: Principal, *, stream: bool = False,
              waiting: bool = False) -> Refusal | None:
        """Admit one operation, or say why not. `waiting`: the caller waits for its
        turn when refused for `share` and tries again, so that refusal is not reported
        (`refused_turn` reports the one it finally gives up on)."""
        key = key_of(principal)
        refusal = self.limiter.admit(key, principal.limits, self.clock(), stream=stream)
        if waiting and refusal is not None and refusal.limit is Limit.SHARE:
            return refusal
        self._told(key, refusal)
        return refusal

    def refused_turn(self, principal: Principal, refusal: Refusal) -> None:
        """Report the `share` refusal a request waited on and gave up."""
        self._told(key_of(principal), refusal)

    def should_yield(self, principal: Principal) -> bool:
        """Whether a running operation of `principal` should let lighter keys' work go
        first at a stage boundary now (memlattice.core.sharing)."""
        share = self.limiter.share
        return share is not None and share.should_yield(key_of(principal), self.clock())

    def release(self, principal: Principal, *, stream: bool = False) -> None:
        key = key_of(principal)
        self.limiter.release(key, self.clock(), stream=stream)
        self._told(key, None)

    def charge(self, principal: Principal, cost: float) -> Refusal | None:
        key = key_of(principal)
        refusal = self.limiter.charge(key, principal.limits, cost, self.clock())
        if refusal is not None:
            self._refused_at[key] = self.clock()
        if refusal is not None and self._refused is not None:
            self._refused(key, refusal)
        elif refusal is None and self._charged is not None:
            self._charged(key, cost)
        return refusal

    def _told(self, key: str, refusal: Refusal | None) -> None:
        if refusal is not None:
            self._refused_at[key] = self.clock()
        if refusal is not None and self._refused is not None:
            self._refused(key, refusal)
        if self._counts is not None:
            self._counts(key, *self.limiter.in_flight(key))
