"""A key that sets its own rate but no cost budget: its request budget priced at
`request_cost` a request (memlattice.core.fairness.KeyLimits.over), on a clock the test
moves."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memlattice.core.fairness import KeyLimits, Limit, Limiter
from memlattice.core.gate import Gate
from tests.unit.test_fairness import Clock, key

DEFAULTS = KeyLimits(rate=1000.0, burst=2000.0)
FLOOD = KeyLimits(rate=5.0, burst=5.0)
HEAVY, LIGHT = 551, 41  # a search of limit 50 with every field; one of limit 10


def test_unset_anywhere_the_cost_budget_is_the_request_budget_priced() -> None:
    limits = FLOOD.over(DEFAULTS, request_cost=100.0)
    assert (limits.cost_rate, limits.cost_burst) == (500.0, 500.0)
    # Without a burst, the request bucket holds a second's worth, and so does the cost's.
    assert KeyLimits(rate=5.0).over(KeyLimits(), request_cost=100.0).cost_burst == 500.0
    # Without a request_cost nothing is derived (the limiter of tests and of old).
    assert FLOOD.over(DEFAULTS).cost_rate is None


def test_a_keys_own_cost_budget_wins_and_a_key_without_a_rate_keeps_the_default() -> None:
    own = KeyLimits(rate=5.0, cost_rate=3000.0, cost_burst=6000.0)
    assert own.over(DEFAULTS, request_cost=100.0).cost_rate == 3000.0
    server = KeyLimits(rate=1000.0, burst=2000.0, cost_rate=2_000_000.0, cost_burst=4_000_000.0)
    # A key's own rate implies its cost budget, over the server's default one...
    assert FLOOD.over(server, request_cost=100.0).cost_rate == 500.0
    # ...a key that sets no rate of its own keeps the server's (a backstop), as before.
    unset = KeyLimits(concurrent=4).over(server, request_cost=100.0)
    assert (unset.cost_rate, unset.cost_burst) == (2_000_000.0, 4_000_000.0)
    lifted = KeyLimits(rate=5.0, cost_rate=0).over(DEFAULTS, request_cost=100.0)
    assert lifted.cost_rate is None and lifted.rate == 5.0
    # A key whose rate is lifted has no cost budget derived from it either.
    assert KeyLimits(rate=0).over(server, request_cost=100.0).cost_rate == 2_000_000.0
    # Its own burst, or the default one, sizes the cost bucket as it sizes the request one.
    assert KeyLimits(rate=5.0).over(server, request_cost=100.0).cost_burst == 200_000.0


def test_heavy_requests_spend_the_allowance_faster_than_light_ones() -> None:
    limiter = Limiter(DEFAULTS, request_cost=100.0)
    admitted = 0
    for _ in range(5):  # the whole burst of requests, each dearer than the bucket
        if limiter.charge("flood", FLOOD, HEAVY, 0.0) is None:
            admitted += 1
    assert admitted == 1
    refusal = limiter.charge("flood", FLOOD, HEAVY, 0.0)
    assert refusal is not None and refusal.limit is Limit.COST
    assert refusal.retry_after == (500 + 51) / 500  # the debt, then a full bucket
    # The same rate of light requests is never refused for cost.
    assert all(limiter.charge("quiet", FLOOD, LIGHT, 0.0) is None for _ in range(5))


def test_the_processes_shares_of_a_derived_budget_add_up_to_it() -> None:
    limiter = Limiter(DEFAULTS, processes=4, request_cost=100.0)
    limits = limiter.limits_of(KeyLimits(rate=20.0, burst=40.0))
    assert (limits.cost_rate, limits.cost_burst) == (500.0, 1000.0)


def test_a_key_out_of_cost_budget_is_refused_early_without_taking_a_token() -> None:
    clock = Clock()
    gate = Gate(Limiter(DEFAULTS, request_cost=100.0), clock=clock, early_s=1.0)
    flood = key("flood", FLOOD)
    gate.seen(flood, "secret")
    assert gate.admit(flood) is None
    assert gate.charge(flood, HEAVY) is None
    gate.release(flood)
    refusal = gate.early("flood", "secret")
    assert refusal is not None and refusal.limit is Limit.COST
    # Until the bucket is full again, which an operation like the last needs.
    assert refusal.retry_after == (500 + 51) / 500 and refusal.retry_after_header == "2"
    requests = gate.limiter._keys["flood"].requests
    assert requests is not None and requests.tokens == 4.0  # the refusal took none
    clock.now = 0.2  # one unit back in the bucket: judged by the operation's cost again
    assert gate.early("flood", "secret") is None


def test_a_client_that_waits_its_retry_after_in_cost_debt_is_admitted() -> None:
    """The walkthrough's key (rate 5, burst 5: a cost budget of 500) sending a search
    dearer than its whole budget (851): admitted into debt, the next one sent straight
    on is refused early. Its Retry-After used to say when the bucket held one unit
    (1 s), and the retry was refused again, by its cost; now it says when the bucket
    is full, and the retry is admitted."""
    clock = Clock()
    gate = Gate(Limiter(DEFAULTS, request_cost=100.0), clock=clock, early_s=1.0)
    flood = key("flood", FLOOD)

    def send() -> str | None:
        """One request as the server takes it: early check, admission, its cost."""
        refusal = gate.early("flood", "secret")
        if refusal is None:
            gate.seen(flood, "secret")
            refusal = gate.admit(flood)
            if refusal is None:
                refusal = gate.charge(flood, 851)
                gate.release(flood)
        return None if refusal is None else refusal.retry_after_header

    gate.seen(flood, "secret")
    for _ in range(3):
        assert send() is None
        clock.now += 0.01
        retry_after = send()
        assert retry_after == "2"  # (851 - 5) / 500 s until the bucket is full
        clock.now += int(retry_after)
        assert send() is None  # obeyed, admitted
        clock.now += 2  # a pause: the bucket is full again


@settings(max_examples=300, deadline=None)
@given(rate=st.floats(0.05, 100.0), burst=st.floats(1.0, 100.0), cost=st.floats(1.0, 5000.0),
       pauses=st.lists(st.floats(0.0, 2.0), max_size=30))
def test_a_request_sent_again_after_its_retry_after_is_admitted(
    rate: float, burst: float, cost: float, pauses: list[float],
) -> None:
    """Whatever a key's rate and the cost of the operation it repeats, at whatever
    pace: one refused (early, by its rate or by its cost) and sent again once its
    Retry-After has passed is admitted, when the key sent nothing else meanwhile."""
    limiter = Limiter(KeyLimits(), request_cost=100.0)
    own = KeyLimits(rate=rate, burst=burst)
    now = 0.0
    for pause in pauses:
        now += pause
        refusal = limiter.peek("a", now) or limiter.admit("a", own, now)
        if refusal is None:
            refusal = limiter.charge("a", own, cost, now)
            limiter.release("a", now)
        if refusal is None:
            continue
        now += int(refusal.retry_after_header)
        assert limiter.peek("a", now) is None
        assert limiter.admit("a", own, now) is None
        assert limiter.charge("a", own, cost, now) is None
        limiter.release("a", now)


@settings(max_examples=300, deadline=None)
@given(rate=st.floats(0.01, 1000.0), burst=st.floats(1.0, 1000.0),
       request_cost=st.floats(1.0, 10_000.0),
       steps=st.lists(st.tuples(st.floats(0.0, 5.0), st.floats(0.0, 1.0)), max_size=60))
def test_requests_no_dearer_than_the_request_cost_are_never_refused_for_cost(
    rate: float, burst: float, request_cost: float, steps: list[tuple[float, float]],
) -> None:
    """Whatever their timing: the cost bucket refills in step with the request bucket
    and holds at least `request_cost` for every request token, so a key of ordinary
    requests meets only its rate, as before the cost budget was derived."""
    limiter = Limiter(KeyLimits(), request_cost=request_cost)
    own = KeyLimits(rate=rate, burst=burst)
    now = 0.0
    for pause, share in steps:
        now += pause
        if limiter.admit("a", own, now) is None:
            assert limiter.charge("a", own, max(1.0, share * request_cost), now) is None
            limiter.release("a", now)
