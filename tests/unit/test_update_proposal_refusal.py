"""`graph.updates.proposals.refusal`: why a writer may not say one memory replaces another."""

from __future__ import annotations

from typing import Any

import pytest

from memlattice.core.errors import Conflict, EpisodicImmutable, ValidationError
from memlattice.graph.codec import memory_from_properties
from memlattice.graph.updates.proposals import Replaceable, refusal
from memlattice.services.updates import offered


def row(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"newerStatus": "active", "olderStatus": "active", "inOrder": True,
                            "olderType": "note", "link": None, "reverse": None, "cycle": False}
    return {**base, **changes}


def test_two_active_memories_in_order_may_be_linked() -> None:
    assert refusal(row(), newer="n", older="o") is None
    assert refusal(row(link={"id": "u", "status": "candidate"}), newer="n", older="o") is None


@pytest.mark.parametrize(("changes", "error"), [
    ({"reverse": "u2"}, Conflict),
    ({"link": {"id": "u", "status": "rejected"}}, Conflict),
    ({"inOrder": False}, ValidationError),
    ({"olderType": "episodic"}, EpisodicImmutable),
    ({"cycle": True}, Conflict),
    ({"newerStatus": "superseded"}, Conflict),
    ({"olderStatus": "forgotten"}, Conflict),
])
def test_what_is_refused(changes: dict[str, Any], error: type[Exception]) -> None:
    assert isinstance(refusal(row(**changes), newer="n", older="o"), error)


def test_a_cycle_says_why_as_addedge_does() -> None:
    refused = refusal(row(cycle=True), newer="n", older="o")
    assert isinstance(refused, Conflict)
    assert refused.extensions()["reason"] == "SUPERSEDES_CYCLE"


def test_a_confirmed_link_said_again_changes_nothing_even_with_the_older_superseded() -> None:
    confirmed = row(link={"id": "u", "status": "confirmed"}, olderStatus="superseded")
    assert refusal(confirmed, newer="n", older="o") is None


def test_a_rejection_or_a_link_the_other_way_wins_over_order() -> None:
    rejected = refusal(row(link={"id": "u", "status": "rejected"}, inOrder=False),
                       newer="n", older="o")
    assert isinstance(rejected, Conflict)
    assert isinstance(refusal(row(reverse="u2", inOrder=False), newer="n", older="o"),
                      Conflict)


def offer(id: str, vector: float | None, text: float | None) -> Replaceable:
    memory = memory_from_properties({"id": id, "namespace": "ns", "content": id, "status": "active",
                                     "createdAt": 0, "updatedAt": 0, "version": 1})
    return Replaceable(memory=memory, similarity=None, update=None, vector_score=vector,
                       text_score=text)


def test_the_offer_fuses_both_indexes_orders_and_keeps_the_first_n() -> None:
    rows = [offer("near", 0.95, None), offer("both", 0.90, 3.0), offer("words", None, 9.0),
            offer("far", 0.40, None)]
    assert [r.memory.id for r in offered(rows, 2)] == ["both", "near"]
    assert [r.memory.id for r in offered(rows, 10)][-1] == "far"
    assert offered([], 3) == []
