"""States a person is in one of at a time (memlattice.core.statements.states)."""

from __future__ import annotations

import pytest

from memlattice.core.statements.contrast import contrast, profile
from memlattice.core.statements.states import State, changed_state, states_of


def states(text: str) -> frozenset[State]:
    return profile(text, speaker="rui").states


@pytest.mark.parametrize(("older", "newer", "attribute"), [
    ("Honestly I'm single and happy about it.", "I've been dating a nurse called Ilse.",
     "relationship status"),
    ("My boyfriend cooks on Sundays.", "We got engaged in Porto!", "relationship status"),
    ("I'm vegetarian, except for cheese.", "From this month I'm vegan.", "diet"),
    ("I eat meat most days.", "I quit eating meat after the documentary.", "diet"),
])
def test_another_state_of_the_speaker_is_an_update(older: str, newer: str,
                                                   attribute: str) -> None:
    verdict = contrast(profile(older, speaker="rui"), profile(newer, speaker="rui"),
                       same_source=True)
    assert verdict is not None and verdict.kind == "update"
    assert verdict.attribute == attribute


@pytest.mark.parametrize(("older", "newer"), [
    ("I'm vegetarian.", "I'm vegetarian, still."),                     # the same state
    ("I'm single.", "My sister just got married."),                    # someone else's
    ("I'm single.", "She told me she is dating someone."),            # someone else's
    ("I'm single.", "Maybe I should start dating again."),            # a wish
    ("I'm married.", "We were dating for years before the wedding."),  # the past
])
def test_no_state_change_without_the_speaker_changing_state(older: str, newer: str) -> None:
    assert contrast(profile(older, speaker="rui"), profile(newer, speaker="rui"),
                    same_source=True) is None


def test_another_speaker_s_state_is_not_the_speaker_s() -> None:
    assert contrast(profile("I'm single.", speaker="rui"),
                    profile("I'm married.", speaker="ana"), same_source=False) is None


def test_a_state_left_is_a_change_as_much_as_a_state_entered() -> None:
    left = states("I stopped eating meat last spring.")
    assert State("diet", "omnivore", left=True) in left
    assert changed_state(states("I eat meat, mostly chicken."), left) == (
        "diet", "omnivore", "left omnivore")


def test_a_memory_not_in_the_first_person_states_nothing_of_its_speaker() -> None:
    assert states("The vegan place on Rua Augusta closed.") == frozenset()
    assert states_of([["vegan", "options", "are", "limited"]]) == frozenset()
