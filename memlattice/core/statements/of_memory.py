"""What a memory about to be written states, and whose voice it is in.

A conversation turn speaks for its speaker (its text is "speaker: words", the
speaker also in its metadata); a plain memory for the user or agent it is
scoped to, else for its writer ("self"). The voice is who "I" is, and the
source that, restating its own fact, updates it. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from memlattice.core.entities import entity_key
from memlattice.core.model import MemoryInput
from memlattice.core.statements.contrast import profile
from memlattice.core.statements.extract import Statement, extract
from memlattice.core.statements.reports import LOOK_BACK, reported_person
from memlattice.core.statements.tokens import stem

# Typed records and facts state their own subjects in their payloads or claims;
# episodes are what happened, never a state that a later one replaces.
_NOT_STATEMENTS = frozenset({"episodic"})


_PREFIX = re.compile(r"^[^:\n]{1,80}: ")


def without_speaker(content: str, *, spoken: bool) -> str:
    """A stored turn's words without its "speaker: " prefix (memlattice.core.messages)."""
    return _PREFIX.sub("", content, count=1) if spoken else content


def voice_of(memory: MemoryInput) -> tuple[str | None, str]:
    """(the speaker's entity key, the text without the speaker's prefix)."""
    meta = memory.metadata or {}
    who = meta.get("speaker") or meta.get("role")
    text = memory.content
    if isinstance(who, str) and who:
        prefix = f"{who}: "
        text = text.removeprefix(prefix)
        if meta.get("speaker"):
            return entity_key(who), text
    return (entity_key(memory.user_id or memory.agent_id or "self"), text)


def reports_in(turns: Sequence[tuple[str | None, str, bool]],
               people: frozenset[str]) -> list[str | None]:
    """For each of a batch's memories in order, `(speaker, text, spoken)`, the person
    (entity key) it reports on, if any (memlattice.core.statements.reports): only
    a conversation's turns report, on one of `people` (everyone known to speak
    there), named in the turn or in the turns just before it."""
    out: list[str | None] = []
    for i, (speaker, text, spoken) in enumerate(turns):
        earlier = [t for _, t, said in turns[max(0, i - LOOK_BACK):i] if said]
        out.append(reported_person(text, speaker=speaker, earlier=earlier, people=people)
                   if spoken else None)
    return out


def told_statements(told: str, person: str) -> list[Statement]:
    """What a report says of `person`, read as their own words (`told`: the report
    put in their voice, reports.in_their_voice): their statements only (the
    reporter's "I" is someone else there)."""
    return [s for s in [*extract(told, speaker=person), *speaker_states(told, person)]
            if s.owner == person]


def statements_of(memory: MemoryInput, payload: Mapping[str, Any] | None = None,
                  ) -> tuple[str | None, str, tuple[Statement, ...]]:
    """(the memory's source, its text in that voice, what it states).

    Besides its text: a memory written under a `key` states that key's value (the
    latest write of a key is its value, as in any key-value store), and a semantic
    record states its payload's (subject, predicate, object), read like the
    sentence they make ("Alice" "lives in" "Lisbon") or, when no frame reads it,
    as the predicate itself of the subject."""
    speaker, text = voice_of(memory)
    if memory.memory_type in _NOT_STATEMENTS:
        return speaker, text, ()
    found = ([*extract(text, speaker=speaker), *speaker_states(text, speaker)]
             if memory.memory_type != "semantic" else [])
    if memory.key:
        found.append(Statement(owner=None, thing=("key", memory.key.casefold()),
                               attribute="key", value=" ".join(text.casefold().split()),
                               kind="text", framed=True, words=(memory.key,),
                               thing_text=memory.key))
    if payload is not None and memory.memory_type == "semantic":
        found.extend(_triple(payload))
    return speaker, text, tuple(found)


def speaker_states(text: str, speaker: str | None) -> list[Statement]:
    """What a first-person memory says of its speaker's states and home
    (memlattice.core.statements.states), as statements of the speaker: recorded
    under their attribute like any other, so a change is found however long ago
    the older state was said. A state left ("stopped eating meat") is denied."""
    if speaker is None:
        return []
    read = profile(text, speaker=speaker)
    return [*(Statement(owner=speaker, thing=(), attribute=s.attribute, value=s.state,
                        kind="text", negated=s.left, change=bool(read.change), framed=True,
                        words=(s.state,)) for s in sorted(read.states, key=repr)),
            *(Statement(owner=speaker, thing=(), attribute="home", value=place, kind="name",
                        change=bool(read.change), framed=True, words=(place,))
              for place in sorted(read.homes))]


def _triple(payload: Mapping[str, Any]) -> list[Statement]:
    subject, predicate, obj = (str(payload.get(k) or "").strip()
                               for k in ("subject", "predicate", "object"))
    if not (subject and predicate and obj):
        return []
    read = extract(f"{subject} {predicate} {obj}.", speaker=None)
    if read:
        return read[:1]
    value = " ".join(obj.casefold().split())
    return [Statement(owner=entity_key(subject), thing=(),
                      attribute="p:" + " ".join(stem(w) for w in predicate.casefold().split()),
                      value=value, kind="text", framed=True,
                      words=(subject, predicate, obj))]
