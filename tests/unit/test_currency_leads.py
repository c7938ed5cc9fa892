"""A superseded memory as a lead (memlattice.search.currency.states_asked_for): the
search finds it, its successor takes its place, and it is shown only as asked."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memlattice.search.currency import prefer_current, states_asked_for
from memlattice.search.ranking import Scored

STATUS = {"old": "superseded", "new": "active", "x": "active", "y": "active"}


def scored(*ids: str) -> list[Scored]:
    return [Scored(id=id, score=1.0 - i / 10) for i, id in enumerate(ids)]


def test_a_superseded_lead_leaves_its_place_to_its_successor() -> None:
    # the search found the superseded state best and its successor last
    order = prefer_current(scored("old", "x", "new"), {"old": "new"}, past=False)
    shown = states_asked_for(order, STATUS, statuses=("active",))
    assert [s.id for s in shown] == ["new", "x"]
    assert shown[0].score == 1.0  # the place the superseded state held
    # a successor the search missed enters in its place, for a question about the link
    order = prefer_current(scored("x", "old", "y"), {"old": "new"}, past=False,
                           asked={"old"})
    assert [s.id for s in states_asked_for(order, STATUS, statuses=("active",))] == [
        "x", "new", "y"]


def test_the_past_keeps_the_state_that_held_then_only_where_asked() -> None:
    order = prefer_current(scored("new", "x", "old"), {"old": "new"}, past=True)
    held = states_asked_for(order, STATUS, statuses=("active",), held_then={"old"})
    assert [s.id for s in held] == ["old", "new", "x"]
    respected = states_asked_for(order, STATUS, statuses=("active",))
    assert [s.id for s in respected] == ["new", "x"]
    both = states_asked_for(order, STATUS, statuses=("active", "superseded"))
    assert [s.id for s in both] == ["old", "new", "x"]


def test_a_memory_of_unknown_status_is_never_dropped() -> None:
    assert [s.id for s in states_asked_for(scored("z", "old"), STATUS,
                                           statuses=("active",))] == ["z"]


@given(st.permutations(["old", "new", "x", "y"]), st.booleans())
def test_only_memories_of_a_status_not_asked_for_leave(ids: list[str], past: bool) -> None:
    shown = states_asked_for(prefer_current(scored(*ids), {"old": "new"}, past=past),
                             STATUS, statuses=("active",))
    assert sorted(s.id for s in shown) == ["new", "x", "y"]
