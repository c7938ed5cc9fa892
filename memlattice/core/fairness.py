"""Fairness between tenants: what one API key may ask of one process (pure, no I/O).

Three limits per key, each refused with a `Refusal` that says which and when to
come back (HTTP 429 with `Retry-After`, GraphQL code RATE_LIMITED):

    rate         requests per second, with a burst: a token bucket of `burst`
                 tokens refilled at `rate` a second; each request (and each
                 WebSocket operation) takes one
    concurrent   operations of the key in flight at once (HTTP requests and
                 queries or mutations sent over a WebSocket); a WebSocket
                 subscription holds a slot of its own allowance, `streams`,
                 for as long as it is open, so idle live streams never lock
                 a key out of its requests (and a flood of them is bounded too)
    cost         the query-cost analysis's estimate (resolvers.limits), from a
                 bucket of `cost_burst` refilled at `cost_rate` a second; an
                 operation is admitted when the bucket holds its cost (or is
                 full, for one dearer than the whole bucket) and may leave it
                 in debt, which later operations wait out. A key that sets its
                 own `rate` but no cost budget of its own gets its request
                 budget priced at `request_cost` a request: its rate counts
                 requests of ordinary size, and one that asks for ten times as
                 much uses ten requests' worth. Counting requests alone let a
                 key whose every search asks for 250 candidates per index take
                 as much of Neo4j as one asking for 50 at five times its rate,
                 and the other tenants wait behind queries no turn-taking in
                 the service can pause once they run. A key that sets no rate
                 has the server's default cost budget, a backstop

and one that is the process's, not the key's: `share`, while the process is busy,
refuses the key with the most work in flight so that the others go first
(memlattice.core.sharing).

Several processes: each enforces its share of every limit, `limits.share(n)`
for n processes (`MEMLATTICE_FAIRNESS_PROCESSES`; `memlattice serve --workers`
sets it). The shares add up to at most the key's limit, whatever process a
request lands on, and cost nothing on the request path: no Neo4j round trip,
no lock shared with other tenants. Where requests spread evenly over the
processes (uvicorn workers sharing a socket, a round-robin balancer) the key
gets its whole limit; where they do not, it gets less, never more.
The clock is passed in (`now`, seconds on a monotonic scale), so the logic is
tested without sleeping.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memlattice.core.sharing import ProcessShare  # which imports Limit and Refusal


class Limit(StrEnum):
    RATE = "rate"
    CONCURRENT = "concurrent"
    STREAMS = "streams"
    COST = "cost"
    SHARE = "share"


@dataclass(frozen=True)
class KeyLimits:
    """One key's limits; None leaves the server's default (`FairnessSettings`), 0 is
    no limit."""

    rate: float | None = None
    burst: float | None = None
    concurrent: int | None = None
    streams: int | None = None
    cost_rate: float | None = None
    cost_burst: float | None = None

    def over(self, defaults: KeyLimits, *, request_cost: float | None = None) -> KeyLimits:
        """These limits, each unset one taken from `defaults`; then 0 (set on the key
        or by default) means no limit, which is None from here on. With a
        `request_cost`, a key that sets its own rate but no cost budget of its own gets
        its request budget priced at that cost a request (memlattice.core.settings:
        the operator who limited its requests meant its work); a key that sets no rate
        keeps the server's default cost budget, as before."""
        merged = {name: value if value is not None else getattr(defaults, name)
                  for name, value in vars(self).items()}
        if request_cost and self.rate and self.cost_rate is None:
            merged["cost_rate"] = self.rate * request_cost
            if self.cost_burst is None:
                merged["cost_burst"] = (merged["burst"] or max(1.0, self.rate)) * request_cost
        return KeyLimits(**{name: value or None for name, value in merged.items()})

    def share(self, processes: int) -> KeyLimits:
        """One process's share of these limits among `processes` (see the module
        docstring): rates divided; bursts and counts divided, at least one."""
        if processes <= 1:
            return self
        n = processes

        def count(value: int | None) -> int | None:
            return None if value is None else max(1, value // n)

        def amount(value: float | None) -> float | None:
            return None if value is None else max(1.0, value / n)

        return KeyLimits(
            rate=None if self.rate is None else self.rate / n, burst=amount(self.burst),
            concurrent=count(self.concurrent), streams=count(self.streams),
            cost_rate=None if self.cost_rate is None else self.cost_rate / n,
            cost_burst=amount(self.cost_burst))


@dataclass(frozen=True)
class Refusal:
    """Why an operation was refused, and after how many seconds to try again."""

    limit: Limit
    retry_after: float
    message: str

    @property
    def retry_after_header(self) -> str:
        """`Retry-After` in whole seconds, at least 1 (RFC 9110: delay-seconds)."""
        return str(max(1, math.ceil(self.retry_after)))


@dataclass
class TokenBucket:
    """`capacity` tokens, refilled at `rate` a second; starts full."""

    rate: float
    capacity: float
    tokens: float = field(default=-1.0)
    stamp: float = 0.0

    def __post_init__(self) -> None:
        if self.tokens < 0:
            self.tokens = self.capacity

    def refill(self, now: float) -> None:
        if now > self.stamp:
            self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = max(self.stamp, now)

    def take(self, amount: float, now: float) -> float:
        """Take `amount` (0 seconds to wait) or nothing (the seconds until it could be
        taken). An amount over the capacity is taken from a full bucket, into debt."""
        self.refill(now)
        needed = min(amount, self.capacity)
        # A relative hair of slack: buckets refilled in step (a key's requests and its
        # cost) must not drift apart by a float's rounding.
        if self.tokens >= needed * (1.0 - 1e-9):
            self.tokens -= amount
            return 0.0
        if self.rate <= 0:
            return math.inf
        return (needed - self.tokens) / self.rate


@dataclass
class _KeyState:
    limits: KeyLimits
    requests: TokenBucket | None
    cost: TokenBucket | None
    in_flight: int = 0
    streams: int = 0
    # What the key's last operation cost (charged or refused): what its next one
    # probably costs, so an early refusal's Retry-After can cover it (`peek`).
    last_cost: float = 0.0


class Limiter:
    """Every key's buckets and counts in one process (asyncio: no locking needed).

    `admit` before an operation runs, `release` when it ends (exactly once per
    admitted operation); `charge` the operation's cost once it is measured.
    A key's state follows its limits: when they change (the key was reconfigured),
    its buckets start again full. With a `share`, requests (not streams) are also
    shared among the keys while the process is busy (memlattice.core.sharing).
    """

    def __init__(self, defaults: KeyLimits, *, processes: int = 1,
                 share: ProcessShare | None = None,
                 request_cost: float | None = None) -> None:
        self.defaults = defaults
        self.processes = max(1, processes)
        # The cost a request of a key's rate stands for, where its cost budget is set
        # nowhere (KeyLimits.over); None: such a key has no cost budget.
        self.request_cost = request_cost
        self.share = share
        self._keys: dict[str, _KeyState] = {}

    def limits_of(self, own: KeyLimits) -> KeyLimits:
        """This process's share of a key's limits (its own over the defaults)."""
        return own.over(self.defaults, request_cost=self.request_cost).share(self.processes)

    def _state(self, key: str, own: KeyLimits, now: float) -> _KeyState:
        limits = self.limits_of(own)
        state = self._keys.get(key)
        if state is None or state.limits != limits:
            state = _KeyState(
                limits=limits,
                requests=_bucket(limits.rate, limits.burst, now),
                cost=_bucket(limits.cost_rate, limits.cost_burst, now),
                in_flight=state.in_flight if state else 0,
                streams=state.streams if state else 0,
                last_cost=state.last_cost if state else 0.0)
            self._keys[key] = state
        return state

    def admit(self, key: str, own: KeyLimits, now: float, *,
              stream: bool = False) -> Refusal | None:
        """Admit one operation of `key` (a request, or with `stream` a subscription)."""
        state = self._state(key, own, now)
        limits = state.limits
        held, cap, limit = ((state.streams, limits.streams, Limit.STREAMS) if stream
                            else (state.in_flight, limits.concurrent, Limit.CONCURRENT))
        if cap is not None and held >= cap:
            what = "live subscription" if stream else "operation"
            what = f"{held} {what}{'' if held == 1 else 's'}{'' if stream else ' in flight'}"
            return Refusal(limit, 1.0, f"this API key already has {what} on this"
                           f" server process, its share of the key's limit; try again")
        if not stream and self.share is not None:
            # Before the rate: a request refused for its turn keeps its token.
            refusal = self.share.refusal(key, now)
            if refusal is not None:
                return refusal
        if state.requests is not None:
            wait = state.requests.take(1.0, now)
            if wait > 0:
                return Refusal(Limit.RATE, wait, "this API key is over its request rate"
                               f" ({_per_second(limits.rate)} a second on this server process,"
                               f" burst {_amount(limits.burst)}); slow down")
        if stream:
            state.streams += 1
        else:
            state.in_flight += 1
            if self.share is not None:
                self.share.start(key, now)
        return None

    def release(self, key: str, now: float, *, stream: bool = False) -> None:
        state = self._keys.get(key)
        if state is None:
            return
        if stream:
            state.streams = max(0, state.streams - 1)
        else:
            state.in_flight = max(0, state.in_flight - 1)
            if self.share is not None:
                self.share.end(key, now)

    def charge(self, key: str, own: KeyLimits, cost: float, now: float) -> Refusal | None:
        """Charge an operation's estimated cost, or refuse it (nothing charged to the
        budget). What a key asks for, served or refused, also orders the keys while the
        process is crowded (`ProcessShare`): a key whose dear operations its budget
        mostly refuses is served little, and would otherwise count as the lightest key,
        which everyone else gives way to; it is the one that asks the most."""
        state = self._state(key, own, now)
        state.last_cost = cost
        wait = 0.0 if state.cost is None else state.cost.take(cost, now)
        if self.share is not None:
            self.share.charge(key, cost, now)
        if wait <= 0:
            return None
        # The request took a rate token before it was measured: its retry needs one too,
        # so Retry-After covers both, and a client that obeys it is admitted.
        wait = max(wait, _until(state.requests, 1.0, now))
        budget = (f"{_per_second(state.limits.cost_rate)} cost units a second on this server"
                  f" process, burst {_amount(state.limits.cost_burst)}")
        if state.cost is not None and cost > state.cost.capacity:
            # Never refused for good: it runs once the bucket is full again (into debt,
            # which the key's next operations wait out), `wait` seconds from now at most
            # if the key spends nothing meanwhile.
            return Refusal(Limit.COST, wait, f"this operation costs {int(cost)}, more than"
                           f" this API key's whole cost budget holds ({budget}): it runs"
                           " when the budget is full again, and leaves it in debt; try again"
                           " after Retry-After, or ask for less (lower `first`/`limit`,"
                           " fewer fields)")
        return Refusal(Limit.COST, wait, f"this API key is over its cost budget ({budget};"
                       f" this operation costs {int(cost)}); slow down or ask for less"
                       " (lower `first`/`limit`, fewer fields)")

    def peek(self, key: str, now: float) -> Refusal | None:
        """The refusal `admit` would give a request of `key` now, by its last known
        limits, without taking anything (memlattice.server.throttle's early check);
        never `share`, which a request may wait out (memlattice.server.throttle).
        Also `cost` while the key's cost bucket holds less than one unit, which no
        operation can be admitted on (`charge`): a key out of budget is refused
        before its Neo4j look-up and its GraphQL parse, as one out of requests is.

        Its `retry_after` is when a request like the key's last can be admitted: a
        rate token and, in the cost bucket, what the last operation cost (a full
        bucket, for one dearer than it), whichever comes later. The time until the
        bucket holds one unit would send a client that obeys it back into a second
        refusal, by `charge` this time, whenever its operations cost more than that."""
        state = self._keys.get(key)
        if state is None:
            return None
        limits = state.limits
        if limits.concurrent is not None and state.in_flight >= limits.concurrent:
            count = state.in_flight
            return Refusal(Limit.CONCURRENT, 1.0, "this API key already has"
                           f" {count} operation{'' if count == 1 else 's'} in flight on this"
                           " server process,"
                           " its share of the key's limit; try again")
        rate_wait = _until(state.requests, 1.0, now)
        cost = state.cost
        out_of_cost = cost is not None and _until(cost, 1.0, now) > 0
        if not (rate_wait > 0 or out_of_cost):
            return None
        wait = max(rate_wait,
                   0.0 if cost is None else _until(cost, max(1.0, state.last_cost), now))
        if rate_wait > 0:
            return Refusal(Limit.RATE, wait, "this API key is over its request rate"
                           f" ({_per_second(limits.rate)} a second on this server process,"
                           f" burst {_amount(limits.burst)}); slow down")
        return Refusal(Limit.COST, wait, "this API key has spent its cost budget"
                       f" ({_per_second(limits.cost_rate)} cost units a second on"
                       " this server process); slow down or ask for less")

    def in_flight(self, key: str) -> tuple[int, int]:
        """(operations in flight, live subscriptions) of `key` in this process."""
        state = self._keys.get(key)
        return (state.in_flight, state.streams) if state else (0, 0)


def _bucket(rate: float | None, burst: float | None, now: float) -> TokenBucket | None:
    if rate is None:
        return None
    capacity = burst if burst is not None else max(1.0, rate)
    return TokenBucket(rate=rate, capacity=capacity, stamp=now)


def _until(bucket: TokenBucket | None, amount: float, now: float) -> float:
    """Seconds until `bucket` could give `amount` (a full bucket, for more than it
    holds), taking nothing; 0 when it could now, or when there is no bucket."""
    if bucket is None:
        return 0.0
    bucket.refill(now)
    needed = min(amount, bucket.capacity)
    if bucket.tokens >= needed * (1.0 - 1e-9):
        return 0.0
    return math.inf if bucket.rate <= 0 else (needed - bucket.tokens) / bucket.rate


def _per_second(value: float | None) -> str:
    return "unlimited" if value is None else f"{value:g}"


def _amount(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


# A key that sets none of its limits: the server's defaults apply to it.
UNSET_LIMITS = KeyLimits()
