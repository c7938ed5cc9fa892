"""The text an agent reads from a tool: every memory with its id (pure, no I/O).

An agent acts on what it read: it links two memories, supersedes an outdated
one, forgets a wrong one, and every one of those tools takes an id. So each
memory line starts with `[id]`. Recall's block keeps to a token budget the way
the client's prompt block does: the best memories first, the last one cut
short rather than dropped, nothing past the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from memlattice.mcp.results import Link
from memlattice_client._models import Memory, SearchHit
from memlattice_client._prompt import ELLIPSIS, TokenCounter, age, estimate_tokens, unconfirmed

_MIN_CONTENT_CHARS = 12
ACT_ON_IDS = "(act on a memory by its [id]: get, link, supersede, forget)"


def one_line(text: str) -> str:
    return " ".join(text.split())


def memory_line(m: Memory, content: str | None = None, *, now: datetime,
                extras: Sequence[str] = ()) -> str:
    """`- [id] 2026-03-02 (3 days ago) key: content (tags: a, b; ...)`."""
    content = one_line(m.content) if content is None else content
    stamp = f"{m.created_at.astimezone(UTC):%Y-%m-%d} ({age(m.created_at, now)})"
    notes = []
    if m.tags:
        notes.append("tags: " + ", ".join(one_line(t) for t in m.tags))
    if m.status.value != "ACTIVE":
        notes.append(m.status.value + (f" by {m.superseded_by}" if m.superseded_by else ""))
    notes.extend(extras)
    key = f"{one_line(m.key)}: " if m.key else ""
    tail = f" ({'; '.join(notes)})" if notes else ""
    return f"- [{m.id}] {stamp} {key}{content}{tail}"


def _hit_extras(hit: SearchHit) -> list[str]:
    extras = [f"score {hit.score:.2f}"]
    if hit.expanded:
        extras.append("linked to a hit")
    if hit.outdated_by is not None:
        doubt = unconfirmed(hit.update)
        if doubt is None:
            extras.append(f"OUTDATED by [{hit.outdated_by.id}]")
        else:  # a candidate (unconfirmed() is None without an update): decide_update takes its id
            update_id = hit.update.id if hit.update is not None else ""
            extras.append(f"MAY BE OUTDATED by [{hit.outdated_by.id}] ({doubt};"
                          f" decide_update {update_id})")
    if hit.conflicts:
        extras.append("CONTRADICTS " + ", ".join(f"[{c.id}]" for c in hit.conflicts[:3]))
    return extras


def recall_text(hits: Sequence[SearchHit], budget_tokens: int, *, query: str,
                now: datetime | None = None,
                count_tokens: TokenCounter = estimate_tokens) -> str:
    """The recalled memories, best first, within `budget_tokens` (see the docstring)."""
    now = now or datetime.now(UTC)
    header = f'Memories for "{one_line(query)[:200]}", most relevant first {ACT_ON_IDS}:'
    if not hits:
        return f'No memories found for "{one_line(query)[:200]}".'
    lines = [header]
    for hit in sorted(hits, key=lambda h: -h.score):  # stable: ties keep the server's order
        content = one_line(hit.memory.content)
        extras = _hit_extras(hit)

        def line(n: int, hit: SearchHit = hit, content: str = content,
                 extras: list[str] = extras) -> str:
            cut = content if n >= len(content) else content[:n].rstrip() + ELLIPSIS
            return memory_line(hit.memory, cut, now=now, extras=extras)

        def fits(n: int) -> bool:
            return count_tokens("\n".join([*lines, line(n)])) <= budget_tokens

        if fits(len(content)):
            lines.append(line(len(content)))
            continue
        longest = _longest_prefix(len(content), fits)
        if longest is not None:
            lines.append(line(longest))
        break
    return "\n".join(lines)


def _longest_prefix(length: int, fits: Callable[[int], bool]) -> int | None:
    """The largest n < length with fits(n), or None below a dozen characters (too
    little to be worth the space)."""
    low, high = min(_MIN_CONTENT_CHARS, length - 1), length - 1
    if high < 1 or not fits(low):
        return None
    while low < high:  # fits is monotone in n for any sane token counter
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def memory_text(m: Memory, *, now: datetime | None = None) -> str:
    """One memory in full: its line, then what else is known about it."""
    now = now or datetime.now(UTC)
    facts = [f"version {m.version}", f"type {m.memory_type}"]
    if m.scope is not None:
        ids = {"agent": m.agent_id, "user": m.user_id, "session": m.session_id,
               "task": m.task_id}
        given = ", ".join(f"{k}_id={v}" for k, v in ids.items() if v)
        facts.append(f"scope {m.scope.value}" + (f" ({given})" if given else ""))
    if m.sensitivity is not None:
        facts.append(f"sensitivity {m.sensitivity.value}")
    if m.confidence != 1.0:
        facts.append(f"confidence {m.confidence:g}")
    if m.updated_at != m.created_at:
        facts.append(f"updated {m.updated_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC")
    return memory_line(m, now=now) + "\n  " + "; ".join(facts)


def page_text(memories: Sequence[Memory], *, total: int, namespace: str,
              next_cursor: str | None, now: datetime | None = None) -> str:
    """A page of memories, newest first, and how to get the next one."""
    now = now or datetime.now(UTC)
    if not memories:
        return f"No memories in {namespace} match."
    lines = [f"{len(memories)} of {total} memories in {namespace}, newest first {ACT_ON_IDS}:"]
    lines += [memory_line(m, now=now) for m in memories]
    if next_cursor:
        lines.append(f"(more: call browse again with cursor={next_cursor})")
    return "\n".join(lines)


def neighbourhood_text(center: Memory, links: Sequence[Link],
                       neighbours: Sequence[Memory], *, now: datetime | None = None) -> str:
    """The memory, then one line per relationship with the memory at its other end."""
    now = now or datetime.now(UTC)
    seen = {m.id: m for m in neighbours}
    lines = [memory_line(center, now=now)]
    if not links:
        lines.append("  (no relationships)")
    for link in links:
        arrow = f"{link.type} ->" if link.direction == "OUT" else f"<- {link.type}"
        other = seen.get(link.neighbour_id)
        where = (memory_line(other, now=now)[2:] if other is not None
                 else f"[{link.neighbour_id}] (not visible to this key)")
        lines.append(f"  {arrow} {where}")
    return "\n".join(lines)
