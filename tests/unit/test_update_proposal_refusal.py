"""`graph.updates.proposals.refusal`: why a writer may not say one memory replaces another."""

from __future__ import annotations

from typing import Any

import pytest

from memlattice.core.errors import Conflict, EpisodicImmutable, ValidationError
from memlattice.graph.updates.proposals import refusal


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


def test_a_confirmed_link_said_again_changes_nothing_even_with_the_older_superseded() -> None:
    confirmed = row(link={"id": "u", "status": "confirmed"}, olderStatus="superseded")
    assert refusal(confirmed, newer="n", older="o") is None


def test_a_rejection_or_a_link_the_other_way_wins_over_order() -> None:
    rejected = refusal(row(link={"id": "u", "status": "rejected"}, inOrder=False),
                       newer="n", older="o")
    assert isinstance(rejected, Conflict)
    assert isinstance(refusal(row(reverse="u2", inOrder=False), newer="n", older="o"),
                      Conflict)
