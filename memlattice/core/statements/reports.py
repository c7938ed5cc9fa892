"""Updates told by someone else: "did you hear about Haruto?" "he quit, he's at Kestrel now".

People in a chat often learn of a change from a third person: a friend reports
that another moved, quit or sold the car. What the report states is a statement
of the person it is about, which may replace what that person said of
themself. The reading here is the one English gives such a report: it is about

1. **someone who speaks there**, named as the subject of one of its sentences
   ("Ana quit Siemens"), or
2. **the one person the conversation just named**, when the report says "he" or
   "she" and names nobody who speaks: "did you hear about Haruto?" - "no, what"
   - "he handed in his notice" (the nearest turns before it, up to `LOOK_BACK`,
   must name exactly one such person, and the first that names any decides).

Only people who speak in the conversation count: they are the ones whose own
first-person statements a report can update, and a pronoun whose antecedent is
anyone else (a sister, a colleague who never writes) reads nothing. Told in that
person's voice ("I handed in my notice"), the report is read by the same rules
as their own words (memlattice.core.statements.extract, .states, .contrast).
Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from memlattice.core.entities import entity_key, mentions
from memlattice.core.statements.lexicon import DISCOURSE

# How many turns back a pronoun finds the person it stands for.
LOOK_BACK = 2
# Third-person words and what they are in the voice of the person they stand for.
_IN_THEIR_VOICE = {"he": "I", "she": "I", "he's": "I'm", "she's": "I'm", "him": "me",
                   "his": "my", "her": "my", "hers": "mine", "himself": "myself",
                   "herself": "myself", "he'd": "I'd", "she'd": "I'd", "he'll": "I'll",
                   "she'll": "I'll"}
_SUBJECT_PRONOUNS = frozenset({"he", "she", "he's", "she's", "he'd", "she'd", "he'll",
                               "she'll"})
# The reporter's own words: they speak of someone else, so "I" is not the person.
_REPORTER = {"i": "someone", "i'm": "someone is", "i've": "someone has", "i'd": "someone would",
             "i'll": "someone will", "me": "someone", "my": "someone's", "mine": "someone's",
             "myself": "someone"}
_WORD = re.compile(r"[^\W\d_][\w']*")
_SURNAME = r"(?!I\b|I')[A-Z][\w'-]+"
# Words after a name that say it is spoken to, not spoken of: a pronoun of the
# conversation's own people, or a question.
_ADDRESSED = frozenset({"i", "i'm", "i've", "i'd", "i'll", "you", "you're", "you've", "we",
                        "we're", "me", "us", "how", "how's", "what", "what's", "where",
                        "when", "why", "who", "are", "do", "did", "can", "could", "will",
                        "would", "have", "thanks", "please"})
_SENTENCE_START = re.compile(r"(?:^|[.!?;:—–-]\s+|\n)\s*$")
# Discourse words before a sentence's subject ("yes! btw Ana left Siemens", "oh and
# Ana moved"): they leave the name its subject. "what" is left out: "what Ana said"
# makes the name the subject of a clause inside another.
_DISCOURSE_BEFORE = re.compile(
    r"(?i)(?:\b(?:" + "|".join(sorted(DISCOURSE - {"what"})) + r")\b[\s,]*)+$")


def _people_named(text: str, people: Collection[str], speaker: str | None) -> list[str]:
    """The people who speak there (entity keys) whom `text` names, other than its speaker."""
    out = []
    for mention in mentions(text):  # "Ana and Leah" is two of them
        words = set(mention.key.split())
        out += [person for person in people
                if person != speaker and person.split()[0] in words]
    return list(dict.fromkeys(out))


def _opens_a_sentence(text: str, person: str) -> bool:
    """Whether `person` is named as a sentence's subject: at its start, and not
    spoken to ("Oskar, I'm in", "Hedvig how's the new ride")."""
    first = person.split()[0]
    for match in re.finditer(rf"\b(?i:{re.escape(first)})\b(?:\s+{_SURNAME})?", text):
        after = _WORD.match(text[match.end():].lstrip())
        before = _DISCOURSE_BEFORE.sub("", text[:match.start()])
        if (_SENTENCE_START.search(before) and after is not None
                and text[match.end():match.end() + 1].isspace()
                and after.group(0).lower() not in _ADDRESSED):
            return True
    return False


def reported_person(text: str, *, speaker: str | None, earlier: Sequence[str],
                    people: Collection[str]) -> str | None:
    """Who `text` (said by `speaker`) reports on, if anyone (module docstring):
    `earlier` are the texts of the turns before it, nearest last; `people` the
    entity keys of everyone who speaks in the conversation."""
    named = _people_named(text, people, speaker)
    if named:
        leading = [p for p in named if _opens_a_sentence(text, p)]
        return leading[0] if len(leading) == 1 and len(named) == 1 else None
    words = {w.lower() for w in _WORD.findall(text)}
    if not words & _SUBJECT_PRONOUNS:
        return None
    for before in reversed(earlier[-LOOK_BACK:]):
        found = _people_named(before, people, speaker)
        if found:
            return found[0] if len(found) == 1 else None
    return None


def in_their_voice(text: str, person: str) -> str:
    """`text` as `person` would say it: their name and "he"/"she" become "I", the
    reporter's own "I" becomes "someone" ("Ana quit Siemens, she's at Bosch now" ->
    "I quit Siemens, I'm at Bosch now")."""
    first = person.split()[0]
    if " " in person:  # "Ana López" is one word of hers: "I", not "I López"
        text = re.sub(rf"(?i)\b{re.escape(first)}\s+{re.escape(person.split()[-1])}\b",
                      first.capitalize(), text)

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        low = word.lower()
        if entity_key(word.removesuffix("'s")).split()[:1] == [first]:
            return "my" if low.endswith("'s") else "I"
        if low in _IN_THEIR_VOICE:
            return _IN_THEIR_VOICE[low]
        return _REPORTER.get(low, word)

    return _WORD.sub(swap, text)
