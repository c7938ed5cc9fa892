"""How long a request of a busy process waits for its turn (pure, no I/O).

memlattice.core.sharing decides whose turn it is; memlattice.server.throttle.Turns
does the waiting; this decides for how long, before the request is refused 429
(limit `share`).

A request waits `wait_s` for its turn, as long as the `Retry-After` it would get
otherwise. That bound alone refused a client's own parallel requests: on a
process of capacity 1 (two cores with Neo4j beside the service), a page that
sends several searches at once while another tenant is active is the key with
the most work in flight, so its searches run one at a time, each after the one
before; the last waited for all the others, past the bound whenever they took
more than a second (twelve at once, or slower requests: bench.page_bursts), and
was refused, although the key was within its own limits and was being served
all along.

So a key's requests wait in a queue of their own: while a key is being served (an
operation of it ends), its first `queue` waiting requests wait `wait_s` more from
then. A key whose work moves on never has those refused; a key that gets no turn
for `wait_s` (the process crowded by others, which back-off relieves) has them
refused as before. Requests past a key's first `queue` waiting (a flood's dozens
of connections) wait `wait_s` from their arrival only, so a flood is still told to
back off. No request waits longer than `max_wait_s` in all (the request timeout).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Waiter:
    """A request waiting for its turn: its key, when it arrived, and whether it is one
    of its key's first `queue` waiting requests (so each end of the key's operations
    gives it more time)."""

    key: str
    arrived: float
    queued: bool


@dataclass
class TurnWaits:
    """The requests waiting for their turn per key, and when each key was last served.

    `arrive` when a request starts waiting, `leave` when it stops (admitted, refused or
    cancelled; exactly once), `served` when an operation of a key ends; `deadline`
    says until when a waiting request may still wait."""

    wait_s: float
    queue: int
    max_wait_s: float
    _waiting: dict[str, int] = field(default_factory=dict)
    # A key with requests waiting: when one of its operations last ended.
    _served: dict[str, float] = field(default_factory=dict)

    def arrive(self, key: str, now: float) -> Waiter:
        ahead = self._waiting.get(key, 0)
        self._waiting[key] = ahead + 1
        return Waiter(key, now, queued=ahead < self.queue)

    def leave(self, waiter: Waiter) -> None:
        left = self._waiting.get(waiter.key, 0) - 1
        if left > 0:
            self._waiting[waiter.key] = left
        else:
            self._waiting.pop(waiter.key, None)
            self._served.pop(waiter.key, None)

    def served(self, key: str, now: float) -> None:
        """An operation of `key` ended: its queued requests wait `wait_s` from now."""
        if key in self._waiting:
            self._served[key] = now

    def deadline(self, waiter: Waiter) -> float:
        """Until when `waiter` may wait for its turn: `wait_s` after it arrived or, for
        a queued request, after its key was last served; never past `max_wait_s`."""
        start = waiter.arrived
        if waiter.queued:
            start = max(start, self._served.get(waiter.key, start))
        return min(start + self.wait_s, waiter.arrived + self.max_wait_s)
