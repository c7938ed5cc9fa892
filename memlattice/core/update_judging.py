"""What the write-side LLM is asked about a new memory's offers, and what of its answer
is kept.

The rule set reads changes it has words for; on scenarios nobody tuned it on its
links are right about two times in five. Whether "mornings are green tea for me
these days" replaces "my go-to drink is a flat white every morning" is a matter
of meaning, which a chat model reads well once both are in front of it. The
search already brings them together: `Memory.mayReplace` puts the replaced memory
among a new memory's first three offers five times in six on scenario sets
nobody tuned on (docs/benchmarks.md, round eight). So each new memory is shown
with its offers, labelled `1a`, `1b`, ...; the model answers
`{"replaces": [{"earlier": "1a", "attribute": str, "confidence": number}]}`.

Only labels shown to it are accepted, so the model can link a new memory only
to an earlier memory the search offered it, which the writer's key may see;
anything malformed is dropped rather than guessed at.

Pure (no I/O): memlattice.services.update_judge gathers the offers, asks, and
proposes the links.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, get_args

# A memory is shown cut to this many characters: enough for a statement, not a log.
MAX_SHOWN_CHARS = 600
MAX_ATTRIBUTE_CHARS = 128
# The confidence of a link whose answer gave none: below any threshold a namespace
# would let supersede on its own, so such a link stays a candidate.
UNSTATED_CONFIDENCE = 0.5
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_SPACES = re.compile(r"\s+")

JudgeOutcome = Literal["answered", "malformed", "model_error", "linked", "refused", "disputed",
                       "retried", "abandoned"]
"""What `memlattice_update_judge_answers_total{outcome}` counts: the model's answers
(answered, malformed, model_error), the pairs it named (linked, refused), the rule
candidates it did not name (disputed), and the queue's retried and abandoned memories."""
JUDGE_OUTCOMES: tuple[JudgeOutcome, ...] = get_args(JudgeOutcome)

PROMPT = (
    "You keep an assistant's memory current. Each new memory below, numbered, is"
    " followed by earlier memories the search found near it, labelled 1a, 1b, ..."
    " An earlier memory is replaced when the new one gives another value of the same"
    " thing about the same person or thing, so that the earlier one no longer holds"
    " now: a move, a new job or partner, a changed phone number, address, port,"
    " version, owner, deadline or meeting time, a habit or taste that changed, a count"
    " that changed. It is not replaced when both can hold at once (a second pet, a"
    " sister's city beside one's own, another service or another host), when the new"
    " memory only asks, plans, supposes or reports what someone else has, when it"
    " says the same value again, or when it is about something else. Use the times:"
    " a memory can only replace one said before it. Answer with JSON only:"
    ' {"replaces": [{"earlier": "<label>", "attribute": "<what changed, in a few'
    ' words>", "confidence": <0 to 1>}]}; an empty list when nothing is replaced.'
)


@dataclass(frozen=True)
class Shown:
    """A memory as the model sees it: its content (a turn's already names its speaker)
    and when it was said."""

    id: str
    content: str
    at: datetime | None


@dataclass(frozen=True)
class Judged:
    """A new memory and the earlier memories it may replace, in the offer's order."""

    memory: Shown
    offers: tuple[Shown, ...]


@dataclass(frozen=True)
class Verdict:
    """The model says `newer` replaces `older`, in what (`attribute`), how surely."""

    newer: str
    older: str
    attribute: str
    confidence: float


def _shown(memory: Shown) -> str:
    when = f" (said {memory.at:%Y-%m-%d %H:%M} UTC)" if memory.at is not None else ""
    text = _SPACES.sub(" ", memory.content).strip()[:MAX_SHOWN_CHARS]
    return f"{when}: {text}"


def labels(number: int, item: Judged) -> dict[str, str]:
    """Each offer's label (`2a`, `2b`, ...) -> its id, for the item numbered `number`."""
    return {f"{number}{_LETTERS[i]}": offer.id for i, offer in enumerate(item.offers)}


def _block(number: int, item: Judged) -> str:
    lines = [f"New memory {number}{_shown(item.memory)}"]
    lines += [f"  {label}{_shown(offer)}"
              for label, offer in zip(labels(number, item), item.offers)]
    return "\n".join(lines)


def parts(items: Sequence[Judged], max_chars: int) -> list[list[Judged]]:
    """Consecutive runs of `items` whose rendered text fits `max_chars` each, so a
    long batch is judged in several answers; an item larger than that is alone."""
    found: list[list[Judged]] = []
    current: list[Judged] = []
    size = 0
    for item in items:
        length = len(_block(len(current) + 1, item)) + 2
        if current and size + length > max_chars:
            found.append(current)
            current, size = [], 0
            length = len(_block(1, item)) + 2
        current.append(item)
        size += length
    if current:
        found.append(current)
    return found


def render(items: Sequence[Judged]) -> str:
    """The user message: each new memory, numbered, with its offers labelled under it."""
    return "\n\n".join(_block(i, item) for i, item in enumerate(items, start=1))


def _attribute(value: Any) -> str:
    if not isinstance(value, str):
        return ""
    return _SPACES.sub(" ", value).strip()[:MAX_ATTRIBUTE_CHARS]


def _confidence(value: Any) -> float | None:
    """A number in [0, 1]; None for anything else (then the link is not kept)."""
    if value is None:
        return UNSTATED_CONFIDENCE
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and 0.0 <= number <= 1.0 else None


def parse_verdicts(text: str, items: Sequence[Judged]) -> list[Verdict] | None:
    """The valid verdicts of a model's answer about `items` (as numbered by `render`);
    None when the answer is not the JSON asked for. A label that was not shown, a
    second verdict on one pair, or a confidence outside [0, 1] is dropped."""
    try:
        data: Any = json.loads(text)
    except ValueError:
        return None
    listed = data.get("replaces") if isinstance(data, dict) else None
    if not isinstance(listed, list):
        return None
    shown: dict[str, tuple[str, str]] = {}
    for number, item in enumerate(items, start=1):
        for label, older in labels(number, item).items():
            shown[label] = (item.memory.id, older)
    found: dict[tuple[str, str], Verdict] = {}
    for entry in listed:
        if not isinstance(entry, dict) or not isinstance(entry.get("earlier"), str):
            continue
        pair = shown.get(entry["earlier"].strip().lower())
        confidence = _confidence(entry.get("confidence"))
        if pair is None or confidence is None or pair in found:
            continue
        found[pair] = Verdict(newer=pair[0], older=pair[1],
                              attribute=_attribute(entry.get("attribute")),
                              confidence=confidence)
    return list(found.values())
