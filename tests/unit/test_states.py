"""States a person is in one of at a time (memlattice.core.statements.states)."""

from __future__ import annotations

import pytest

from memlattice.core.statements.compare import Verdict, compare
from memlattice.core.statements.contrast import profile
from memlattice.core.statements.of_memory import speaker_states
from memlattice.core.statements.states import State, states_of


def states(text: str) -> frozenset[State]:
    return profile(text, speaker="rui").states


def verdict(older: str, newer: str, *, by: str = "rui") -> Verdict | None:
    """What the write path decides of two memories' state statements (recorded
    under their attribute, compared by memlattice.core.statements.compare)."""
    found = [compare(a, b, same_source=by == "rui")
             for a in speaker_states(older, "rui") for b in speaker_states(newer, by)]
    return next((v for v in found if v is not None), None)


@pytest.mark.parametrize(("older", "newer", "attribute"), [
    ("Honestly I'm single and happy about it.", "I've been dating a nurse called Ilse.",
     "relationship status"),
    ("My boyfriend cooks on Sundays.", "We got engaged in Porto!", "relationship status"),
    ("I'm vegetarian, except for cheese.", "From this month I'm vegan.", "diet"),
    ("I eat meat most days.", "I quit eating meat after the documentary.", "diet"),
])
def test_another_state_of_the_speaker_is_an_update(older: str, newer: str,
                                                   attribute: str) -> None:
    found = verdict(older, newer)
    assert found is not None and found.kind == "update"
    assert found.attribute == attribute


@pytest.mark.parametrize(("older", "newer"), [
    ("I'm vegetarian.", "I'm vegetarian, still."),                     # the same state
    ("I'm single.", "My sister just got married."),                    # someone else's
    ("I'm single.", "She told me she is dating someone."),            # someone else's
    ("I'm single.", "Maybe I should start dating again."),            # a wish
    ("I'm married.", "We were dating for years before the wedding."),  # the past
])
def test_no_state_change_without_the_speaker_changing_state(older: str, newer: str) -> None:
    assert verdict(older, newer) is None


def test_another_speaker_s_state_is_not_the_speaker_s() -> None:
    assert verdict("I'm single.", "I'm married.", by="ana") is None
    assert verdict("I'm vegetarian.", "My husband eats meat every day.") is None


def test_a_state_left_is_a_change_as_much_as_a_state_entered() -> None:
    left = states("I stopped eating meat last spring.")
    assert State("diet", "omnivore", left=True) in left
    found = verdict("I eat meat, mostly chicken.", "I stopped eating meat last spring.")
    assert found is not None and found.kind == "update" and "no longer" in found.reason


def test_a_word_of_two_senses_names_no_state() -> None:
    assert states("We proposed a new budget to finance.") == frozenset()
    assert states("I'm single-handedly running the release.") == frozenset()


def test_a_memory_not_in_the_first_person_states_nothing_of_its_speaker() -> None:
    assert states("The vegan place on Rua Augusta closed.") == frozenset()
    assert states_of([["vegan", "options", "are", "limited"]]) == frozenset()


def test_another_home_of_the_speaker_is_an_update() -> None:
    found = verdict("We're renting a little flat in Aarhus, near the harbour.",
                    "We signed for a house in Odense, the boxes are everywhere.")
    assert found is not None and found.attribute == "home"


@pytest.mark.parametrize("newer", [
    "We stayed in a flat in Odense for the weekend.",              # a trip
    "My brother moved to Odense, into a flat by the canal.",       # someone else's
    "We will rent a house in Odense next year.",                   # a plan
])
def test_a_place_that_is_not_the_speaker_s_home_now_is_no_update(newer: str) -> None:
    assert verdict("We're renting a flat in Aarhus.", newer) is None
