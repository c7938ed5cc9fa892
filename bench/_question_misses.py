"""What stood first when a present or past question missed: counts only.

The blind scenario files may not be read, but their failures may be counted by
shape. For each present question whose top hit is not the newest statement,
`describe` names, without any text, what stood first and where the newest one
was (for a past question whose earlier statement is not in the top 3, the same
about that statement), so a ranking change can be aimed at the kind of memory that wins (a
replaced statement, a question turn, another speaker's turn, a later remark of
the same speaker) and checked on data nobody read. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bench._update_scoring import rank
from memlattice.search.answer_types import asked_kinds, held_kinds


@dataclass(frozen=True)
class Turn:
    """A scenario turn's place: its position in the scenario, session, speaker, text."""

    index: int
    session: str
    speaker: str
    content: str


def rank_band(position: int | None, wanted: str = "newest") -> str:
    """The wanted statement's rank as a band: 2-3, 4-10, or missing."""
    if position is None:
        return f"{wanted} missing"
    return f"{wanted} 2-3" if position < 3 else f"{wanted} 4-10"


def describe(question: str, ranked: Sequence[str], expected: Sequence[str],
             stale: set[str], turns: Mapping[str, Turn], *, wanted: str = "newest",
             rival: str = "replaced statement") -> list[str]:
    """The keys under which a present question's miss is counted: the newest
    statement's rank band, then what the top hit is (a replaced statement, or
    another turn described by speaker, time, form and whether it holds the kind of
    value the question asks for). For a past question, `wanted` names the earlier
    statement and `stale` are the statements that replaced it (`rival`)."""
    keys = [rank_band(rank(ranked, expected), wanted)]
    if not ranked:
        return [*keys, "top none"]
    top = ranked[0]
    if top in stale:
        return [*keys, f"top {rival}"]
    newest, first = turns.get(expected[0]), turns.get(top)
    if first is None or newest is None:
        return [*keys, "top unknown"]
    keys.append("top same speaker" if first.speaker == newest.speaker else "top other speaker")
    if first.index > newest.index:
        keys.append(f"top after {wanted}")
    elif first.session == newest.session:
        keys.append(f"top before {wanted} (same session)")
    else:
        keys.append(f"top before {wanted} (other session)")
    keys.append("top asks" if first.content.rstrip().endswith("?") else "top tells")
    asked = asked_kinds(question)
    if asked:
        keys.append("top holds asked kind" if asked & held_kinds(first.content)
                    else "top lacks asked kind")
        keys.append(f"{wanted} holds asked kind" if asked & held_kinds(newest.content)
                    else f"{wanted} lacks asked kind")
    else:
        keys.append("question types nothing")
    # The same four facts joined, for which kinds of turn win together.
    keys.append("shape " + "/".join(k.removeprefix("top ") for k in keys[1:4]))
    return keys
