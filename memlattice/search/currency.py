"""What is true now first: order an updated attribute's states by the question.

Write-side detection links a memory that states a new value of an attribute to
the one that stated the old value (graph.updates). A question about the present
wants the newest state first; a question about the past ("before", "used to",
"at first", "in 2022") wants the state that held then. This module reorders a
ranked list accordingly, and nothing else: every memory stays in the list (a
wrong link must never hide a memory), the newest state takes the place of the
best-ranked older one, and the older one follows it.

Two states the search found both are only put in order, which changes no
memory's presence in the list; a state the search did not find enters it only
for a question about what the link updated (`asks_about`), since it takes a
place another memory held. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from memlattice.core.entities import entity_key
from memlattice.core.lucene import words as lucene_words
from memlattice.core.query_words import content_words, is_stop_word
from memlattice.core.statements.contrast import profile
from memlattice.core.statements.tokens import stem
from memlattice.search.answer_types import TIME, asked_kinds, held_values
from memlattice.search.information import SPEAKER_LABEL
from memlattice.search.ranking import Scored, Step

# English marks a question about an earlier state with these words and phrases
# (whatever the attribute): "before", "used to", "previously", "at first", ...
_PAST = re.compile(
    r"(?i)\b(?:before|used\s+to|previous(?:ly)?|formerly|former|at\s+first|first|originally"
    r"|initially|earlier|old|prior|in\s+the\s+past|back\s+then|back\s+when|once|no\s+longer"
    r"|anymore|any\s+more|until|till|had\s+been|was|were)\b"
    r"|\bdid\b.*\buse\s+to\b")


def asks_past(query: str | None, named_end: datetime | None, now: datetime) -> bool:
    """Whether a query asks about an earlier state: past words, or a time it names
    that ended before the search's `now` ("in 2022", "as of March")."""
    if not query:
        return False
    if named_end is not None and named_end <= now:
        return True
    return bool(_PAST.search(query))


def asks_about(query: str | None, words: Iterable[str]) -> bool:
    """Whether a query is about an updated attribute: it names one of the content words
    its link matched on (the subject, the attribute, the topic or a value), compared
    as stems. A memory's update says nothing to a question about something else, so
    it must not reorder that question's answers."""
    if not query:
        return False
    asked = {stem(w) for w in content_words(lucene_words(query))}
    return any(stem(w) in asked for text in words for w in lucene_words(text)
               if not is_stop_word(w))


# What kind of value a question asks for, by its question word (answer typing, as in
# question classification): the attributes and value kinds of memlattice.core.statements
# that can answer it. "what"/"which" alone name no kind and are left out.
_ANSWER_KINDS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"(?i)\b(?:who|whom|whose)\b"),
     frozenset({"name", "partner", "owner", "employer", "role"})),
    (re.compile(r"(?i)\bwhere\b"),
     frozenset({"residence", "employer", "school", "endpoint", "address", "host", "name"})),
    (re.compile(r"(?i)\bwhen\b|\b(?:what|which)\s+(?:time|day|date|weekday)\b"),
     frozenset({"when", "time", "weekday", "date", "schedule", "deadline"})),
    (re.compile(r"(?i)\bhow\s+(?:many|much)\b"), frozenset({"count", "number", "amount",
                                                            "money"})),
    (re.compile(r"(?i)\b(?:what|which)\s+version\b"), frozenset({"version"})),
)


def asks_for(query: str | None, attribute: str) -> bool:
    """Whether a query's question word asks for the kind of value an update changed
    ("Who is Marco's employer now?" for a new name, "When is the standup?" for a
    time)."""
    return bool(query) and any(attribute in kinds for pattern, kinds in _ANSWER_KINDS
                               if pattern.search(query or ""))


def names(query: str | None, subject: str | None) -> bool:
    """Whether a query names a subject (an entity key such as a speaker's), as a word."""
    if not query or not subject:
        return False
    asked = {entity_key(w) for w in lucene_words(query)}  # "Marco's" names Marco
    return all(entity_key(w) in asked for w in lucene_words(subject))


def prefer_current(scored: Sequence[Scored], current: Mapping[str, str], *,
                   past: bool, asked: Collection[str] | None = None,
                   lead: Collection[str] = ()) -> list[Scored]:
    """`scored` with every outdated memory (a key of `current`, which names the
    newest state that updates it) next to that state: after it for a present
    question, before it for a past one. For a present question about what the
    link updated (the outdated ids in `asked`; all of them when None), a state the
    list lacks enters at the outdated memory's place with its score, reached along
    `UPDATES`; otherwise the list keeps its members. A question about what a link
    changed (the outdated ids in `lead`) gets the state it asks for first: the
    newest for the present, the outdated one for the past."""
    order = [s.id for s in scored]
    by_id = {s.id: s for s in scored}
    for old_id, new_id in current.items():
        if old_id not in by_id or new_id == old_id:
            continue
        if new_id not in by_id:
            if past or (asked is not None and old_id not in asked):
                continue  # the past gains nothing from a later state; nor another question
            by_id[new_id] = Scored(id=new_id, score=by_id[old_id].score, expanded=True,
                                   path=(Step(type="UPDATES", source=new_id, target=old_id),))
            order.insert(order.index(old_id), new_id)
        first, second = (old_id, new_id) if past else (new_id, old_id)
        i, j = order.index(first), order.index(second)
        if i > j:  # `first` moves right before `second`, its score at least that one's
            order.pop(i)
            order.insert(j, first)
            by_id[first] = replace(by_id[first],
                                   score=max(by_id[first].score, by_id[second].score))
    if lead:  # the states asked about lead, in the order they stand
        wanted = [(old if past else new) for old, new in current.items()
                  if old in lead and old in by_id and new in by_id and new != old]
        lead = sorted(set(wanted), key=order.index)
        top = max((by_id[id].score for id in order), default=0.0)
        order = lead + [id for id in order if id not in lead]
        for id in lead:
            by_id[id] = replace(by_id[id], score=max(by_id[id].score, top))
    return [by_id[id] for id in order]


def states_asked_for(scored: Sequence[Scored], status: Mapping[str, str | None], *,
                     statuses: Collection[str], held_then: Collection[str] = ()) -> list[Scored]:
    """`scored` without the memories of a status the search was not asked for: the
    superseded memories it searched only to lead it to the states that replaced them
    (`prefer_current` put those in their places). Kept besides are the memories of
    `held_then`: for a question about the past asked with the default statuses, the
    superseded states whose newer state the key may see (the states that held then;
    history is what a superseded memory is kept for). `status`: each id's status."""
    return [s for s in scored
            if status.get(s.id) in (None, *statuses) or s.id in held_then]


def later_of_a_source_first(scored: Sequence[Scored],
                            said: Mapping[str, tuple[str | None, datetime | None]], *,
                            within: float, window: int = 3,
                            competes: Callable[[str, str], bool] | None = None) -> list[Scored]:
    """For a question about the present: among the first `window` hits, a later
    statement of the same source whose score is at least `within` of an earlier
    one's goes before it (and takes its score). No link says the two are about one
    attribute, but both answer the question about equally, and a source that says
    something again later says what holds now. With `competes` (earlier id, later
    id), only pairs it accepts move. Nothing enters or leaves the list."""
    order = list(scored)
    for _ in range(window):
        moved = False
        for i in range(min(window, len(order))):
            source, at = said.get(order[i].id, (None, None))
            if source is None or at is None:
                continue
            for j in range(i + 1, min(window, len(order))):
                other, later = said.get(order[j].id, (None, None))
                if (other == source and later is not None and later > at
                        and order[j].score >= within * order[i].score
                        and (competes is None or competes(order[i].id, order[j].id))):
                    order.insert(i, replace(order.pop(j), score=order[i].score))
                    moved = True
                    break
            if moved:
                break
        if not moved:
            break
    return order


def competing_answers(query: str, texts: Mapping[str, str]) -> Callable[[str, str], bool]:
    """Whether two memories (ids of `texts`) give different answers to `query`:
    it asks for a kind of value (answer_types: a name, a place, a time, a number),
    both hold one, the later holds one the earlier does not, both name every name
    the query names, and the later neither adds nor keeps something on ("too",
    "also", "still": a second value, not a new one) nor speaks only of someone
    else ("my sister lives in Oslo"). The question says which attribute matters,
    so a source's later value of that kind is its current answer, where a later
    remark that gives no such value ("range anxiety is real though") answers
    nothing. Measured, it helps agents' notes and hurts chats: an option
    (SearchConfig.current_answer_within), off by default."""
    # "when" asks for a time here: both statements state one ("due on October 10",
    # "until October 24"), unlike a conversation's turn dated by when it was said.
    asked = asked_kinds(query) | ({TIME} if _WHEN.search(query) else frozenset())
    named = query_names(query)

    def competes(earlier: str, later: str) -> bool:
        if not asked or earlier not in texts or later not in texts:
            return False
        old_words, new_words = _word_keys(texts[earlier]), _word_keys(texts[later])
        if not (named <= old_words and named <= new_words) or new_words & _ADDING:
            return False
        if profile(SPEAKER_LABEL.sub("", texts[later], count=1), speaker=None).others_only:
            return False  # "my sister lives in Oslo": another person's value
        old, new = _values(texts[earlier], named), _values(texts[later], named)
        return any(old[kind] and new[kind] - old[kind] for kind in asked)

    return competes


def query_names(query: str) -> frozenset[str]:
    """The names a question says (capitalised words after its first), as entity keys:
    "Which city is Priya living in?" names Priya."""
    spoken = _QUESTION_NAME.findall(query)
    return frozenset(entity_key(w) for w in spoken[1:] if w[:1].isupper()
                     and not is_stop_word(w.casefold()))


def _values(text: str, named: frozenset[str]) -> dict[str, frozenset[str]]:
    """The values `text` holds by kind, as entity keys, without the names the question
    says (those are what it is about, not its answer)."""
    return {kind: frozenset(entity_key(v) for v in values) - named
            for kind, values in held_values(text).items()}


def _word_keys(text: str) -> frozenset[str]:
    return frozenset(entity_key(w) for w in lucene_words(text))


_QUESTION_NAME = re.compile(r"[\w'’-]+")
_WHEN = re.compile(r"(?i)\bwhen\b")
# Words that add a value to what holds or say that it goes on, rather than replace it.
_ADDING = frozenset({"also", "too", "still", "another", "additionally", "both", "either"})


# The tense of a question's auxiliary: "Where does Tom live?", "Who is on call?"
# ask what holds now; "Where did Tom go?", "Which cities has Jon visited?" ask
# what happened (the perfect gathers the past, not the present state).
_PRESENT_AUXILIARIES = frozenset({"is", "are", "am", "does", "do", "isn't", "aren't",
                                  "doesn't", "don't"})
_PAST_AUXILIARIES = frozenset({"did", "was", "were", "had", "didn't", "wasn't", "weren't",
                               "used", "has", "have", "hasn't", "haven't"})
_WH = frozenset({"who", "what", "which", "where", "when", "how", "whose"})
_QUESTION_WORDS = re.compile(r"[a-z'_-]+")


def asks_present(query: str | None) -> bool:
    """Whether a question asks what holds now, by its verb's tense: a present
    auxiliary, or a question word right before a verb in the present ("Who owns
    the billing service?"); never with a past or perfect one."""
    words = _QUESTION_WORDS.findall((query or "").lower().replace("’", "'"))
    if any(w in _PAST_AUXILIARIES for w in words):
        return False
    if any(w in _PRESENT_AUXILIARIES for w in words):
        return True
    return (len(words) > 1 and words[0] in _WH and words[1].endswith("s")
            and not words[1].endswith("ss"))
