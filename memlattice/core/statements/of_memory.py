"""What a memory about to be written states, and whose voice it is in.

A conversation turn speaks for its speaker (its text is "speaker: words", the
speaker also in its metadata); a plain memory for the user or agent it is
scoped to, else for its writer ("self"). The voice is who "I" is, and the
source that, restating its own fact, updates it. Pure: no I/O.
"""

from __future__ import annotations

from memlattice.core.entities import entity_key
from memlattice.core.model import MemoryInput
from memlattice.core.statements.extract import Statement, extract

# Typed records and facts state their own subjects in their payloads or claims;
# episodes are what happened, never a state that a later one replaces.
_NOT_STATEMENTS = frozenset({"episodic"})


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


def statements_of(memory: MemoryInput) -> tuple[str | None, tuple[Statement, ...]]:
    """(the memory's source, what it states)."""
    if memory.memory_type in _NOT_STATEMENTS:
        return None, ()
    speaker, text = voice_of(memory)
    return speaker, tuple(extract(text, speaker=speaker))
