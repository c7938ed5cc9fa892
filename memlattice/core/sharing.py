"""Sharing a busy process among the API keys that want it (pure, no I/O).

A key's own limits (memlattice.core.fairness) say how much it may ask of a
process at most, whoever else is served. A key whose limits are generous (the
defaults are a backstop far above what a process serves) can still take a whole
process: its operations queue in the event loop, in Neo4j's threads and for the
driver's connections, and every other key's wait behind them.

`capacity` is the number of HTTP operations in flight (all keys together) at
which the process counts as busy: beyond it, more at once only lengthens each of
them. While the process is busy, a key may start another operation only if it
has fewer in flight than some other active key: the key with the most in flight
is refused (HTTP 429, RATE_LIMITED, limit `share`), every lighter key, and a
key with none, goes first. Under saturation the keys converge on equal numbers
in flight (max-min fairness over the process's operations), so a key that asks
for little is not refused because of another's flood, and waits for at most
what is already running.

- A key alone is never refused here: with no other key active it has the whole
  process, up to its own limits, busy or not.
- A process that is not busy refuses no one.
- A key is active while it has operations in flight, and for `active_s` after
  its last one ended: a tenant that pauses between requests keeps its place,
  or the flood would take the process back in each pause.
- Only HTTP operations count: a WebSocket's live subscriptions are long and
  mostly idle, and have their own allowance per key (`streams`).

Nothing is shared between processes: each shares its own capacity among the
keys its requests come from, so `capacity` is per process, whatever
`MEMLATTICE_FAIRNESS_PROCESSES` says.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memlattice.core.fairness import Limit, Refusal

# How long a key counts as active after its last operation ended.
ACTIVE_S = 1.0


@dataclass
class ProcessShare:
    """The process's operations in flight per key, and who goes first while it is busy.

    `start` when an operation is admitted, `end` when it ends (exactly once each);
    `refusal` before `start`. None as `capacity`: never busy (sharing off).
    """

    capacity: int | None
    active_s: float = ACTIVE_S
    total: int = 0
    _in_flight: dict[str, int] = field(default_factory=dict)
    # Every key seen active: when it last started or ended an operation.
    _last: dict[str, float] = field(default_factory=dict)

    @property
    def busy(self) -> bool:
        return self.capacity is not None and self.total >= self.capacity

    def in_flight(self, key: str) -> int:
        return self._in_flight.get(key, 0)

    def refusal(self, key: str, now: float) -> Refusal | None:
        """Why `key` may not start an operation now (limit `share`), or None."""
        if not self.busy:
            return None
        mine = self.in_flight(key)
        heaviest = self.heaviest_other(key, now)
        if heaviest is None or mine < heaviest:
            return None
        return Refusal(Limit.SHARE, 1.0, "this server process is busy ("
                       f"{self.total} operations in flight, its capacity {self.capacity})"
                       f" and this API key has the most of them ({mine}): other keys'"
                       " operations go first; try again")

    def heaviest_other(self, key: str, now: float) -> int | None:
        """The most operations in flight of another active key (0 for one that is
        active but between operations); None when no other key is active."""
        heaviest: int | None = None
        gone = []
        for other, last in self._last.items():
            if other == key:
                continue
            count = self._in_flight.get(other, 0)
            if count == 0 and now - last >= self.active_s:
                gone.append(other)
                continue
            heaviest = count if heaviest is None else max(heaviest, count)
        for other in gone:
            del self._last[other]
        return heaviest

    def start(self, key: str, now: float) -> None:
        self._in_flight[key] = self._in_flight.get(key, 0) + 1
        self.total += 1
        self._last[key] = now

    def end(self, key: str, now: float) -> None:
        count = self._in_flight.get(key, 0)
        if count <= 0:
            return
        if count == 1:
            del self._in_flight[key]
        else:
            self._in_flight[key] = count - 1
        self.total -= 1
        self._last[key] = max(now, self._last.get(key, now))
