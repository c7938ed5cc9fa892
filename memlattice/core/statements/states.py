"""States a person is in one of at a time, told by the words that name them.

Some of what people say about themselves has no value a frame or a contrast can
compare: "I'm single", "I've been seeing a guy from my cooking class", "Jonas
and I got married"; "I'm vegetarian", "fully plant-based from now on", "I
stopped eating meat". Each names a state of an attribute a person is in exactly
one state of at a time (relationship status, diet), so a speaker who names
another state of it has changed state, whatever else the sentence says. English
names these states with a small, closed set of words (the lists below are
general vocabulary of each attribute, not phrasings of any conversation), and a
speaker names their own state in the first person ("I", "we", or the state
word with "my": "my husband").

A state word after a verb of ending or a negation ("stopped eating meat", "no
longer vegetarian") is a state left, which changes the state as much as a new one.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# attribute -> state -> the word sequences (lower case, as tokenised) that name it.
STATES: dict[str, dict[str, tuple[tuple[str, ...], ...]]] = {
    "relationship status": {
        "single": (("i'm", "single"), ("am", "single"), ("being", "single"),
                   ("still", "single"), ("single", "again")),
        "dating": (("my", "boyfriend"), ("my", "girlfriend"), ("dating",),
                   ("seeing", "someone"), ("seeing", "a", "guy"), ("seeing", "a", "girl"),
                   ("seeing", "a", "man"), ("seeing", "a", "woman"),
                   ("in", "a", "relationship")),
        "engaged": (("engaged",), ("my", "fiancé"), ("my", "fiance"), ("my", "fiancée"),
                    ("my", "fiancee"), ("proposed",)),
        "married": (("married",), ("my", "husband"), ("my", "wife")),
        "separated": (("divorced",), ("split", "up"), ("broke", "up"), ("separated",)),
    },
    "diet": {
        "omnivore": (("omnivore",), ("eat", "everything"), ("eat", "meat"),
                     ("eating", "meat"), ("eats", "meat")),
        "pescatarian": (("pescatarian",), ("eat", "fish"), ("eating", "fish")),
        "vegetarian": (("vegetarian",), ("veggie",)),
        "vegan": (("vegan",), ("plant-based",)),
    },
}

# Words a speaker talks of themself with.
_FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "we", "we're", "we've", "me", "us"})
# Words before a state that leave it: "stopped eating meat", "no longer vegetarian".
_LEAVING = frozenset({"stopped", "stop", "quit", "quitting", "cut", "gave", "longer", "not",
                      "never", "don't", "didn't", "anymore", "no"})
# Whom a clause may be about instead of the speaker.
_OTHERS = frozenset({"he", "she", "they", "he's", "she's", "they're", "his", "her", "their",
                     "you", "you're", "your", "sister", "brother", "friend", "mom", "dad",
                     "mother", "father", "son", "daughter", "cousin", "parents", "kids"})
# Words that put a clause's state in the past or someone else's story.
_ELSEWHERE = frozenset({"before", "ago", "used", "was", "were", "when", "until", "if",
                        "would", "could", "should", "might", "maybe", "wish", "hope",
                        "want", "wants", "thinking", "planning"})


@dataclass(frozen=True, slots=True)
class State:
    attribute: str
    state: str
    left: bool  # the clause says the speaker left this state


def states_of(clauses: Sequence[Sequence[str]]) -> frozenset[State]:
    """The states the speaker names of themself in `clauses` (lower-case words of
    one memory): the memory speaks in the first person, and the clause of the state
    is about no one else ("so fully plant-based from now on" continues "I cut out
    dairy"; "she got married" is someone else's)."""
    if not any(_FIRST_PERSON & set(c) or "my" in c for c in clauses):
        return frozenset()
    found: set[State] = set()
    for clause in clauses:
        words = set(clause)
        if _ELSEWHERE & words or _OTHERS & words:
            continue
        for attribute, states in STATES.items():
            for state, phrases in states.items():
                for phrase in phrases:
                    at = _find(clause, phrase)
                    if at is not None:
                        left = bool(_LEAVING & set(clause[max(0, at - 3):at]))
                        found.add(State(attribute, state, left))
    return frozenset(found)


def _find(clause: Sequence[str], phrase: tuple[str, ...]) -> int | None:
    n = len(phrase)
    for i in range(len(clause) - n + 1):
        if tuple(clause[i:i + n]) == phrase:
            return i
    return None


def changed_state(older: frozenset[State], newer: frozenset[State],
                  ) -> tuple[str, str, str] | None:
    """(attribute, the older state, what the newer says) when the newer memory puts
    the speaker in another state of an attribute the older one stated, or says they
    left the older state; None otherwise."""
    for attribute in sorted({s.attribute for s in older} & {s.attribute for s in newer}):
        held = {s.state for s in older if s.attribute == attribute and not s.left}
        entered = {s.state for s in newer if s.attribute == attribute and not s.left}
        left = {s.state for s in newer if s.attribute == attribute and s.left}
        if not held:
            continue
        if entered and not entered & held:
            return attribute, min(held), min(entered)
        if left & held:
            return attribute, min(left & held), "left " + min(left & held)
    return None
