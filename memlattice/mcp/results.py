"""What the tools return as structured content: small models, no nulls.

An agent pays for every token it reads. A memory comes back as the fields that
say something about it (`MemoryView`), with those that are empty left out;
writes echo what an agent needs next (the id and version), not the whole node.
"""

from __future__ import annotations

from typing import Any

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from memlattice_client._models import Edge, Memory, ReplacementCandidate, SearchHit


class MemoryView(BaseModel):
    """A memory as an agent reads it (empty fields are left out)."""

    id: str
    content: str
    memory_type: str | None = None
    key: str | None = None
    tags: list[str] = Field(default_factory=list)
    status: str
    version: int
    scope: str | None = None
    agent_id: str | None = None
    user_id: str | None = None
    session_id: str | None = None
    task_id: str | None = None
    confidence: float | None = Field(default=None, description="left out when 1")
    sensitivity: str | None = None
    metadata: dict[str, Any] | None = None
    created_at: str
    updated_at: str | None = Field(default=None, description="left out when never changed")
    superseded_by: str | None = Field(default=None, description="the id that replaced it")


def memory_view(m: Memory) -> MemoryView:
    return MemoryView(
        id=m.id, content=m.content,
        memory_type=None if m.memory_type == "note" else m.memory_type, key=m.key,
        tags=list(m.tags), status=m.status.value, version=m.version,
        scope=m.scope.value if m.scope else None, agent_id=m.agent_id, user_id=m.user_id,
        session_id=m.session_id, task_id=m.task_id,
        confidence=None if m.confidence == 1.0 else m.confidence,
        sensitivity=m.sensitivity.value if m.sensitivity else None,
        metadata=m.metadata or None, created_at=m.created_at.isoformat(),
        updated_at=None if m.updated_at == m.created_at else m.updated_at.isoformat(),
        superseded_by=m.superseded_by)


class Replaceable(BaseModel):
    """An earlier memory the new one may replace (its nearest by meaning and by its words)."""

    id: str
    content: str
    similarity: float
    update_id: str | None = Field(default=None, description=(
        "the update link the server already made between the two, if any"))


class Remembered(BaseModel):
    """What `remember` wrote: enough to link, supersede or forget it next."""

    id: str
    version: int
    namespace: str
    duplicate_of: str | None = Field(
        default=None, description="the existing memory this write repeats, when the"
                                  " service reports one")
    may_replace: list[Replaceable] | None = Field(default=None, description=(
        "the earlier memories nearest this one by meaning: if one states an older value"
        " of the same thing, call `replaces` with both ids"))


def replaceable(c: ReplacementCandidate) -> Replaceable:
    return Replaceable(id=c.memory.id, content=c.memory.content,
                       similarity=round(c.similarity, 3),
                       update_id=c.update.id if c.update else None)


def may_replace_text(earlier: list[Replaceable], width: int = 160) -> str:
    """What `remember` tells the agent of the earlier memories its new one may replace."""
    if not earlier:
        return ""
    lines = [f"- [{r.id}] {' '.join(r.content.split())[:width]}" for r in earlier]
    return ("\nNearest earlier memories; if the new one states a newer value of the same"
            " thing as one of them, call `replaces` with both ids:\n" + "\n".join(lines))


def remembered(m: Memory) -> Remembered:
    # `duplicate_of` is read only if the write's result carries it (the client's
    # Memory model ignores fields it does not declare, so it is None until then).
    return Remembered(id=m.id, version=m.version, namespace=m.namespace,
                      duplicate_of=getattr(m, "duplicate_of", None))


class Superseded(BaseModel):
    """The memory that replaces `previous_id` (which leaves recall, kept as history)."""

    id: str = Field(description="the new memory's id")
    version: int
    previous_id: str
    previous_status: str


class RecallHit(BaseModel):
    """One recalled memory with the parts of its score."""

    id: str
    content: str
    score: float
    similarity_score: float | None = None
    fts_score: float | None = None
    recency_score: float | None = None
    graph_score: float = 0.0
    expanded: bool = False
    tags: list[str] = Field(default_factory=list)
    key: str | None = None
    created_at: str
    conflicts: list[str] = Field(default_factory=list, description="ids it CONTRADICTS")
    outdated_by: str | None = Field(default=None, description=(
        "id of a newer memory that states another value of what this one states"))


class RecallResult(BaseModel):
    query: str
    hits: list[RecallHit]


def recall_hit(h: SearchHit) -> RecallHit:
    return RecallHit(id=h.memory.id, content=h.memory.content, score=h.score,
                     similarity_score=h.similarity_score, fts_score=h.fts_score,
                     recency_score=h.recency_score, graph_score=h.graph_score,
                     expanded=h.expanded, tags=list(h.memory.tags), key=h.memory.key,
                     created_at=h.memory.created_at.isoformat(),
                     conflicts=[c.id for c in h.conflicts],
                     outdated_by=h.outdated_by.id if h.outdated_by else None)


class Page(BaseModel):
    """Memories newest first, and how to ask for the next ones."""

    memories: list[MemoryView]
    total: int = Field(description="how many match in all")
    next_cursor: str | None = Field(default=None,
                                    description="pass as `cursor` for the next page")


class Link(BaseModel):
    """One relationship of a memory, seen from that memory."""

    edge_id: str
    type: str
    direction: str = Field(description="OUT: this memory -> neighbour; IN: neighbour -> it")
    neighbour_id: str


class Neighbourhood(BaseModel):
    """A memory, its relationships and the memories at their other ends."""

    memory: MemoryView
    links: list[Link]
    neighbours: list[MemoryView] = Field(
        description="the linked memories this key may see, active or not")


def link_of(edge: Edge, center: str) -> Link:
    outgoing = edge.source_id == center
    return Link(edge_id=edge.id, type=edge.type.value, direction="OUT" if outgoing else "IN",
                neighbour_id=edge.target_id if outgoing else edge.source_id)


def reply(text: str, structured: BaseModel) -> CallToolResult:
    """A result an agent can read (`text`) and a program can parse (`structured`)."""
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=structured.model_dump(mode="json",
                                                                   exclude_none=True))
