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

Where someone lives is the same kind of attribute with an open set of values:
a place named in a first-person clause that speaks of a home ("we're renting a
terrace in Leeds", "got the keys to our own house in Bristol") is the speaker's
home, unless the clause is about a trip, someone else, the past or a plan.

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
        # (not "proposed": one proposes plans and budgets as often as marriage)
        "engaged": (("engaged",), ("my", "fiancé"), ("my", "fiance"), ("my", "fiancée"),
                    ("my", "fiancee")),
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
                     "mother", "father", "son", "daughter", "cousin", "parents", "kids",
                     "husband", "wife", "boyfriend", "girlfriend", "partner", "fiancé",
                     "fiance", "fiancée", "fiancee"})
# Words that put a clause's state in the past or someone else's story.
_ELSEWHERE = frozenset({"before", "ago", "used", "was", "were", "when", "until", "if",
                        "would", "could", "should", "might", "maybe", "wish", "hope",
                        "want", "wants", "thinking", "planning"})


# Words of a home: where one lives, what one rents or owns, moving in.
_HOME = frozenset({"live", "lives", "living", "home", "house", "flat", "apartment", "condo",
                   "lease", "rent", "renting", "rented", "keys", "mortgage", "landlord",
                   "neighbourhood", "neighborhood", "moved", "relocated", "settled"})
# Words of being somewhere for a while only, or of a place that is not a home.
_AWAY = frozenset({"trip", "holiday", "holidays", "vacation", "visit", "visiting", "visited",
                   "stayed", "staying", "hotel", "airbnb", "weekend", "travel", "travelling",
                   "traveling", "tour", "conference", "flight", "flew", "next", "soon",
                   "will", "tomorrow", "office", "work"})


@dataclass(frozen=True, slots=True)
class State:
    attribute: str
    state: str
    left: bool  # the clause says the speaker left this state


# Each phrase under its first word: a clause is only tried for the phrases whose
# first word it holds.
_PHRASES_BY_FIRST: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {}
for _attribute, _states in STATES.items():
    for _state, _phrases in _states.items():
        for _phrase in _phrases:
            _PHRASES_BY_FIRST.setdefault(_phrase[0], []).append((_attribute, _state, _phrase))


def states_of(clauses: Sequence[Sequence[str]]) -> frozenset[State]:
    """The states the speaker names of themself in `clauses` (lower-case words of
    one memory): the memory speaks in the first person, and the clause of the state
    is about no one else ("so fully plant-based from now on" continues "I cut out
    dairy"; "she got married" is someone else's)."""
    if not any(_FIRST_PERSON & set(c) or "my" in c for c in clauses):
        return frozenset()
    found: set[State] = set()
    for clause, own in zip(clauses, _the_speaker_s(clauses)):
        if _ELSEWHERE & set(clause):
            continue
        for first in _PHRASES_BY_FIRST.keys() & set(clause):
            for attribute, state, phrase in _PHRASES_BY_FIRST[first]:
                at = _find(clause, phrase)
                # "my husband" names the speaker's state in any clause
                if at is not None and (own or phrase[0] == "my"):
                    left = bool(_LEAVING & set(clause[max(0, at - 3):at]))
                    found.add(State(attribute, state, left))
    return frozenset(found)


def home_places(clauses: Sequence[tuple[Sequence[str], Sequence[str]]],
                first_person: bool) -> frozenset[str]:
    """The places a first-person memory names as the speaker's home: each clause
    given as (its lower-case words, the names in it)."""
    if not first_person:
        return frozenset()
    places: set[str] = set()
    owned = _the_speaker_s([words for words, _ in clauses])
    for (words, names), own in zip(clauses, owned):
        seen = set(words)
        if own and names and _HOME & seen and not (_AWAY | _ELSEWHERE) & seen:
            places.update(names)
    return frozenset(places)


def about_others_only(clauses: Sequence[Sequence[str]]) -> bool:
    """Whether a memory speaks of someone else and never of its speaker ("my
    brother moved to Odense, into a flat by the canal")."""
    owned = _the_speaker_s(clauses)
    return not all(owned) and not any(
        own and (_FIRST_PERSON & set(c) or "my" in c) for c, own in zip(clauses, owned))


def _the_speaker_s(clauses: Sequence[Sequence[str]]) -> list[bool]:
    """Whether each clause is about the speaker: one that names no one goes on
    about whom the clause before it named ("my sister moved to Lyon, into a flat
    in Croix-Rousse" is all the sister's)."""
    out: list[bool] = []
    own = True
    for clause in clauses:
        words = set(clause)
        if _OTHERS & words:
            own = False
        elif _FIRST_PERSON & words or "my" in words:
            own = True
        out.append(own)
    return out


def _find(clause: Sequence[str], phrase: tuple[str, ...]) -> int | None:
    n = len(phrase)
    for i in range(len(clause) - n + 1):
        if tuple(clause[i:i + n]) == phrase:
            return i
    return None
