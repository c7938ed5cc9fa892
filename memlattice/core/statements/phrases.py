"""Where a clause's noun phrases and values start and end (the statement reading's
scanning, memlattice.core.statements.extract).

A noun phrase runs to a copula, a verb, a preposition or a possessive; a value runs
to the first word that starts an adjunct (lexicon.VALUE_STOPS) or a length of time
("joined Accenture two weeks ago"). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from memlattice.core.entities import CALENDAR_WORDS, SENTENCE_OPENERS
from memlattice.core.statements import lexicon as lx
from memlattice.core.statements.tokens import POSS, stem

MAX_NOUN_PHRASE = 4
MAX_VALUE = 6


def is_name(word: str, original: str, first: bool) -> bool:
    """Whether a word is (part of) a name: capitalised, and not only because it opens
    the sentence (`first`) or is a pronoun, a discourse word or a calendar word."""
    return (original[:1].isupper() and word not in lx.UNRESOLVED and word not in lx.DISCOURSE
            and word not in CALENDAR_WORDS and word not in {"i", POSS}
            and not (first and word in SENTENCE_OPENERS))


def noun_phrase(clause: Sequence[tuple[str, str]], i: int) -> tuple[list[str], int]:
    """Lower-case words of a noun phrase from `i` (determiners dropped), up to a
    copula, a verb of a frame, a preposition or a possessive; and where it ends."""
    words: list[str] = []
    while i < len(clause) and len(words) < MAX_NOUN_PHRASE:
        w, _o = clause[i]
        if (w in lx.COPULA or w in lx.AUXILIARIES or w in lx.NEGATIONS or w == POSS
                or w in lx.PREPOSITIONS or w == "," or w in lx.HAVE_VERBS
                or (words and is_verb(w))):
            break
        if w not in lx.DETERMINERS:
            words.append(w)
        i += 1
    return words, i


def is_verb(word: str) -> bool:
    """Whether a word may be the clause's verb (a frame's, a change's, having), or
    looks like an inflected one."""
    s = stem(word)
    return (any(s == v for v, _ in lx.FRAMES) or s in lx.CHANGE_VERBS
            or s in lx.OBJECT_FRAMES or word in lx.HAVE_VERBS
            or (word.endswith(("ed", "es")) and len(word) > 4))


def value_words(clause: Sequence[tuple[str, str]], i: int) -> tuple[list[str], list[str], int]:
    """The value's words (lower case, as written) from `i` to the first stop."""
    low: list[str] = []
    orig: list[str] = []
    while i < len(clause) and len(low) < MAX_VALUE:
        w, o = clause[i]
        if low and (w in lx.VALUE_STOPS or w == POSS or starts_a_duration(clause, i)):
            break
        if not low and w in {",", "to", "at", "in", "on"}:
            i += 1
            continue
        low.append(w)
        orig.append(o)
        i += 1
    return low, orig, i


def starts_a_duration(clause: Sequence[tuple[str, str]], i: int) -> bool:
    """Whether a length of time starts at `i` ("two weeks ago", "3 months now", "a
    year"): an adjunct that says when or how long, never part of a value."""
    if i + 1 >= len(clause):
        return False
    w, unit = clause[i][0], clause[i + 1][0]
    return (w in lx.COUNT_WORDS or w.isdigit()) and unit.removesuffix("s") in lx.DURATION_UNITS
