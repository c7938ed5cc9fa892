"""Sharing a busy process among the API keys that want it (pure, no I/O).

A key's own limits (memlattice.core.fairness) say how much it may ask of a
process at most, whoever else is served. A key whose limits are generous (the
defaults are a backstop far above what a process serves) can still take a whole
process: its operations queue in the event loop, in Neo4j's threads and for the
driver's connections, and every other key's wait behind them.

`capacity` is the number of HTTP operations in flight (all keys together) at
which the process counts as busy: beyond it, more at once only lengthens each of
them. While the process is busy, a key may start another operation only if it
has less work in flight than some other active key: the key with the most is
refused (HTTP 429, RATE_LIMITED, limit `share`), every lighter key, and a key
with none, goes first. A key's work in flight is its operations in flight, each
weighed by what the key's recent operations cost on average (the query-cost
estimates, resolvers.limits, fading as below): a tenant's two cheap searches
are less work than a flood's one dear one, so the tenant's second does not wait
for the flood's to end, while the flood's second waits for the tenant. Under
saturation the keys converge on equal work in flight (max-min fairness over the
process, weighted by cost; among keys whose operations cost alike, equal
numbers in flight), so a key that asks for little is not refused because of
another's flood, and waits for at most what is already running.

- A key alone is never refused here: with no other key active it has the whole
  process, up to its own limits, busy or not.
- A process that is not busy refuses no one.
- A key is active while it has operations in flight, and for `active_s` after
  its last one ended: a tenant that pauses between requests keeps its place,
  or the flood would take the process back in each pause. The place is one
  operation of the key's usual cost: a flood held back by its own limits keeps
  no more than that against a light tenant's second request.
- Requests count (HTTP ones, and queries and mutations sent over a WebSocket);
  live subscriptions do not: they are long and mostly idle, and have their own
  allowance per key (`streams`).

Admission alone leaves what was admitted running side by side to its end: a
flood's admitted search ranks and serializes in the one event loop, and queries
Neo4j on the same cores, while a lighter key's search waits behind it. So an
operation that is already running also gives way, at its stage boundaries
(before and after each driver call, before a search's hits are serialized:
memlattice.core.pacing), while the process holds more operations than its
capacity: `should_yield` says whether an operation of a key should wait there
for a lighter key's operations in flight. Lighter is by recent cost, the query-
cost estimates (resolvers.limits) of what the key asked for (admitted, or refused
by its cost budget: memlattice.core.fairness.Limiter.charge), fading by half every
`cost_half_life_s` (least service asked for, by estimate): a key that asks for
more of the process lets one that asks for less through, whatever their numbers
in flight. Ties give way to no one, so the lightest key in flight never waits
and waiting cannot go round in a circle; every wait is bounded besides
(memlattice.server.throttle). A key alone, and a process within its capacity,
never wait there.

Nothing is shared between processes: each shares its own capacity among the
keys its requests come from, so `capacity` is per process, whatever
`MEMLATTICE_FAIRNESS_PROCESSES` says.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from memlattice.core.fairness import Limit, Refusal

# How long a key counts as active after its last operation ended.
ACTIVE_S = 1.0
# A key's recent cost halves every this many seconds: about the span of a few
# requests, so that the order follows what each key asks for now, not an hour ago.
COST_HALF_LIFE_S = 1.0


@dataclass
class ProcessShare:
    """The process's operations in flight per key, and who goes first while it is busy.

    `start` when an operation is admitted, `end` when it ends (exactly once each);
    `refusal` before `start`; `charge` its estimated cost once measured, and
    `should_yield` at each of its stage boundaries. None as `capacity`: never busy
    (sharing off).
    """

    capacity: int | None
    active_s: float = ACTIVE_S
    cost_half_life_s: float = COST_HALF_LIFE_S
    total: int = 0
    _in_flight: dict[str, int] = field(default_factory=dict)
    # Every key seen active: when it last started or ended an operation.
    _last: dict[str, float] = field(default_factory=dict)
    # Every active key's recent cost, as of when it was last charged, and how many
    # operations it was charged for, fading alike.
    _cost: dict[str, tuple[float, float]] = field(default_factory=dict)
    _operations: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def busy(self) -> bool:
        """Whether one more operation would take the process to its capacity or past."""
        return self.capacity is not None and self.total >= self.capacity

    @property
    def crowded(self) -> bool:
        """Whether more operations than the capacity are running: each only lengthens
        the others', so the order in which they get the cores matters."""
        return self.capacity is not None and self.total > self.capacity

    def in_flight(self, key: str) -> int:
        return self._in_flight.get(key, 0)

    def refusal(self, key: str, now: float) -> Refusal | None:
        """Why `key` may not start an operation now (limit `share`), or None."""
        if not self.busy:
            return None
        mine = self.work(key, now)
        heaviest = self.heaviest_other(key, now)
        if heaviest is None or mine < heaviest:
            return None
        return Refusal(Limit.SHARE, 1.0, "this server process is busy ("
                       f"{_operations(self.total)} in flight, its capacity {self.capacity})"
                       " and this API key has the most work of them in flight"
                       f" ({_operations(self.in_flight(key))}): other keys' operations go"
                       " first; try again")

    def work(self, key: str, now: float) -> float:
        """`key`'s work in flight: its operations in flight, each weighed by what its
        recent operations cost on average (`unit`)."""
        count = self._in_flight.get(key, 0)
        return count * self.unit(key, now) if count else 0.0

    def unit(self, key: str, now: float) -> float:
        """What an operation of `key` has cost lately, on average (its recent cost over
        its recent operations, both fading alike), at least 1: 1 for a key not yet
        charged, so that among keys never charged the work is the count in flight."""
        operations = _faded(self._operations.get(key), now, self.cost_half_life_s)
        if operations <= 0.0:
            return 1.0
        return max(1.0, self.recent_cost(key, now) / operations)

    def heaviest_other(self, key: str, now: float) -> float | None:
        """The most work another active key holds a place for: its work in flight, or,
        between operations, one operation of its usual cost (`unit`); None when no
        other key is active.

        Between operations a key keeps the place of the operation it is about to send,
        not more: a tenant that pauses keeps a place for its next search against a
        flood, and a flood that its own limits hold back between requests holds no
        more than one of its own against the tenant. Counted as nothing (as it was
        until round twelve), a flood that its cost budget kept idle but active made a
        light tenant's second request wait for its first, on a process of capacity 1:
        a key with one light search in flight had "the most work" against an idle
        flood's none."""
        heaviest: float | None = None
        gone = []
        for other, last in self._last.items():
            if other == key:
                continue
            count = self._in_flight.get(other, 0)
            if count == 0 and now - last >= self.active_s:
                gone.append(other)
                continue
            work = max(count, 1) * self.unit(other, now)
            heaviest = work if heaviest is None else max(heaviest, work)
        for other in gone:
            del self._last[other]
            self._cost.pop(other, None)
            self._operations.pop(other, None)
        return heaviest

    def charge(self, key: str, cost: float, now: float) -> None:
        """Add an operation's estimated cost to `key`'s recent cost (and the operation
        to its recent operations)."""
        self._cost[key] = (self.recent_cost(key, now) + max(0.0, cost), now)
        self._operations[key] = (
            _faded(self._operations.get(key), now, self.cost_half_life_s) + 1.0, now)

    def recent_cost(self, key: str, now: float) -> float:
        """`key`'s charged costs, each halved for every `cost_half_life_s` since."""
        return _faded(self._cost.get(key), now, self.cost_half_life_s)

    def should_yield(self, key: str, now: float) -> bool:
        """Whether a running operation of `key`, at a stage boundary, should let another
        key's operations go first: the process is crowded and some other key with an
        operation in flight has asked for less of it lately (a lower recent cost)."""
        if not self.crowded or key not in self._in_flight:
            return False
        mine = self.recent_cost(key, now)
        return any(self.recent_cost(other, now) < mine
                   for other in self._in_flight if other != key)

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


def _faded(amount: tuple[float, float] | None, now: float, half_life_s: float) -> float:
    """An (amount, as of when) halved for every `half_life_s` since."""
    if amount is None:
        return 0.0
    value, stamp = amount
    if value <= 0.0 or now <= stamp:
        return value
    if half_life_s <= 0:
        return 0.0
    return value * math.pow(0.5, (now - stamp) / half_life_s)


def _operations(count: int) -> str:
    """"1 operation", "2 operations": the count as a refusal's message says it."""
    return f"{count} operation{'' if count == 1 else 's'}"
