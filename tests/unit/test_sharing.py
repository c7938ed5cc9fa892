"""A busy process shared among keys (memlattice.core.sharing), on a clock the test moves."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memlattice.core.fairness import KeyLimits, Limit, Limiter
from memlattice.core.sharing import ProcessShare

# Never a timing assertion: a busy machine must not fail these.
EXAMPLES = settings(max_examples=300, deadline=None, derandomize=True)


# Starts, ends, cost charges and pauses of four keys, for the properties below.
CHARGED_STEPS = st.lists(st.tuples(
    st.sampled_from(["start", "end", "charge", "tick"]), st.sampled_from("abcd"),
    st.integers(0, 1000)), max_size=200)


def replayed(share: ProcessShare, action: str, key: str, cost: int, now: float) -> float:
    """Apply a tick, end or charge to `share`; the clock after it (a start is the
    caller's, which checks admission first or not)."""
    if action == "tick":
        return now + 0.3
    if action == "end":
        share.end(key, now)
    elif action == "charge":
        share.charge(key, float(cost), now)
    return now


def started(share: ProcessShare, key: str, times: int, now: float = 0.0) -> None:
    for _ in range(times):
        share.start(key, now)


def test_a_key_alone_has_the_whole_process_busy_or_not() -> None:
    share = ProcessShare(capacity=2)
    started(share, "flood", 10)
    assert share.busy and share.refusal("flood", 0.0) is None


def test_while_busy_the_key_with_the_most_in_flight_waits_and_the_others_go_first() -> None:
    share = ProcessShare(capacity=4)
    started(share, "flood", 4)
    share.start("quiet", 0.0)
    refused = share.refusal("flood", 0.0)
    assert refused is not None and refused.limit is Limit.SHARE
    assert refused.retry_after_header == "1" and "most work of them in flight (4 operations)" in refused.message
    assert share.refusal("quiet", 0.0) is None  # 1 < 4: it goes, over the capacity
    started(share, "quiet", 3)
    assert share.refusal("quiet", 0.0) is not None  # 4 and 4: both wait now
    share.end("flood", 0.0)
    assert share.refusal("flood", 0.0) is None  # 3 < 4: its turn again
    assert share.refusal("newcomer", 0.0) is None  # a key with none always goes first


def test_a_process_that_is_not_busy_refuses_no_one_and_no_capacity_is_no_sharing() -> None:
    share = ProcessShare(capacity=8)
    started(share, "flood", 6)
    share.start("quiet", 0.0)
    assert share.refusal("flood", 0.0) is None
    off = ProcessShare(capacity=None)
    started(off, "flood", 100)
    off.start("quiet", 0.0)
    assert not off.busy and off.refusal("flood", 0.0) is None


def test_a_key_between_operations_keeps_its_place_for_a_while() -> None:
    share = ProcessShare(capacity=2, active_s=1.0)
    share.start("quiet", 0.0)
    share.end("quiet", 0.5)  # thinking, but active until 1.5
    started(share, "flood", 2, now=0.5)
    assert share.refusal("flood", 1.4) is not None  # 2 in flight against 0: it waits
    assert share.refusal("flood", 1.5) is None  # the quiet key is gone: flood is alone
    assert share.heaviest_other("flood", 1.5) is None


def test_a_flood_between_its_requests_holds_one_of_them_not_a_light_tenants_second() -> None:
    """Capacity 1 (Neo4j on a 2-core machine): the quiet key's one cheap search in
    flight makes the process busy. A flood that its limits keep between requests, but
    active, holds the place of one of its dear operations: the quiet key's second
    search goes (before round twelve it waited for the first: 41 in flight against
    the idle flood's 0). The flood, with one in flight against the idle quiet key's
    place, still waits."""
    share = ProcessShare(capacity=1, active_s=1.0, cost_half_life_s=1.0)
    share.charge("flood", 551.0, 0.0)
    share.start("flood", 0.0)
    share.end("flood", 0.1)  # between requests, active until 1.1
    share.charge("quiet", 41.0, 0.2)
    share.start("quiet", 0.2)
    assert share.busy
    assert share.refusal("quiet", 0.3) is None  # 41 in flight against 551 held
    share.start("quiet", 0.3)
    share.end("quiet", 0.4)
    share.end("quiet", 0.5)  # the quiet key thinks; the flood comes back
    share.start("flood", 0.6)
    assert share.refusal("flood", 0.7) is not None  # 551 in flight against 41 held


def test_ending_more_than_was_started_changes_nothing() -> None:
    share = ProcessShare(capacity=1)
    share.end("ghost", 0.0)
    assert share.total == 0 and share.in_flight("ghost") == 0


@EXAMPLES
@given(st.integers(1, 6), st.lists(st.tuples(
    st.sampled_from(["start", "end", "tick"]), st.sampled_from("abcd")), max_size=200))
def test_an_admitted_operation_leaves_its_key_within_the_capacity_or_not_ahead_of_another(
        capacity: int, steps: list[tuple[str, str]]) -> None:
    """Whatever the order of starts, ends and pauses: a key admitted while the process
    is busy had fewer in flight than another active key, so nobody runs ahead of the
    others once the capacity is reached, and the counts always add up."""
    share = ProcessShare(capacity=capacity, active_s=1.0)
    now = 0.0
    for action, key in steps:
        if action == "tick":
            now += 0.4
        elif action == "end":
            share.end(key, now)
        else:
            alone = share.heaviest_other(key, now) is None
            before, busy = share.in_flight(key), share.busy
            heaviest = share.heaviest_other(key, now)
            if share.refusal(key, now) is None:
                assert not busy or alone or before <= (heaviest or 0)
                share.start(key, now)
            else:
                assert busy and not alone and before >= (heaviest or 0)
        assert share.total == sum(share.in_flight(k) for k in "abcd") >= 0


@EXAMPLES
@given(st.integers(1, 4), CHARGED_STEPS)
def test_while_busy_a_key_goes_first_exactly_when_another_has_more_work_in_flight(
        capacity: int, steps: list[tuple[str, str, int]]) -> None:
    """Whatever the starts, ends, charges and pauses: in a busy process a key is
    admitted exactly when another active key has more work in flight (its count in
    flight times what its recent operations cost on average, at least 1 each; one
    operation's worth for a key between operations); a key alone, and any key while
    the process is not busy, is admitted."""
    share = ProcessShare(capacity=capacity, active_s=1.0, cost_half_life_s=1.0)
    now = 0.0
    for action, key, cost in steps:
        now = replayed(share, action, key, cost, now)
        if action == "start":
            others = [o for o in "abcd" if o != key and (
                share.in_flight(o) or (o in share._last and now - share._last[o] < 1.0))]
            # An active key between operations holds the place of one operation.
            held = {k: max(share.in_flight(k), 1) * share.unit(k, now) for k in "abcd"}
            mine = share.in_flight(key) * share.unit(key, now)
            assert all(share.unit(k, now) >= 1.0 for k in "abcd")
            ahead = any(held[o] > mine for o in others)
            refused = share.refusal(key, now)
            assert (refused is None) == (not share.busy or not others or ahead)
            if refused is None:
                share.start(key, now)


def test_a_tenants_cheap_searches_are_less_work_than_a_floods_dear_one() -> None:
    """Work in flight is weighed by what a key's operations cost: with one each in
    flight, the quiet key (charged 41 a search) starts its second, third... while
    the flood (551 a search) waits for its second, until the quiet key has more work
    in flight than the flood's one search."""
    share = crowded({"flood": 551.0, "quiet": 41.0})
    assert share.busy and share.unit("quiet", 0.0) == 41.0
    for _ in range(12):  # up to 13 of the quiet key's: 533 against 551
        assert share.refusal("quiet", 0.0) is None
        share.start("quiet", 0.0)
    refused = share.refusal("flood", 0.0)
    assert refused is not None and refused.limit is Limit.SHARE
    assert share.refusal("quiet", 0.0) is None
    share.start("quiet", 0.0)  # 14 x 41 = 574: now the flood's turn comes first
    assert share.refusal("quiet", 0.0) is not None
    assert share.refusal("flood", 0.0) is None
    level = crowded({"a": 100.0, "b": 100.0})  # as much work in flight: both wait
    assert level.refusal("a", 0.0) is not None and level.refusal("b", 0.0) is not None


def test_a_keys_unit_is_its_recent_cost_per_operation_fading_alike() -> None:
    share = ProcessShare(capacity=1, cost_half_life_s=1.0)
    assert share.unit("never", 0.0) == 1.0
    share.charge("k", 100.0, 0.0)
    share.charge("k", 300.0, 0.0)
    assert share.unit("k", 0.0) == 200.0
    assert share.unit("k", 5.0) == 200.0  # both halve alike: the average stays
    share.charge("k", 0.0, 0.0)
    assert abs(share.unit("k", 0.0) - 400.0 / 3) < 1e-9
    share.charge("free", 0.0, 0.0)
    assert share.unit("free", 0.0) == 1.0  # at least 1: an operation is never free


def test_the_limiter_shares_requests_not_streams_and_a_turn_costs_no_token() -> None:
    limiter = Limiter(KeyLimits(), share=ProcessShare(capacity=1, active_s=1.0))
    flood, quiet = KeyLimits(rate=1 / 3600, burst=2), KeyLimits()
    assert limiter.admit("flood", flood, 0.0) is None  # one of its two tokens
    assert limiter.admit("quiet", quiet, 0.0) is None  # busy, but 0 < 1: it goes
    turn = limiter.admit("flood", flood, 0.0)
    assert turn is not None and turn.limit is Limit.SHARE  # 1 against 1: it waits
    assert limiter.peek("flood", 0.0) is None  # a turn is waited for, never refused early
    assert limiter.admit("quiet", quiet, 0.0, stream=True) is None  # streams are not shared
    limiter.release("quiet", 0.5)
    assert limiter.admit("flood", flood, 1.4) is not None  # quiet is between requests
    assert limiter.admit("flood", flood, 1.5) is None  # quiet is gone: its second token
    refused = limiter.admit("flood", flood, 1.5)
    assert refused is not None and refused.limit is Limit.RATE  # the turns took none


# Stage boundaries: who gives way to whom once operations are running.

def crowded(costs: dict[str, float], capacity: int = 1, now: float = 0.0) -> ProcessShare:
    """A process with one operation in flight per key, each key charged its cost."""
    share = ProcessShare(capacity=capacity)
    for key, cost in costs.items():
        share.start(key, now)
        share.charge(key, cost, now)
    return share


def test_in_a_crowded_process_the_key_that_asked_for_more_gives_way_to_the_lighter() -> None:
    share = crowded({"flood": 551.0, "quiet": 61.0})
    assert share.crowded
    assert share.should_yield("flood", 0.0)
    assert not share.should_yield("quiet", 0.0)  # the lightest in flight never waits


def test_a_key_alone_never_gives_way_however_crowded_or_dear() -> None:
    share = crowded({"flood": 10_000.0})
    started(share, "flood", 5)
    assert share.crowded and not share.should_yield("flood", 0.0)


def test_a_process_within_its_capacity_holds_no_one_up_and_no_capacity_is_no_sharing() -> None:
    assert not crowded({"flood": 551.0, "quiet": 61.0}, capacity=2).should_yield("flood", 0.0)
    off = ProcessShare(capacity=None)
    for key, cost in (("flood", 551.0), ("quiet", 61.0)):
        off.start(key, 0.0)
        off.charge(key, cost, 0.0)
    assert not off.crowded and not off.should_yield("flood", 0.0)


def test_only_a_lighter_key_with_an_operation_in_flight_is_given_way_to() -> None:
    share = crowded({"flood": 551.0, "quiet": 61.0})
    started(share, "flood", 1)  # still crowded without the quiet key's operation
    share.end("quiet", 0.0)  # thinking: active, but nothing of it runs
    assert share.crowded and not share.should_yield("flood", 0.0)


def test_equal_keys_give_way_to_neither() -> None:
    share = crowded({"a": 100.0, "b": 100.0})
    assert not share.should_yield("a", 0.0) and not share.should_yield("b", 0.0)


def test_a_key_that_is_not_running_has_nothing_to_yield() -> None:
    share = crowded({"flood": 551.0, "quiet": 61.0})
    share.charge("gone", 9_999.0, 0.0)
    assert not share.should_yield("gone", 0.0)


def test_recent_cost_halves_every_half_life_so_the_order_follows_what_keys_ask_now() -> None:
    share = ProcessShare(capacity=1, cost_half_life_s=1.0)
    share.charge("flood", 800.0, 0.0)
    assert share.recent_cost("flood", 0.0) == 800.0
    assert share.recent_cost("flood", 2.0) == 200.0
    share.charge("flood", 100.0, 2.0)
    assert share.recent_cost("flood", 2.0) == 300.0
    assert share.recent_cost("never", 5.0) == 0.0
    share.start("flood", 3.0)
    share.start("quiet", 3.0)
    share.charge("quiet", 100.0, 3.0)  # flood's 150 by now: it gives way
    assert share.should_yield("flood", 3.0)
    assert share.should_yield("flood", 4.0)  # 75 against 50 a second later: still more
    share.charge("quiet", 100.0, 4.0)  # now the quiet key asks for more: 150 against 75
    assert not share.should_yield("flood", 4.0) and share.should_yield("quiet", 4.0)


def test_a_key_gone_quiet_is_forgotten_with_its_cost() -> None:
    share = ProcessShare(capacity=1, active_s=1.0)
    share.start("quiet", 0.0)
    share.charge("quiet", 61.0, 0.0)
    share.end("quiet", 0.0)
    share.start("flood", 5.0)
    assert share.heaviest_other("flood", 5.0) is None
    assert share.recent_cost("quiet", 5.0) == 0.0


@EXAMPLES
@given(st.integers(1, 4), CHARGED_STEPS)
def test_some_running_key_never_waits_so_waiting_cannot_go_round_in_a_circle(
        capacity: int, steps: list[tuple[str, str, int]]) -> None:
    """Whatever the starts, ends, charges and pauses: while anything runs, at least one
    key in flight does not give way (the one that asked for least lately), a key alone
    or a process within its capacity never does, and whoever gives way has a lighter
    key running beside it."""
    share = ProcessShare(capacity=capacity, active_s=1.0, cost_half_life_s=1.0)
    now = 0.0
    for action, key, cost in steps:
        now = replayed(share, action, key, cost, now)
        if action == "start":
            share.start(key, now)
        running = [k for k in "abcd" if share.in_flight(k)]
        yielding = [k for k in running if share.should_yield(k, now)]
        if running:
            assert len(yielding) < len(running)
        if len(running) <= 1 or share.total <= capacity:
            assert not yielding
        for k in yielding:
            assert any(share.recent_cost(o, now) < share.recent_cost(k, now)
                       for o in running if o != k)


def test_the_limiter_orders_keys_by_the_cost_they_asked_for_refused_or_not() -> None:
    share = ProcessShare(capacity=1, active_s=1.0)
    limiter = Limiter(KeyLimits(), share=share)
    budget = KeyLimits(cost_rate=1 / 3600, cost_burst=600)
    assert limiter.admit("flood", budget, 0.0) is None
    assert limiter.admit("quiet", KeyLimits(), 0.0) is None
    assert limiter.charge("flood", budget, 551, 0.0) is None
    assert limiter.charge("quiet", KeyLimits(), 61, 0.0) is None  # no budget: still counted
    assert share.should_yield("flood", 0.0) and not share.should_yield("quiet", 0.0)
    refused = limiter.charge("flood", budget, 551, 0.0)  # 49 left of 600: refused
    assert refused is not None and refused.limit is Limit.COST
    # Not charged to the budget, but asked for: it orders the keys (it did not before,
    # and a flood mostly refused by its budget then counted as the lightest key).
    assert share.recent_cost("flood", 0.0) == 2 * 551.0


def test_what_a_cost_budget_refuses_still_counts_as_asked_for() -> None:
    """A flood whose dear searches its cost budget mostly refuses is served little; by
    what it was served it would be the lightest key, which a tenant's light searches
    give way to. By what it asked for, it is the heaviest, and it gives way."""
    share = ProcessShare(capacity=1)
    limiter = Limiter(KeyLimits(), share=share)
    flood = KeyLimits(cost_rate=100.0, cost_burst=100.0)
    assert limiter.charge("flood", flood, 551, 0.0) is None  # a full bucket, into debt
    assert all(limiter.charge("flood", flood, 551, 0.0) is not None for _ in range(5))
    assert all(limiter.charge("quiet", KeyLimits(), 41, 0.0) is None for _ in range(20))
    share.start("flood", 0.0)
    share.start("quiet", 0.0)  # two in flight: the process is crowded
    assert share.recent_cost("flood", 0.0) == 6 * 551
    assert not share.should_yield("quiet", 0.0)
    assert share.should_yield("flood", 0.0)
