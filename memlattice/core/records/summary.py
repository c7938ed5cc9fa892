"""Extractive summaries: a bounded bullet list taken from the records themselves.

No model writes anything: each bullet is the first sentence of a memory's
summary (or content), cut at a word boundary; bullets that repeat an earlier
one (word overlap >= REPEAT) are dropped, so five copies of one claim give
one bullet. The input order (relevance or recency) is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memlattice.core.records.hints import overlap

MAX_BULLET_CHARS = 240
MAX_TOTAL_CHARS = 4_000
REPEAT = 0.8
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


@dataclass(frozen=True)
class Bullet:
    text: str
    memory_id: str


def first_sentence(text: str, limit: int = MAX_BULLET_CHARS) -> str:
    text = " ".join(text.split())
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0]
    if len(sentence) <= limit:
        return sentence
    cut = sentence[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"


def extract(items: list[tuple[str, str]], *, limit: int,
            max_chars: int = MAX_TOTAL_CHARS) -> list[Bullet]:
    """At most `limit` bullets and `max_chars` characters from `(id, text)` items."""
    bullets: list[Bullet] = []
    used = 0
    for memory_id, text in items:
        if len(bullets) >= limit:
            break
        sentence = first_sentence(text)
        if not sentence or any(overlap(sentence, b.text) >= REPEAT or sentence == b.text
                               for b in bullets):
            continue
        if used + len(sentence) > max_chars:
            break
        bullets.append(Bullet(sentence, memory_id))
        used += len(sentence)
    return bullets
