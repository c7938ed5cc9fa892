"""Where a clause's subject starts: past discourse words and a leading adjunct.

A clause often opens with words that are not its subject: discourse ("so", "well",
"anyway"), an adverb ("Honestly, ..."), or a time a state starts at ("As of
Monday, ...", and in chats without the comma, "Since April I live in Oslo"). The
statement reading (memlattice.core.statements.extract) looks for the subject after
them. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memlattice.core.entities import CALENDAR_WORDS
from memlattice.core.statements import lexicon as lx
from memlattice.core.statements.phrases import is_verb

# A day or a year as written: "3", "3rd", "2025".
_DAY_OR_YEAR = re.compile(r"\d{1,4}(?:st|nd|rd|th)?")


def skip_opening(clause: Sequence[tuple[str, str]]) -> int:
    """The first token after discourse words and a leading adjunct ("As of Monday,",
    or without its comma "Since April I live in Oslo"). Words before a comma that
    hold a subject ("I", "my"), or open with a past-tense verb whose subject is
    left out ("finally moved to Porto, the new place is bigger"), are a clause of
    their own, not an adjunct."""
    comma = next((k for k, (w, _) in enumerate(clause[:7]) if w == ","), None)
    lead = next((w for w, _ in clause if w not in lx.DISCOURSE), "")
    if comma is not None and not (any(w in lx.FIRST_PERSON | lx.FIRST_POSSESSIVE
                                      for w, _ in clause[:comma])
                                  or lead.endswith("ed") and is_verb(lead)):
        i = comma + 1
    else:
        i = _start_time_end(clause)
    while i < len(clause) and (clause[i][0] in lx.DISCOURSE or clause[i][0] == ","
                               or (clause[i][0].endswith("ly") and i + 1 < len(clause)
                                   and clause[i + 1][0] in {",", *lx.FIRST_PERSON,
                                                            *lx.FIRST_POSSESSIVE, "the"})):
        i += 1
    return i


def _start_time_end(clause: Sequence[tuple[str, str]]) -> int:
    """Where a clause's leading start of a state ends ("since April", "as of last
    week", "from now on", "starting 3 March"): 0 when it has none. Only a time may
    follow the word of the start, so "Since the move I ...", "From Oslo we ..." and
    "Starting this studio is ..." (a gerund) are left whole."""
    words = [w for w, _ in clause]
    if words[:2] == ["as", "of"]:
        i = 2
    elif words and words[0] in lx.STATE_STARTS and words[0] != "of":
        i = 1
    else:
        return 0
    j = i
    while j < len(words) and j - i < 3:
        w, nxt = words[j], words[j + 1] if j + 1 < len(words) else ""
        if w in {"this", "last"} and (nxt in lx.TIME_UNITS or nxt in CALENDAR_WORDS):
            j += 2
        elif w == "now":
            j += 2 if nxt == "on" else 1
        elif w in lx.OCCASIONS or w in CALENDAR_WORDS or _DAY_OR_YEAR.fullmatch(w):
            j += 1
        else:
            break
    return j if i < j < len(words) else 0
