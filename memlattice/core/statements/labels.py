"""Lines of the form "label: rest", as notes, logs and chats write them.

"New phone number: 0151 234 5678", "Standup: 10:30", "Update: the standup moved
to Thursday", "Todo: Call Ana", "Incident: 2026-04-02, the primary failed over":
what such a line states depends on what follows the colon (`labelled`). The
statement reading (memlattice.core.statements.extract) hands a clause with a
colon here, with its own reader of a clause. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from memlattice.core.entities import CALENDAR_WORDS
from memlattice.core.statements import lexicon as lx
from memlattice.core.statements.openings import skip_opening
from memlattice.core.statements.phrases import noun_phrase, value_words
from memlattice.core.statements.tokens import POSS

if TYPE_CHECKING:
    from memlattice.core.statements.extract import Statement

Tokens = Sequence[tuple[str, str]]
# The statement reading of one clause: (tokens, the speaker's key) -> its statement.
Reader = Callable[[Tokens, "str | None"], "Statement | None"]

# Values one has of one's own: given after a label with no owner, the voice's.
_ONES_OWN = frozenset({"phone", "email"})


def is_label(label: Tokens) -> bool:
    """Whether the words before a colon are a label: discourse ("Update:", "Heads
    up:") or a noun phrase ("Phone number:", "My new email:", "Deploy target:");
    not a pronoun ("Mine:"), whose owner the words do not say."""
    if all(w in lx.DISCOURSE for w, _ in label):
        return True
    start = 1 if label[0][0] in lx.FIRST_POSSESSIVE else 0
    np, end = noun_phrase(label, start)
    return (bool(np) and end == len(label)
            and all(w.replace("-", "").isalnum() and w not in lx.PRONOUNS for w in np))


def labelled(label: Tokens, rest: Tokens, speaker: str | None, read: Reader,
             ) -> Statement | None:
    """What a line "label: rest" states, `read` reading a clause.

    A clause after the label is read as it stands ("Update: the standup moved to
    Thursday"). A noun phrase's label before one typed value (up to the end or a
    comma) reads as "label is value" ("New phone number: 0151 234 5678, the old
    one is dead", "Standup: 10:30"), as key-value lines in notes mean. Nothing
    else is stated: free text or a name after a label is a note ("Todo: Call
    Ana"); a bare number is as often a count or a reading of tool output
    ("Errors: 3") as a setting, and the contrast reading too takes one as new only
    where a change leads to it; a date or time with more after it dates an entry
    of a log or an agenda ("Incident: 2026-04-02, the primary failed over"); and
    a first person after a label that is not discourse ("Ana: I moved") is
    someone's quoted words, whose "I" is not known."""
    discourse = all(w in lx.DISCOURSE for w, _ in label)
    first = skip_opening(rest)
    if first < len(rest) and rest[first][0] in lx.FIRST_PERSON | lx.FIRST_POSSESSIVE \
            and not discourse:
        return None
    told = read(rest, speaker)
    if told is not None or discourse:
        return told
    low, _orig, end = value_words(rest, 0)
    if not low or (end < len(rest) and rest[end][0] != ",") or not all(map(_typed, low)):
        return None  # "Agenda: 10:30 intro, 11:00 demo": more than a value
    # A label's first word is capitalised as the line's start, not as a name.
    head = [] if len(label) > 1 and label[1][0] == POSS else [(label[0][0], label[0][0])]
    said = read([*head, *label[len(head):], ("is", "is"), *rest[:end]], speaker)
    if said is None or said.kind in {"text", "name", "number"}:
        return None  # a bare number after a label is a count or a reading as often
    if said.attribute == "when" and end < len(rest):
        return None  # "Incident: 2026-04-02, ...": the date of an entry
    if said.owner is None and said.kind in _ONES_OWN:
        return replace(said, owner=speaker)  # "New number: ..." in Ines's voice is hers
    return said


def _typed(word: str) -> bool:
    """Whether a word belongs to a typed value: a number, an address, an amount, a
    time or a calendar word, not a word of free text."""
    return (not word.isalpha() or word in CALENDAR_WORDS
            or word in {"am", "pm", "noon", "midnight"})
