"""What the server embeds for a memory: a conversation turn's words, its speaker apart.

`ingestConversation` stores a turn as "speaker: words" (memlattice.core.messages
.turn_content), so that a recalled turn says who said it. Embedded as one text,
the name weighed as much as a word of the turn: in a short turn it was most of
the vector ("Jonas: Sure!" is mostly "Jonas"), so every short turn of a speaker
came near any question naming them, and unrelated short turns of one speaker
near each other (WordLlama, LoCoMo dev turns of at most six words: cosine 0.53
on average between two of one speaker, 0.18 between two speakers'), while in a
long turn the name was almost nothing.

Dropping the name altogether was measured and loses: a question that names the
speaker ("When did Caroline ...") no longer prefers their turns (bench.locomo
--server-embedder: semantic recall@10 0.419 -> 0.235, default 0.780 -> 0.775;
bench.knowledge_update current@1 0.635 -> 0.519). So a turn is two parts, its
words and its speaker, which memlattice.embeddings.memory_vectors embeds apart
and adds at one fixed weight: the name counts the same in a long turn as in a
short one, as lexical search keeps the speaker as a BM25F field of its own
(memlattice.search.lexical). Any other memory is its content, unchanged.

Every place the server embeds a memory (a write, an update, a side vector
space, the background re-embed, an import) must embed the same parts, or one
namespace holds vectors of two kinds; so they all come from `embedding_text`,
from the memory's content and metadata as stored. Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# A speaker's name is at most 256 characters (memlattice.core.messages.MessageInput).
_MAX_PREFIX = 256 + 2


@dataclass(frozen=True, slots=True)
class EmbeddingText:
    """What stands for a memory in its vector: `words`, and who said them (None for
    anything but a conversation turn)."""

    words: str
    speaker: str | None = None


def speaker_of(metadata: Mapping[str, Any] | None) -> str | None:
    """Who a memory's metadata names as its author: the speaker, else the role (what
    `ingestConversation` stores, memlattice.services.conversations)."""
    if not metadata:
        return None
    who = metadata.get("speaker") or metadata.get("role")
    return who if isinstance(who, str) and who else None


@lru_cache(maxsize=16_384)
def speaker_in_json(metadata_json: str | None) -> str | None:
    """`speaker_of` the metadata as the graph stores it (`metadataJson`)."""
    if not metadata_json:
        return None
    try:
        metadata = json.loads(metadata_json)
    except ValueError:
        return None
    return speaker_of(metadata) if isinstance(metadata, dict) else None


def split_speaker(content: str, speaker: str | None) -> tuple[str | None, str]:
    """(the speaker, the words) of a conversation turn stored as "speaker: words"
    (memlattice.core.messages.turn_content); (None, content) for any other memory,
    and for a turn whose content no longer starts with its speaker's name."""
    if speaker and content.startswith(f"{speaker}: "):
        return speaker, content[len(speaker) + 2:]
    return None, content


def may_name_speaker(content: str) -> bool:
    """Whether `content` can be a turn's "speaker: words" (else no metadata need be read)."""
    return ": " in content[:_MAX_PREFIX]


def embedding_text(content: str, metadata: Mapping[str, Any] | str | None) -> EmbeddingText:
    """What the server embeds for a memory of `content` with `metadata` (a mapping,
    or the stored `metadataJson`): a turn's words and speaker apart, else the content."""
    if not may_name_speaker(content):
        return EmbeddingText(content)  # no metadata to read
    who = (speaker_in_json(metadata) if isinstance(metadata, str) or metadata is None
           else speaker_of(metadata))
    speaker, words = split_speaker(content, who)
    if speaker is None or not words.strip():
        return EmbeddingText(content)
    return EmbeddingText(words, speaker)


__all__ = ["EmbeddingText", "embedding_text", "may_name_speaker", "speaker_in_json", "speaker_of", "split_speaker"]
