"""What ranking reads of a recall candidate's property map (graph.recall_rows keeps
the maps raw: most candidates are ranked and dropped, so only the hits become
`Memory` objects), and the properties a search's candidates must therefore carry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from memlattice.core.embedding_text import may_name_speaker, speaker_in_json
from memlattice.core.search_config import SearchConfig
from memlattice.graph.codec import to_datetime
from memlattice.search.answer_types import held_kinds
from memlattice.search.information import asked_share
from memlattice.search.lexical import Bm25, Field, document_text, split_speaker
from memlattice.search.ranking import Candidate, Scored
from memlattice.search.temporal_signal import Timing

# What ranking reads of every candidate besides the properties every memory has
# (`candidate`, `lexical_fields`, `source`, `timing`, and the status and successor
# services.recall orders by): a search's candidates carry these and what its
# caller reads, not the whole memory (graph.projections.project_memory).
RANKED_PROPERTIES: frozenset[str] = frozenset({
    "content", "summary", "key", "tags", "metadataJson", "agentId", "userId", "status",
    "confidence", "salience", "accessCount", "createdAt", "eventStart", "eventEnd",
    "supersededBy"})


def lexical_fields(bm25: Bm25, props: Mapping[str, Any], context: Sequence[tuple[int, str]],
                   config: SearchConfig) -> list[Field]:
    """A candidate's BM25F fields, scored with its collection's statistics
    (memlattice.search.lexical) in place of the fulltext index's score, which
    counts every tenant's memories: its own text, and the turns around it when
    it has some (`context`), as much as its own text says something
    (memlattice.search.information)."""
    speaker, words = split_speaker(str(props.get("content") or ""), said_by(props))
    text = document_text(words, props.get("summary"), props.get("key"), props.get("tags") or ())
    own = bm25.rarity.own_share(text) if bm25.rarity is not None and context else 1.0
    return [bm25.field([text]), *([bm25.speaker_field(speaker)] if speaker else []),
            *bm25.context_fields(context, hops=config.context_hops,
                                 decay=config.context_decay, own=own)]


def sources(scored: Sequence[Scored], props: Mapping[str, Mapping[str, Any]],
             ) -> dict[str, tuple[str | None, datetime | None]]:
    return {s.id: source(props[s.id]) for s in scored if s.id in props}


def source(props: Mapping[str, Any]) -> tuple[str | None, datetime | None]:
    """Who said a memory (its speaker, else its agent or user) and when."""
    return (said_by(props) or props.get("agentId") or props.get("userId"),
            to_datetime(props.get("createdAt")))


def said_by(props: Mapping[str, Any]) -> str | None:
    """Who a conversation turn names as its author at the start of its content (its
    metadata's speaker, else its role: memlattice.core.embedding_text)."""
    content, stored = str(props.get("content") or ""), props.get("metadataJson")
    if not isinstance(stored, str) or not may_name_speaker(content):
        return None  # not "who: words"
    return speaker_in_json(stored)


def timing(props: Mapping[str, Any]) -> Timing:
    return Timing(event_start=to_datetime(props.get("eventStart")),
                  event_end=to_datetime(props.get("eventEnd")),
                  recorded=to_datetime(props.get("createdAt")))


def candidate(id: str, props: Mapping[str, Any], *, similarity: float | None,
               fts: float | None) -> Candidate:
    return Candidate(
        id=id, similarity=similarity, fts=fts,
        created_at=to_datetime(props.get("createdAt")),
        access_count=int(props.get("accessCount") or 0),
        confidence=float(props.get("confidence", 1.0)), salience=props.get("salience"),
        key=props.get("key"), tags=tuple(props.get("tags") or ()),
        asked=asked_share(str(props.get("content") or "")),
        held=held_kinds(str(props.get("content") or "")),
    )
