"""What kind of answer a question asks for, and whether a memory holds one.

Question answering has long typed questions by what their answer must be
(Moldovan et al. 2000; Li and Roth 2002): "who" asks for a name, "where" for a
place or an address, "what time" for a time, "how many" for a number, and a
question about a kind of value ("What is Chloe's phone number?", "Which port
...?", "What's the endpoint?") for a number or an address. A memory that
holds nothing of that kind cannot answer, however many of the question's words
it shares: "Where does Tom live?" is not answered by "Tom: Missed it, we were
viewing houses all day.", nor "Where does the session cache run?" by "Session
cache hit ratio 97%.". Ranking discounts such a memory
(SearchConfig.answer_discount); questions of other kinds ("what", "why") type
nothing and are left alone, and so does "when": in a conversation the answer
to "When did Caroline go to the support group?" is often the turn's own date
("I went yesterday", or no word of time at all), which the text does not hold.

The kinds are read from the shape of the text alone (capitals inside a sentence,
digits, addresses, calendar and time words), which holds for any memory.
Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from memlattice.core.entities import CALENDAR_WORDS, SENTENCE_OPENERS
from memlattice.search.information import SPEAKER_LABEL

NAME, PLACE, TIME, NUMBER = "name", "place", "time", "number"

_ASKS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"\b(?:who|whom|whose)\b"), frozenset({NAME})),
    (re.compile(r"\bwhere\b"), frozenset({PLACE})),
    (re.compile(r"\b(?:what|which)\s+(?:time|day|date|weekday)\b"), frozenset({TIME})),
    (re.compile(r"\bhow\s+(?:many|much|old)\b"), frozenset({NUMBER})),
    (re.compile(r"\bhow\s+long\b"), frozenset({NUMBER, TIME})),
    # "What is Chloe's phone number?", "Which port ...", "What's the rate limit?":
    # the noun the question asks about names a kind of value.
    (re.compile(r"\b(?:what|which)\b[^?]*?\b(?:phone|number|port|version|price|cost|budget"
                r"|limit|salary|rent|fee|percentage|count)s?\b"), frozenset({NUMBER})),
    (re.compile(r"\b(?:what|which)\b[^?]*?\b(?:ip|url|endpoint|address|email|e-mail)s?\b"),
     frozenset({PLACE})),
    # "Which city ...?", "What country ...?": a place noun right after the question word.
    (re.compile(r"\b(?:what|which)\s+(?:city|cities|town|towns|country|countries|village"
                r"|region|state|airport|neighbou?rhood|district|street|island)\b"),
     frozenset({PLACE})),
)
_SENTENCES = re.compile(r"[^.!?\n]+")
_WORD = re.compile(r"[\w'’@./:-]*\w")
_DIGIT = re.compile(r"\d")
_ADDRESS = re.compile(r"@|://|\w\.\w+\.\w|\b\d{1,3}(?:\.\d{1,3}){3}\b|:\d{2,5}\b")
_TOKEN = re.compile(r"\S+")
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
_NUMBER_WORDS = frozenset({
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "fifteen", "twenty", "thirty", "forty", "fifty", "hundred", "thousand",
    "dozen", "couple", "half", "single", "both", "none", "no"})
_TIME_WORDS = CALENDAR_WORDS | frozenset({
    "yesterday", "today", "tonight", "tomorrow", "ago", "last", "next", "week", "weeks",
    "weekend", "weekends", "month", "months", "year", "years", "morning", "mornings",
    "afternoon", "evening", "evenings", "night", "nights", "noon", "midnight", "daily",
    "weekly", "monthly", "since", "until", "till", "soon", "recently", "earlier", "later",
    "am", "pm", "o'clock", "spring", "summer", "autumn", "fall", "winter", "christmas",
    "easter", "weekday", "weekdays", "day", "days", "hour", "hours", "minute", "minutes"})
# A capital opening a sentence marks a name only beside other marks of one: it is
# not a word of its own (SENTENCE_OPENERS) and carries a possessive or nothing
# of a verb's or an adverb's ending ("Rotterdam since January", "Cardiff's been
# kind"; not "Checking the logs", "Updated the file", "Honestly").
_MAY_NAME = re.compile(r"^[A-Z][a-z]+(?:['’]s)?$(?<!ing)(?<!ed)(?<!ly)")
# Capitalised words that name no one even inside a sentence.
_NOT_NAMES = frozenset({"i", "i'm", "i've", "i'll", "i'd", "ok", "okay"}) | SENTENCE_OPENERS


def asked_kinds(query: str | None) -> frozenset[str]:
    """The kinds of answer `query` asks for (empty: it types nothing)."""
    if not query:
        return frozenset()
    lowered = query.casefold()
    return frozenset(k for pattern, kinds in _ASKS if pattern.search(lowered) for k in kinds)


def held_kinds(text: str) -> frozenset[str]:
    """The kinds of answer `text` holds: a name (a capital inside a sentence), a
    place (a name or an address), a time and a number."""
    return _reading(text)[0]


def held_values(text: str) -> Mapping[str, frozenset[str]]:
    """The values of each kind `text` holds, case-folded, for telling two answers
    apart: two memories that both answer a question with different values of the
    kind it asks for say different things about it. Names are read as for
    `held_kinds`, and also where one opens a sentence ("Rotterdam since January"),
    but never a month or a weekday; an address is whole."""
    return _reading(text)[1]


@lru_cache(maxsize=16_384)
def _reading(text: str) -> tuple[frozenset[str], Mapping[str, frozenset[str]]]:
    """(`held_kinds`, `held_values`) of `text`, read once: cached, so read-only."""
    kinds: set[str] = set()
    held: dict[str, set[str]] = {NAME: set(), PLACE: set(), TIME: set(), NUMBER: set()}
    body = SPEAKER_LABEL.sub("", text, count=1)  # who speaks is no name the turn holds
    held[PLACE].update(token.group(0).casefold() for token in _TOKEN.finditer(body)
                       if _ADDRESS.search(token.group(0)))  # the whole address
    if held[PLACE]:
        kinds.add(PLACE)
    for sentence in _SENTENCES.findall(body):
        words = _WORD.findall(sentence)
        for i, word in enumerate(words):
            lowered = word.casefold()
            if _DIGIT.search(word) or lowered in _NUMBER_WORDS:
                held[NUMBER].add(lowered)
            if lowered in _TIME_WORDS or (_DIGIT.search(word) and (
                    ":" in word or lowered.endswith(("am", "pm")))):
                held[TIME].add(lowered)
            if _DIGIT.search(word) and any(  # the day of a date: "October 10", "3 Feb"
                    w.casefold() in CALENDAR_WORDS for w in words[max(0, i - 1):i + 2]):
                held[TIME].add(lowered)
            if not word[:1].isupper() or lowered in _NOT_NAMES:
                continue
            if i:
                kinds.update((NAME, PLACE))
            if lowered not in CALENDAR_WORDS and (i or _MAY_NAME.match(word)):
                held[NAME].add(lowered)
                held[PLACE].add(lowered)
        held[TIME].update(_YEAR.findall(sentence))
    kinds.update(kind for kind in (TIME, NUMBER) if held[kind])
    return frozenset(kinds), MappingProxyType(
        {kind: frozenset(values) for kind, values in held.items()})


def answers_nothing_asked(asked: frozenset[str], held: frozenset[str]) -> bool:
    """Whether a memory holding `held` lacks every kind a question asks for."""
    return bool(asked) and not asked & held
