"""What the write-side LLM is asked about a session, and what of its answer is kept.

A session's turns are shown to the model numbered `[1]`, `[2]`, ... with the
time each was said; it answers `{"facts": [{"fact": str, "turns": [int]}]}`.
Only numbers shown to it are accepted, so a fact can only be DERIVED from
turns of the session it read; anything malformed is dropped rather than
guessed at. Pure (no I/O): memlattice.services.session_facts does the asking
and the writing.
"""

from __future__ import annotations

import json
import re
import unicodedata
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memlattice.core.names import blank

# A fact is a sentence, not a document: longer answers are not what was asked for.
MAX_FACT_CHARS = 500
# Fact ids: a UUID of their own, so that a derived id never collides with another's.
_FACTS = uuid.UUID("0b7e4f3a-92d1-4c6b-8e7a-5d2c9f1a6e34")
_SPACES = re.compile(r"\s+")

PROMPT = (
    "You read part of a conversation and write down the facts worth remembering about"
    " the people in it: events, plans, preferences, possessions, relationships, places"
    " and dates. Each fact is one short sentence that stands on its own: name people"
    " instead of using pronouns, and turn relative times ('yesterday', 'last week') into"
    " dates using the time each turn was said. The turns are numbered [1], [2], ...;"
    " answer with JSON only:"
    ' {{"facts": [{{"fact": "<sentence>", "turns": [<numbers of the turns it comes'
    ' from>]}}]}}. At most {cap} facts; an empty list if nothing is worth remembering.'
)


@dataclass(frozen=True)
class PromptTurn:
    """A stored turn as the model sees it (its content already says who spoke)."""

    id: str
    content: str
    at: datetime | None


@dataclass(frozen=True)
class ExtractedFact:
    text: str
    turn_ids: tuple[str, ...]  # the turns it came from, in session order


def prompt(cap: int) -> str:
    """The system prompt, asking for at most `cap` facts."""
    return PROMPT.format(cap=cap)


def _line(number: int, turn: PromptTurn, limit: int) -> str:
    when = f" ({turn.at:%Y-%m-%d %H:%M} UTC)" if turn.at is not None else ""
    return f"[{number}]{when} {turn.content[:limit]}"


def parts(turns: Sequence[PromptTurn], max_chars: int) -> list[list[PromptTurn]]:
    """Consecutive runs of `turns` whose rendered text fits `max_chars` each, so a
    long session is read in several answers; a single turn longer than that is
    shown cut (`render`), alone."""
    found: list[list[PromptTurn]] = []
    current: list[PromptTurn] = []
    size = 0
    for turn in turns:
        length = len(_line(len(current) + 1, turn, max_chars)) + 1
        if current and size + length > max_chars:
            found.append(current)
            current, size = [], 0
            length = len(_line(1, turn, max_chars)) + 1
        current.append(turn)
        size += length
    if current:
        found.append(current)
    return found


def render(turns: Sequence[PromptTurn], max_chars: int) -> str:
    """The user message: one numbered line per turn, with its time."""
    return "\n".join(_line(i, turn, max_chars) for i, turn in enumerate(turns, start=1))


def _turn_number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _fact_text(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = _SPACES.sub(" ", value).strip()
    if blank(text) or len(text) > MAX_FACT_CHARS:
        return None
    return text


def parse_facts(answer: str, turn_ids: Sequence[str], cap: int) -> list[ExtractedFact] | None:
    """The valid facts of a model's answer about `turn_ids` (numbered from 1), at most
    `cap`; None when the answer is not a JSON object with a `facts` list at all.

    A fact needs a non-blank sentence of at most MAX_FACT_CHARS and at least one
    turn number that was shown; numbers that were not are dropped, and so is a
    fact left without any. The same sentence twice is kept once.
    """
    try:
        data: Any = json.loads(answer)
    except ValueError:
        return None
    items = data.get("facts") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return None
    found: list[ExtractedFact] = []
    seen: set[str] = set()
    for item in items:
        if len(found) >= cap:
            break
        if not isinstance(item, dict):
            continue
        text = _fact_text(item.get("fact"))
        numbers = item.get("turns")
        if text is None or not isinstance(numbers, list):
            continue
        shown = {n for n in map(_turn_number, numbers) if n is not None
                 and 1 <= n <= len(turn_ids)}
        if not shown or fact_key(text) in seen:
            continue
        seen.add(fact_key(text))
        found.append(ExtractedFact(text=text,
                                   turn_ids=tuple(turn_ids[n - 1] for n in sorted(shown))))
    return found


def fact_key(text: str) -> str:
    """What makes two sentences the same fact: case, composition and spacing folded."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


def fact_id(namespace: str, session_id: str, text: str) -> str:
    """A fact's memory id: the same sentence about the same session, the same id, so
    that a second reading (after a failed one) does not write it twice."""
    return str(uuid.uuid5(_FACTS, f"{namespace}\x1f{session_id}\x1f{fact_key(text)}"))
