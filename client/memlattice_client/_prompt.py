"""Recalled memories as a prompt block that fits a token budget (pure, no I/O).

An agent starts a session with a budget for memory (say 500 tokens) and wants
the best memories that fit. `format_memories` writes a header, then one bullet
per memory in score order with its date and age, tags, score and any
contradiction flagged, and stops at the budget: the memories kept are always
the highest-scoring ones, and a memory too long for the space left is cut
short (with "…") rather than dropped, so a single long memory still yields
something. The whole block is counted with `count_tokens`, never more than
`budget_tokens`; when not even the header fits, the result is "".

Token counting defaults to `estimate_tokens`, a local, deliberately generous
estimate (no tokenizer download): one token per three ASCII characters, one
per other character, one per line. It over-counts English for GPT-style
tokenizers by roughly a quarter, so a block it accepts fits in practice. Pass
an exact counter when you have one, e.g. with tiktoken:
`count_tokens=lambda s: len(enc.encode(s))`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from memlattice_client._models import MemoryUpdate, SearchHit, UpdateStatus

TokenCounter = Callable[[str], int]
ELLIPSIS = "…"
_MIN_CONTENT_CHARS = 12


def estimate_tokens(text: str) -> int:
    """A conservative token estimate for `text` (see the module docstring)."""
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return math.ceil(ascii_chars / 3) + (len(text) - ascii_chars) + text.count("\n") + 1


def age(then: datetime, now: datetime) -> str:
    """'today', '3 days ago', '2 months ago', '1 year ago' (future times read 'today')."""
    days = (now - then).days
    if days <= 0:
        return "today"
    for size, unit in ((365, "year"), (30, "month"), (7, "week"), (1, "day")):
        if days >= size:
            n = days // size
            return f"{n} {unit}{'s' if n > 1 else ''} ago"
    return "today"  # pragma: no cover - days >= 1 always matched above


def unconfirmed(update: MemoryUpdate | None) -> str | None:
    """How far an `outdatedBy` mark stands, when no one confirmed it: "inferred"
    (the server's rules read it from what was written; on scenarios nobody tuned
    them on, about half such links are right) or who proposed it; None for a
    confirmed link, or when the hit does not say (an agent then reads it as firm)."""
    if update is None or update.status is not UpdateStatus.CANDIDATE:
        return None
    how = f"proposed by {update.proposed_by}" if update.proposed_by else "inferred"
    return f"{how}, not confirmed"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _bullet(hit: SearchHit, content: str, now: datetime, show_scores: bool) -> str:
    m = hit.memory
    stamp = f"{m.created_at.astimezone(UTC):%Y-%m-%d}, {age(m.created_at, now)}"
    extras = []
    if m.tags:
        extras.append("tags: " + ", ".join(_one_line(t) for t in m.tags))
    if show_scores:
        extras.append(f"score {hit.score:.2f}")
    if hit.outdated_by is not None:
        newer = _one_line(hit.outdated_by.content)[:60]
        when = f"{hit.outdated_by.created_at:%Y-%m-%d}"
        if (doubt := unconfirmed(hit.update)) is None:
            extras.append(f'OUTDATED: replaced by "{newer}" ({when})')
        else:
            extras.append(f'MAY BE OUTDATED: a later memory seems to replace it, "{newer}"'
                          f" ({when}; {doubt})")
    if hit.conflicts:
        names = "; ".join(f'"{_one_line(c.content)[:60]}"' for c in hit.conflicts[:3])
        extras.append(f"CONFLICTS with {names}")
    key = f"{_one_line(m.key)}: " if m.key else ""
    tail = f" ({'; '.join(extras)})" if extras else ""
    return f"- [{stamp}] {key}{content}{tail}"


def format_memories(
    hits: Sequence[SearchHit], budget_tokens: int, *, query: str | None = None,
    now: datetime | None = None, count_tokens: TokenCounter = estimate_tokens,
    show_scores: bool = True, header: str | None = None,
) -> str:
    """The prompt block for `hits` within `budget_tokens` (see the module docstring)."""
    now = now or datetime.now(UTC)
    if header is None:
        about = f' for "{_one_line(query)[:200]}"' if query else ""
        header = f"Relevant memories{about}, most relevant first:"
    if budget_tokens <= 0 or count_tokens(header) > budget_tokens:
        return ""
    if not hits:
        block = header + "\n- (no memories found)"
        return block if count_tokens(block) <= budget_tokens else header
    lines = [header]
    ranked = sorted(hits, key=lambda h: -h.score)  # stable: equal scores keep server order
    for hit in ranked:
        content = _one_line(hit.memory.content)
        line = _bullet(hit, content, now, show_scores)
        if count_tokens("\n".join([*lines, line])) <= budget_tokens:
            lines.append(line)
            continue
        cut = _longest_fitting(lines, hit, content, now, show_scores, budget_tokens,
                               count_tokens)
        if cut is not None:
            lines.append(cut)
        break
    return "\n".join(lines)


def _longest_fitting(
    lines: list[str], hit: SearchHit, content: str, now: datetime, show_scores: bool,
    budget: int, count_tokens: TokenCounter,
) -> str | None:
    """The bullet with `content` cut to the longest prefix that fits, or None if not
    even a short prefix fits (a dozen characters say too little to be worth the space)."""

    def candidate(n: int) -> str:
        return _bullet(hit, content[:n].rstrip() + ELLIPSIS, now, show_scores)

    def fits(n: int) -> bool:
        return count_tokens("\n".join([*lines, candidate(n)])) <= budget

    low, high = 0, len(content) - 1  # `content` whole did not fit
    if high < 1 or not fits(min(_MIN_CONTENT_CHARS, high)):
        return None
    low = min(_MIN_CONTENT_CHARS, high)
    while low < high:  # largest n with fits(n); fits is monotone for sane counters
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return candidate(low)
