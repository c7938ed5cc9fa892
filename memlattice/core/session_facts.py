"""What the write-side LLM is asked about a session, and what of its answer is kept.

A session's turns are shown to the model numbered `[1]`, `[2]`, ... with the
time each was said; it answers `{"facts": [{"fact": str, "subject": str,
"attribute": str, "turns": [int]}]}`. Only numbers shown to it are accepted,
so a fact can only be DERIVED from turns of the session it read; anything
malformed is dropped rather than guessed at.

`subject` and `attribute` name what a fact gives the current value of (Ines /
home city): a later fact about the same pair (`about_keys`, case and spacing
folded) with other words replaces it (`reconcile`), the same words reinforce
it. A fact without them (an event, a plan) is kept as it is, never replaced.

Pure (no I/O): memlattice.services.session_facts does the asking, the look-up
of earlier facts and the writing.
"""

from __future__ import annotations

import json
import re
import unicodedata
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

from memlattice.core.duplicates import normalise_content
from memlattice.core.names import blank

# A fact is a sentence, not a document: longer answers are not what was asked for.
MAX_FACT_CHARS = 500
# A subject or an attribute is a name, not a sentence.
MAX_ABOUT_CHARS = 200
# Fact ids: a UUID of their own, so that a derived id never collides with another's.
_FACTS = uuid.UUID("0b7e4f3a-92d1-4c6b-8e7a-5d2c9f1a6e34")
_SPACES = re.compile(r"\s+")

FactsOutcome = Literal["answered", "malformed", "model_error", "write_error", "written"]
"""What the fact reader counts: the model's answers about a session by outcome
(`memlattice_session_fact_answers_total{outcome}`), and the facts `written`
(`memlattice_session_facts_written_total`)."""
FACT_ANSWER_OUTCOMES: tuple[FactsOutcome, ...] = tuple(
    o for o in get_args(FactsOutcome) if o != "written")

PROMPT = (
    "You read part of a conversation and write down the facts worth remembering about"
    " the people in it: events, plans, preferences, possessions, relationships, places"
    " and dates. Each fact is one short sentence that stands on its own: name people"
    " instead of using pronouns, and turn relative times ('yesterday', 'last week') into"
    " dates using the time each turn was said. The turns are numbered [1], [2], ...;"
    " When a fact gives the current value of something about a person or thing that"
    " can change later (where someone lives, their job, partner, phone number, a pet,"
    " a service's address, a meeting's time), also name that person or thing as"
    ' "subject" and what the value is of as "attribute", in a few words, the same'
    ' words for the same thing every time (e.g. "Ines", "home city"); leave both out'
    " for events, plans and past states. Answer with JSON only:"
    ' {{"facts": [{{"fact": "<sentence>", "subject": "<who or what>", "attribute":'
    ' "<what of it>", "turns": [<numbers of the turns it comes from>]}}]}}.'
    " At most {cap} facts; an empty list if nothing is worth remembering."
)


@dataclass(frozen=True)
class PromptTurn:
    """A stored turn as the model sees it (its content already says who spoke)."""

    id: str
    content: str
    at: datetime | None


@dataclass(frozen=True)
class About:
    """What a fact gives the value of, as the model named it."""

    subject: str
    attribute: str

    @property
    def keys(self) -> tuple[str, str]:
        """(subject, attribute) folded: what two facts must share to be about one thing."""
        return about_key(self.subject), about_key(self.attribute)


@dataclass(frozen=True)
class ExtractedFact:
    text: str
    turn_ids: tuple[str, ...]  # the turns it came from, in session order
    about: About | None = None


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


def _about_name(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = _SPACES.sub(" ", value).strip()
    if blank(text) or len(text) > MAX_ABOUT_CHARS:
        return None
    return text


def _about(item: dict[str, Any]) -> tuple[bool, About | None]:
    """(whether the item's subject and attribute are well formed, its About): both
    absent is well formed (no About); one without the other, or one that is not a
    name, blank (or only punctuation) or too long, is not."""
    subject, attribute = item.get("subject"), item.get("attribute")
    if subject is None and attribute is None:
        return True, None
    s, a = _about_name(subject), _about_name(attribute)
    if s is None or a is None or not about_key(s) or not about_key(a):
        return False, None
    return True, About(s, a)


def parse_facts(answer: str, turn_ids: Sequence[str], cap: int) -> list[ExtractedFact] | None:
    """The valid facts of a model's answer about `turn_ids` (numbered from 1), at most
    `cap`; None when the answer is not a JSON object with a `facts` list at all.

    A fact needs a non-blank sentence of at most MAX_FACT_CHARS and at least one
    turn number that was shown; numbers that were not are dropped, and so is a
    fact left without any. `subject` and `attribute` come both or not at all, each
    a non-blank name of at most MAX_ABOUT_CHARS: a fact with a malformed pair is
    dropped. The same sentence twice is kept once.
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
        well_formed, about = _about(item)
        if text is None or not isinstance(numbers, list) or not well_formed:
            continue
        shown = {n for n in map(_turn_number, numbers) if n is not None
                 and 1 <= n <= len(turn_ids)}
        if not shown or fact_key(text) in seen:
            continue
        seen.add(fact_key(text))
        found.append(ExtractedFact(
            text=text, turn_ids=tuple(turn_ids[n - 1] for n in sorted(shown)),
            about=about))
    return found


def fact_key(text: str) -> str:
    """What makes two sentences the same fact: case, composition and spacing folded."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


def fact_id(namespace: str, session_id: str, text: str) -> str:
    """A fact's memory id: the same sentence about the same session, the same id, so
    that a second reading (after a failed one) does not write it twice."""
    return str(uuid.uuid5(_FACTS, f"{namespace}\x1f{session_id}\x1f{fact_key(text)}"))


_EDGE_PUNCTUATION = ".,;:!?\"'()[]{} "


def about_key(name: str) -> str:
    """A subject's or attribute's comparable form: Unicode NFKC, case-folded, spacing
    collapsed, punctuation at its ends dropped ("Ines." and " ines" are one)."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", name).casefold()).strip(
        _EDGE_PUNCTUATION)


@dataclass(frozen=True)
class Stated:
    """A fact about a (subject, attribute) pair: one already stored (`known`) or one
    of the batch being written, with the time it was said."""

    id: str
    text: str
    keys: tuple[str, str]
    at: datetime
    known: bool


@dataclass(frozen=True)
class Reconciled:
    """What a batch does to the facts already stored: ids of the batch's facts that
    repeat a stored one (reinforce it instead of being written), and (newer, older)
    pairs where the newer fact replaces the older one."""

    reinforce: dict[str, str] = field(default_factory=dict)
    supersede: list[tuple[str, str]] = field(default_factory=list)


def reconcile(new: Sequence[Stated], known: Sequence[Stated]) -> Reconciled:
    """Per (subject, attribute), the facts in the order they were said (a stored one
    first on a tie, then the batch's own order): a new fact with the words of a fact
    still current reinforces it; one with other words replaces every current fact;
    a stored fact said after a new one (a session sent late) replaces the new one
    when their words differ. "The same words" is what a plain write counts as the
    same content (core.duplicates.normalise_content: case, spacing and a final
    period aside). Stored facts never replace each other here."""
    done = Reconciled()
    order = {id(s): i for i, s in enumerate([*known, *new])}
    by_pair: dict[tuple[str, str], list[Stated]] = {}
    for stated in [*known, *new]:
        by_pair.setdefault(stated.keys, []).append(stated)
    for facts in by_pair.values():
        current: list[Stated] = []
        for s in sorted(facts, key=lambda f: (f.at, not f.known, order[id(f)])):
            same = next((c for c in current
                         if normalise_content(c.text) == normalise_content(s.text)), None)
            if s.known:
                for c in current:
                    if not c.known and c is not same:
                        done.supersede.append((s.id, c.id))
                if same is not None and not same.known:
                    done.reinforce[same.id] = s.id
                current = [c for c in current if c.known and c is not same] + [s]
            elif same is not None:
                if same.known:
                    done.reinforce[s.id] = same.id
                current = [same]
            else:
                done.supersede.extend((s.id, c.id) for c in current)
                current = [s]
    # A new fact that turned out to repeat a later stored one is not written: it
    # replaces nothing and nothing replaces it.
    kept = [(n, o) for n, o in done.supersede if n not in done.reinforce
            and o not in done.reinforce]
    return Reconciled(reinforce=done.reinforce, supersede=list(dict.fromkeys(kept)))
