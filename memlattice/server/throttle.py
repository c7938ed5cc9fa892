"""Fairness between tenants on the wire: 429 with `Retry-After`, code RATE_LIMITED.

The decisions are memlattice.core.fairness's; here they meet HTTP:

- `RefuseEarly`, outside the key check, refuses a request of a key this
  process saw authenticate with the same secret within the last second and
  that is over its limits now (`Gate.early`): a flood's refusals then cost no
  Neo4j read; a key revoked or reconfigured meanwhile is judged in full once
  that second is over;
- `Throttle` wraps the GraphQL endpoint inside the key check: an authenticated
  request is admitted (its key's request rate and concurrency) before any
  GraphQL work, and released when its response is sent; a refused one is
  answered 429 with `Retry-After` and a GraphQL-shaped body, nothing run;
- in a busy process, a request of the key with the most work in flight waits for its
  turn (memlattice.core.sharing), woken at each release, for at most
  `MEMLATTICE_FAIRNESS_TURN_WAIT_S` (as long as the `Retry-After` it would get
  otherwise), or, for a key's first `MEMLATTICE_FAIRNESS_QUEUE` waiting requests,
  that long after the key's last request ended (memlattice.core.turn_waits): then
  it is refused 429 (limit `share`); `Turns` does the waiting;
- once admitted, a request runs paced (memlattice.core.pacing): at each of its
  stage boundaries, while the process holds more operations than its capacity
  and a key that asked for less lately has one in flight, it waits for a release
  (`Turns.give_way`), for at most `MEMLATTICE_FAIRNESS_YIELD_S` in all; the
  request's timeout still cuts it short (it answers TIMEOUT, as any request);
- the cost analysis (resolvers.limits) charges the operation's estimated cost
  once it is measured; an operation over the key's cost budget comes back as a
  RATE_LIMITED error, which the view turns into the same 429
  (memlattice.server.http_requests);
- a query or mutation sent over a WebSocket is admitted, waits for its turn and
  is paced by the same `Turns` (`build_turns`, `run_paced`); a subscription holds
  a live-subscription slot while it runs (memlattice.server.ws_messages).

Every refusal is counted in `memlattice_rate_limited_total{key,limit}`, each
key's operations in flight in `memlattice_key_operations{key,kind}`, and the
process's, against its capacity (memlattice.core.sharing), in
`memlattice_process_operations{kind}` (`yielding`: those waiting at a boundary).
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import random
import time
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from starlette.requests import HTTPConnection
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from memlattice.core.auth import Principal
from memlattice.core.errors import RateLimited
from memlattice.core.fairness import KeyLimits, Limit, Limiter, Refusal
from memlattice.core.gate import Gate, key_of
from memlattice.core.pacing import paced
from memlattice.core.settings import FairnessSettings
from memlattice.core.sharing import ProcessShare
from memlattice.core.turn_waits import TurnWaits
from memlattice.server.http_auth import presented_key, principal_of
from memlattice.server.http_requests import refusal, too_many
from memlattice.server.observability.metrics import Metrics
from memlattice.server.read_ahead import ReadAhead
from memlattice.services.apikeys import bearer, digest, key_id_of


def neo4j_on_this_machine(uri: str | None) -> bool:
    """Whether Neo4j shares this machine's cores: the one the project provisions
    itself (no `NEO4J_URI`), or one reached on the loopback interface."""
    if uri is None:
        return True
    host = urlsplit(uri).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def process_capacity(settings: FairnessSettings, *, neo4j_here: bool = False) -> int | None:
    """The operations in flight at which this process is busy (memlattice.core.sharing):
    the setting; else, with Neo4j elsewhere, twice the CPUs the process may run on (an
    operation spends part of its time waiting on that Neo4j, so about two per core keep
    the cores busy); with Neo4j on this machine (`neo4j_here`), one per two CPUs: every
    operation's work is done on these cores, much of it in Neo4j, so a second one in
    flight per pair of cores only lengthens both. None: sharing off."""
    if settings.capacity is not None:
        return settings.capacity or None
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return max(1, cpus // 2) if neo4j_here else 2 * max(1, cpus)


def build_gate(settings: FairnessSettings, metrics: Metrics | None, *,
               neo4j_here: bool = False) -> Gate | None:
    """The process's gate, its defaults from the settings; None when fairness is off.
    `neo4j_here`: Neo4j runs on this machine's cores (`process_capacity`)."""
    if not settings.enabled:
        return None
    defaults = KeyLimits(rate=settings.rate, burst=settings.burst,
                         concurrent=settings.concurrent, streams=settings.streams,
                         cost_rate=settings.cost_rate, cost_burst=settings.cost_burst)
    share = ProcessShare(process_capacity(settings, neo4j_here=neo4j_here),
                         active_s=settings.active_s)
    limiter = Limiter(defaults, processes=settings.processes, share=share,
                      request_cost=settings.request_cost or None)
    if metrics is not None:
        metrics.watch_share(share)
    if metrics is None:
        return Gate(limiter, early_s=settings.early_refusal_s)
    return Gate(limiter, refused=metrics.rate_limited, counts=metrics.key_operations,
                charged=metrics.cost_charged, early_s=settings.early_refusal_s)


def rate_limited(refusal: Refusal) -> RateLimited:
    return RateLimited(refusal.message, limit=refusal.limit.value,
                       retryAfter=int(refusal.retry_after_header))


def rate_limited_response(error: RateLimited) -> Response:
    """429 with `Retry-After`, the body a request error's (nothing ran: no `data`)."""
    return refusal(too_many(error))


async def _refuse(refusal: Refusal, metrics: Metrics | None, scope: Scope, receive: Receive,
                  send: Send) -> None:
    """Answer 429 RATE_LIMITED for a refused request, counted as that error."""
    if metrics is not None:
        metrics.error(RateLimited.code)
    await rate_limited_response(rate_limited(refusal))(scope, receive, send)


def _fingerprint(scope: Scope) -> tuple[str, str] | None:
    """(key id, digest of the secret) a request presents, or None without a key."""
    token = presented_key(HTTPConnection(scope).headers)
    key_id = key_id_of(token)
    secret = bearer(token)
    return (key_id, digest(secret)) if key_id and secret else None


class RefuseEarly:
    """ASGI wrapper outside RequireKey: a request of a key that is over its limits
    by what this process saw of it a moment ago is refused before the key is looked
    up (`Gate.early`), so a flood's refusals cost Neo4j nothing.

    `hold_s` (`MEMLATTICE_FAIRNESS_REFUSAL_HOLD_S`, 1 s by default; 0: off) holds such a
    refusal about that long (from half to one and a half times it) before it is
    sent, when the key was also refused less than a second before
    (`Gate.refused_lately`): its client was told to wait at least a second and came
    back sooner, so it is not waiting its `Retry-After`, and each of its
    connections then carries about one refusal per hold instead of as many as it
    can send. A request sent straight after a success (its client was told nothing
    yet, say the one that put its key into cost debt) is refused at once. At most
    `max_held` are held at once; past that they are answered at once. The answer
    itself is the one every refusal gets (`_refuse`)."""

    def __init__(self, app: ASGIApp, gate: Gate | None, metrics: Metrics | None = None,
                 *, hold_s: float = 0.0, max_held: int = 0) -> None:
        self.app = app
        self.gate = gate
        self.metrics = metrics
        self.hold_s = hold_s
        self.max_held = max_held
        self.held = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.gate is not None and scope["type"] == "http":
            presented = _fingerprint(scope)
            refusal = self.gate.early(*presented) if presented else None
            if presented is not None and refusal is not None:
                if (self.hold_s > 0 and self.held < self.max_held
                        and self.gate.refused_lately(presented[0])):
                    self.held += 1
                    try:
                        # Spread: a flood's connections, held alike, would otherwise
                        # come back all at once.
                        await asyncio.sleep(self.hold_s * (0.5 + random.random()))
                    finally:
                        self.held -= 1
                self.gate.refusal_sent(presented[0])
                await _refuse(refusal, self.metrics, scope, receive, send)
                return
        await self.app(scope, receive, send)


class Running:
    """One admitted request's pacer (memlattice.core.pacing): what is left of its
    waiting budget, and whether it has ended (a task it started may outlive it,
    and must not wait on its behalf then)."""

    __slots__ = ("ended", "left", "principal", "turns")

    def __init__(self, turns: Turns, principal: Principal) -> None:
        self.turns = turns
        self.principal = principal
        self.left = turns.yield_s
        self.ended = False

    async def __call__(self) -> None:
        if self.left > 0 and not self.ended and self.turns.gate.should_yield(self.principal):
            await self.turns.give_way(self)


class Turns:
    """Requests waiting for their turn in a busy process: each waits until a release
    lets it in (its key no longer the one with most work in flight, or the process no
    longer busy), or its deadline (`waits`: `wait_s` after it arrived, or after its
    key's last release for a key's first `queue` waiting requests; never past
    `max_wait_s`). Running requests that give way at a stage boundary (`give_way`)
    are woken by the same releases."""

    def __init__(self, gate: Gate, wait_s: float, yield_s: float = 0.5, *, queue: int = 0,
                 max_wait_s: float = 30.0) -> None:
        self.gate = gate
        self.yield_s = yield_s
        self.waits = TurnWaits(wait_s, queue, max(wait_s, max_wait_s))
        self.waiting = 0
        self.yielding = 0
        self._released = asyncio.Event()

    async def admit(self, principal: Principal,
                    gone: Callable[[], Awaitable[None]] | None = None) -> Refusal | None:
        """Admit `principal`'s request, waiting for its turn if need be; its refusal
        otherwise. `gone` returns once the request's client has left
        (memlattice.server.read_ahead): a request waiting for its turn then stops
        waiting and is never admitted (its refusal is returned, and reported to no
        one: there is no one to tell)."""
        refusal = self.gate.admit(principal, waiting=True)
        if refusal is None or refusal.limit is not Limit.SHARE:
            return refusal
        waiter = self.waits.arrive(key_of(principal), time.monotonic())
        leaving = asyncio.ensure_future(gone()) if gone is not None else None
        self.waiting += 1
        try:
            while refusal is not None and refusal.limit is Limit.SHARE:
                if leaving is not None and leaving.done():
                    return refusal  # its client left: not a refusal anyone is told of
                remaining = self.waits.deadline(waiter) - time.monotonic()
                if remaining <= 0:
                    self.gate.refused_turn(principal, refusal)
                    return refusal
                released = asyncio.ensure_future(self._released.wait())
                try:
                    await asyncio.wait([released] if leaving is None else [released, leaving],
                                       timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    released.cancel()
                if leaving is not None and leaving.done():
                    continue  # ends above, without looking again
                refusal = self.gate.admit(principal, waiting=True)
        finally:
            self.waiting -= 1
            self.waits.leave(waiter)
            if leaving is not None and not leaving.done():
                leaving.cancel()
            elif leaving is not None and not leaving.cancelled():
                leaving.exception()  # a receive that failed: as good as gone, retrieved
        return refusal

    async def give_way(self, running: Running) -> None:
        """Wait, at a stage boundary of `running`, until a release lets it go on (no
        lighter key's operation in flight, or the process no longer crowded) or its
        budget is spent. Each wait ends at a release or at the budget's end, so no
        request waits here longer than `yield_s` in all, nor forever on another
        that is itself waiting (memlattice.core.sharing orders them strictly)."""
        loop = asyncio.get_running_loop()
        self.yielding += 1
        try:
            while (running.left > 0 and not running.ended
                   and self.gate.should_yield(running.principal)):
                started = loop.time()
                try:
                    await asyncio.wait_for(self._released.wait(), running.left)
                except TimeoutError:
                    pass
                running.left -= loop.time() - started
        finally:
            self.yielding -= 1

    def release(self, principal: Principal) -> None:
        """End an admitted request and wake every waiting one to look again (its key's
        queued requests with more time: memlattice.core.turn_waits)."""
        self.gate.release(principal)
        self.waits.served(key_of(principal), time.monotonic())
        if self.waiting or self.yielding:
            self._released.set()
            self._released = asyncio.Event()


def build_turns(gate: Gate | None, settings: FairnessSettings,
                metrics: Metrics | None = None, *, max_wait_s: float = 30.0) -> Turns | None:
    """The process's one `Turns` (None without a gate): HTTP requests (`Throttle`) and
    queries or mutations sent over a WebSocket (memlattice.server.ws_messages) wait for
    their turns, and give way, in the same queue; none waits for its turn longer than
    `max_wait_s` (the request timeout)."""
    if gate is None:
        return None
    turns = Turns(gate, settings.turn_wait_s, settings.yield_s, queue=settings.queue,
                  max_wait_s=max_wait_s)
    if metrics is not None:
        metrics.watch_turns(turns)
    return turns


async def run_paced(turns: Turns, principal: Principal, run: Awaitable[None]) -> None:
    """Run an admitted operation of `principal` to its end, paced at its stage
    boundaries (memlattice.core.pacing), and release it however it ends."""
    running = Running(turns, principal)
    try:
        with paced(running):
            await run
    finally:
        running.ended = True
        turns.release(principal)


class Throttle:
    """ASGI wrapper of the GraphQL endpoint, inside RequireKey (which put the principal
    in the scope); `turns` (`build_turns`) is where a request of a busy process waits,
    None when fairness is off."""

    def __init__(self, app: ASGIApp, turns: Turns | None,
                 metrics: Metrics | None = None) -> None:
        self.app = app
        self.turns = turns
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = principal_of(scope)
        if self.turns is None or scope["type"] != "http" or principal.anonymous:
            await self.app(scope, receive, send)  # the GraphiQL page, or fairness off
            return
        presented = _fingerprint(scope)
        if presented is not None:
            self.turns.gate.seen(principal, presented[1])
        # Read ahead while waiting for a turn: a client that leaves is not waited for.
        read = ReadAhead(receive)
        refusal = await self.turns.admit(principal, read.gone)
        if refusal is not None:
            if not read.left:  # nobody to answer otherwise
                await _refuse(refusal, self.metrics, scope, read, send)
            return
        await run_paced(self.turns, principal, self.app(scope, read, send))
