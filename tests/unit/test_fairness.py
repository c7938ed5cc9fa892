"""The limiter's decisions (memlattice.core.fairness), on a clock the test moves."""

from __future__ import annotations

import math

from memlattice.core.auth import Principal, Scope, Sensitivity
from memlattice.core.fairness import KeyLimits, Limit, Limiter, TokenBucket
from memlattice.core.gate import Gate

QUIET = KeyLimits()


def test_a_bucket_gives_its_burst_then_its_rate() -> None:
    bucket = TokenBucket(rate=2.0, capacity=3.0)
    assert [bucket.take(1, 0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take(1, 0.0) == 0.5  # one token comes every half second
    assert bucket.take(1, 0.5) == 0.0
    assert bucket.take(1, 10.0) == 0.0 and math.isclose(bucket.tokens, 2.0)


def test_an_amount_over_the_capacity_passes_a_full_bucket_into_debt() -> None:
    bucket = TokenBucket(rate=10.0, capacity=100.0)
    assert bucket.take(250, 0.0) == 0.0 and bucket.tokens == -150.0
    assert bucket.take(1, 0.0) == 15.1  # the debt is waited out first
    assert bucket.take(250, 25.0) == 0.0


def test_rate_refusals_say_when_to_come_back() -> None:
    limiter = Limiter(KeyLimits(rate=1.0, burst=2.0))
    for _ in range(2):
        assert limiter.admit("a", QUIET, 0.0) is None
        limiter.release("a", 0.0)
    refusal = limiter.admit("a", QUIET, 0.0)
    assert refusal is not None and refusal.limit is Limit.RATE
    assert refusal.retry_after == 1.0 and refusal.retry_after_header == "1"
    assert limiter.admit("b", QUIET, 0.0) is None  # another key is untouched
    assert limiter.admit("a", QUIET, 1.0) is None


def test_concurrency_is_counted_until_released() -> None:
    limiter = Limiter(KeyLimits(concurrent=2))
    assert limiter.admit("a", QUIET, 0.0) is None
    assert limiter.admit("a", QUIET, 0.0) is None
    refusal = limiter.admit("a", QUIET, 0.0)
    assert refusal is not None and refusal.limit is Limit.CONCURRENT
    limiter.release("a", 0.0)
    assert limiter.admit("a", QUIET, 0.0) is None
    assert limiter.in_flight("a") == (2, 0)


def test_subscriptions_have_their_own_allowance() -> None:
    limiter = Limiter(KeyLimits(concurrent=1, streams=2))
    assert limiter.admit("a", QUIET, 0.0, stream=True) is None
    assert limiter.admit("a", QUIET, 0.0, stream=True) is None
    refusal = limiter.admit("a", QUIET, 0.0, stream=True)
    assert refusal is not None and refusal.limit is Limit.STREAMS
    assert limiter.admit("a", QUIET, 0.0) is None  # live streams leave the request slot
    limiter.release("a", 0.0, stream=True)
    assert limiter.admit("a", QUIET, 0.0, stream=True) is None


def test_the_cost_budget_refuses_without_charging() -> None:
    limiter = Limiter(KeyLimits(cost_rate=100.0, cost_burst=300.0))
    assert limiter.charge("a", QUIET, 200, 0.0) is None
    refusal = limiter.charge("a", QUIET, 200, 0.0)
    assert refusal is not None and refusal.limit is Limit.COST
    assert refusal.retry_after == 1.0 and "costs 200" in refusal.message
    assert limiter.charge("a", QUIET, 100, 0.0) is None  # the refused 200 was not taken


def test_an_operation_dearer_than_the_whole_budget_runs_whenever_it_is_full() -> None:
    """Never refused for good: a full bucket pays it (into debt); refused meanwhile, it
    is told to come back when the bucket is full again, and then it runs."""
    limiter = Limiter(KeyLimits(cost_rate=100.0, cost_burst=300.0))
    assert limiter.charge("a", QUIET, 1000, 0.0) is None
    refusal = limiter.charge("a", QUIET, 1000, 0.0)
    assert refusal is not None and refusal.limit is Limit.COST
    assert refusal.retry_after == 10.0  # the debt of 700, then the 300 of a full bucket
    assert "costs 1000, more than this API key's whole cost budget holds" in refusal.message
    assert limiter.charge("a", QUIET, 1000, 9.9) is not None
    assert limiter.charge("a", QUIET, 1000, 10.0) is None
    # Over and over: each time the bucket is full again, one runs.
    for start in (20.0, 30.0, 40.0):
        assert limiter.charge("a", QUIET, 1000, start) is None
        assert limiter.charge("a", QUIET, 1000, start + 5.0) is not None


def test_a_key_s_own_limits_override_the_defaults_and_zero_lifts_one() -> None:
    limiter = Limiter(KeyLimits(rate=1.0, burst=1.0, concurrent=1))
    generous = KeyLimits(rate=0, concurrent=5)
    for _ in range(5):
        assert limiter.admit("a", generous, 0.0) is None
    assert limiter.admit("a", generous, 0.0) is not None  # the sixth: concurrency


def test_a_process_enforces_its_share_and_the_shares_never_exceed_the_limit() -> None:
    limits = KeyLimits(rate=90.0, burst=30.0, concurrent=8, streams=3, cost_rate=300.0,
                       cost_burst=10.0)
    share = limits.share(4)
    assert share == KeyLimits(rate=22.5, burst=7.5, concurrent=2, streams=1,
                              cost_rate=75.0, cost_burst=2.5)
    assert limits.share(1) == limits
    limiter = Limiter(KeyLimits(rate=4.0, burst=4.0), processes=2)
    admitted = 0
    for _ in range(10):
        if limiter.admit("a", QUIET, 0.0) is None:
            admitted += 1
            limiter.release("a", 0.0)
    assert admitted == 2


def test_reconfiguring_a_key_starts_its_buckets_anew_and_keeps_its_counts() -> None:
    limiter = Limiter(QUIET)
    tight = KeyLimits(rate=1.0, burst=1.0)
    assert limiter.admit("a", tight, 0.0) is None
    assert limiter.admit("a", tight, 0.0) is not None
    assert limiter.admit("a", KeyLimits(rate=1.0, burst=2.0), 0.0) is None
    assert limiter.in_flight("a") == (2, 0)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def key(key_id: str, limits: KeyLimits = QUIET) -> Principal:
    return Principal(key_id=key_id, name=key_id, namespaces=None, max_scope=Scope.AGENT,
                     clearance=Sensitivity.LOW, can_write=True, limits=limits)


def test_early_refusals_need_the_same_secret_seen_within_the_window() -> None:
    clock = Clock()
    gate = Gate(Limiter(KeyLimits(rate=1.0, burst=1.0)), clock=clock, early_s=1.0)
    a = key("a")
    assert gate.early("a", "secret") is None  # never seen: judged in full
    gate.seen(a, "secret")
    assert gate.admit(a) is None
    gate.release(a)
    refusal = gate.early("a", "secret")
    assert refusal is not None and refusal.limit is Limit.RATE
    assert gate.limiter.peek("a", clock.now) is not None  # peeking takes nothing...
    assert gate.early("a", "forged") is None  # ...and another secret is judged in full
    clock.now = 0.5
    assert gate.early("a", "secret") is not None
    clock.now = 1.0  # the window is over: the next request gets its full check
    assert gate.early("a", "secret") is None
    gate.seen(a, "secret")
    assert gate.early("a", "secret") is None  # and the bucket has its token again
    gate.forget("a")
    assert gate.early("a", "secret") is None


def test_a_concurrency_refusal_counts_one_operation_in_the_singular() -> None:
    limiter = Limiter(KeyLimits(concurrent=1, streams=1))
    assert limiter.admit("a", QUIET, 0.0) is None
    assert limiter.admit("a", QUIET, 0.0, stream=True) is None
    refused = limiter.admit("a", QUIET, 0.0)
    assert refused is not None and "already has 1 operation in flight on" in refused.message
    peeked = limiter.peek("a", 0.0)
    assert peeked is not None and "already has 1 operation in flight on" in peeked.message
    streams = limiter.admit("a", QUIET, 0.0, stream=True)
    assert streams is not None and "already has 1 live subscription on" in streams.message
