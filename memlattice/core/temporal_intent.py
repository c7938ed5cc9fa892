"""Whether a search query asks about time, and which time it names.

"When did Caroline go to the support group?" wants memories that carry a time;
"What did Melanie paint in 2023?" wants memories whose event time lies in 2023;
"What happened before last week?" wants earlier ones. Ranking can only use that
if the query's intent is read first: this module reads it, without I/O, from
the query's words alone, and resolves the time the query names against `now`
(the search's time) with the same rules as a memory's event time
(memlattice.core.event_time), so the two compare directly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from memlattice.core.event_time import EventRange, event_range, find_event_times

# How the events sought stand to the time named (or, with no time named, to the
# event the query names: "what did she do after the concert?").
Relation = Literal["during", "before", "after", "since", "until"]

# The answer sought is a time or a duration.
_ASKS_TIME = re.compile(
    r"(?i)^\s*when\b"
    r"|\b(?:since\s+)?when\s+(?:did|does|do|was|were|is|are|will|would|has|have|had|could"
    r"|can|should|'s)\b"
    r"|\b(?:what|which)\s+(?:year|month|day|date|time|week|season|decade)\b"
    r"|\bhow\s+long\b"
    r"|\bhow\s+(?:many|much)\s+(?:years|months|weeks|days)\b"
)
# A word that orders the events sought against a time or an event, as the last
# words before what it orders ("before 2023", "after the concert").
_ORDER = re.compile(
    r"(?i)\b(before|prior\s+to|earlier\s+than|after|later\s+than|since|until|till|up\s+to"
    r"|during|in|on)\s+(?:the\s+)?$")
_ORDER_ANYWHERE = re.compile(r"(?i)\b(before|prior\s+to|earlier\s+than|after|later\s+than)\b")
_RELATION: dict[str, Relation] = {
    "before": "before", "prior to": "before", "earlier than": "before",
    "after": "after", "later than": "after",
    "since": "since", "until": "until", "till": "until", "up to": "until",
    "during": "during", "in": "during", "on": "during",
}


@dataclass(frozen=True)
class TemporalIntent:
    """What a query says about time.

    `asks_time`: the answer is a time or a duration ("when", "what year", "how
    long ago"). `named`: the time the query names, resolved against the search's
    `now` (None if it names none). `relation`: how the events sought stand to
    `named`, or to the event the query names when `named` is None.
    """

    asks_time: bool
    relation: Relation | None
    named: EventRange | None

    def window(self) -> tuple[datetime | None, datetime | None]:
        """The event-time window [after, before) the query names (None: open), as
        `MemoryFilter.event_after`/`event_before` take it; open on both sides when
        the query names no time."""
        if self.named is None:
            return None, None
        start, end = self.named.start, self.named.end
        return {
            "before": (None, start), "until": (None, end),
            "after": (end, None), "since": (start, None),
        }.get(self.relation or "during", (start, end))


def temporal_intent(query: str, now: datetime) -> TemporalIntent | None:
    """The query's temporal intent; None when it neither asks about time, nor names
    one, nor orders events in time."""
    mentions = find_event_times(query, now)
    named = event_range(query, now) if mentions else None
    relation: Relation | None = None
    if mentions:
        first = mentions[0]
        before_it = query[:first.span[0]] + _leading_word(first.text)
        order = _ORDER.search(before_it)
        relation = _RELATION[_words(order.group(1))] if order else "during"
    else:
        order = _ORDER_ANYWHERE.search(query)
        relation = _RELATION[_words(order.group(1))] if order else None
    asks = _ASKS_TIME.search(query) is not None
    if not asks and named is None and relation is None:
        return None
    return TemporalIntent(asks_time=asks, relation=relation, named=named)


def _leading_word(mention: str) -> str:
    """The mention's own ordering word ("before 2023" is one mention), with the space
    after it, or nothing."""
    match = re.match(r"(?i)(?:before|after|since|until|till|during|in|on)\s+", mention)
    return match.group(0) if match else ""


def _words(phrase: str) -> str:
    return " ".join(phrase.lower().split())
