"""How long a request waits for its turn (memlattice.core.turn_waits): a key's own
queue waits while the key is served; past it, and for a key not served, the plain
bound holds."""

from __future__ import annotations

from memlattice.core.turn_waits import TurnWaits


def waits(queue: int = 2, max_wait_s: float = 30.0) -> TurnWaits:
    return TurnWaits(wait_s=1.0, queue=queue, max_wait_s=max_wait_s)


def test_a_request_whose_key_is_not_served_waits_the_plain_bound() -> None:
    turns = waits()
    waiter = turns.arrive("page", now=10.0)
    assert waiter.queued
    assert turns.deadline(waiter) == 11.0
    turns.served("other", now=10.8)  # another key's operation ended: no more time
    assert turns.deadline(waiter) == 11.0


def test_each_end_of_its_keys_operations_gives_a_queued_request_the_bound_again() -> None:
    turns = waits()
    waiter = turns.arrive("page", now=10.0)
    turns.served("page", now=10.8)
    assert turns.deadline(waiter) == 11.8
    turns.served("page", now=11.6)
    assert turns.deadline(waiter) == 12.6


def test_requests_past_the_keys_queue_wait_from_their_arrival_only() -> None:
    turns = waits(queue=2)
    first, second, third = (turns.arrive("flood", now=10.0 + i / 10) for i in range(3))
    assert (first.queued, second.queued, third.queued) == (True, True, False)
    turns.served("flood", now=10.9)
    assert turns.deadline(second) == 11.9
    assert turns.deadline(third) == 11.2
    other = turns.arrive("page", now=10.5)  # each key has a queue of its own
    assert other.queued


def test_queue_zero_is_the_plain_bound_for_every_request() -> None:
    turns = waits(queue=0)
    waiter = turns.arrive("page", now=10.0)
    turns.served("page", now=10.9)
    assert not waiter.queued and turns.deadline(waiter) == 11.0


def test_no_request_waits_past_the_longest_wait() -> None:
    turns = waits(max_wait_s=2.5)
    waiter = turns.arrive("page", now=10.0)
    turns.served("page", now=12.0)
    assert turns.deadline(waiter) == 12.5


def test_an_end_before_a_request_arrived_gives_it_nothing() -> None:
    turns = waits()
    early = turns.arrive("page", now=10.0)
    turns.served("page", now=10.5)
    late = turns.arrive("page", now=10.7)
    assert turns.deadline(late) == 11.7
    assert turns.deadline(early) == 11.5


def test_leaving_forgets_a_key_once_none_of_its_requests_waits() -> None:
    turns = waits()
    first, second = turns.arrive("page", now=10.0), turns.arrive("page", now=10.0)
    turns.served("page", now=10.5)
    turns.leave(first)
    assert turns._waiting == {"page": 1} and turns.deadline(second) == 11.5
    turns.leave(second)
    assert turns._waiting == {} and turns._served == {}
    turns.served("page", now=10.9)  # nobody waits: nothing is kept
    again = turns.arrive("page", now=20.0)
    assert again.queued and turns.deadline(again) == 21.0
