"""The reading tools that do not search: get, browse, neighbourhood.

Recall answers "what is relevant to this?"; an agent also needs "what is this
id?" (after a link or a conflict named it), "what did we store lately?" and
"what is this memory connected to?". None of these ranks anything or counts
as a recall, so none of them raises a memory's popularity.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from memlattice.mcp import params as p
from memlattice.mcp.results import (
    MemoryView,
    Neighbourhood,
    Page,
    link_of,
    memory_view,
    reply,
)
from memlattice.mcp.runner import Runner
from memlattice.mcp.text import memory_text, neighbourhood_text, page_text
from memlattice_client import _operations as ops
from memlattice_client._models import Edge, Memory, MemoryPage

Cursor = Annotated[str | None, Field(
    description="Continue after the previous page: its `next_cursor`.")]
Statuses = Annotated[list[p.StatusName] | None, Field(
    description="Only memories in these states (default: ACTIVE only).")]
MemoryTypes = Annotated[list[str] | None, Field(description="Only memories of these types.")]
EdgeTypes = Annotated[list[p.EdgeName] | None, Field(
    description="Only relationships of these types (default: all).")]
def _given(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


Direction = Annotated[p.DirectionName, Field(
    description="OUT: relations from this memory; IN: to it; BOTH (default).")]


def add_browse_tools(server: MCPServer, runner: Runner) -> None:
    """get, browse and neighbourhood."""

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def get(ctx: Context, id: p.MemoryId,
                  namespace: p.Namespace = None) -> Annotated[CallToolResult, MemoryView]:
        """One memory by id, whatever its state (a superseded one names its successor)."""
        ns = runner.namespace(namespace)
        memory: Memory = await runner(ctx, ops.memory(ns, id))
        return reply(memory_text(memory), memory_view(memory))

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def browse(
        ctx: Context, namespace: p.Namespace = None, limit: p.Limit = 20,
        cursor: Cursor = None, tags_any: p.TagsAny = None, key: p.Key = None,
        memory_types: MemoryTypes = None, statuses: Statuses = None,
        scope: Annotated[p.ScopeName | None, Field(
            description="Only memories of this scope level.")] = None,
        agent_id: p.AgentId = None, user_id: p.UserId = None,
        session_id: p.SessionId = None, task_id: p.TaskId = None,
    ) -> Annotated[CallToolResult, Page]:
        """The namespace's memories, newest first, without a query: what was stored
        lately, optionally narrowed by tags, key, type, state or scope and its ids.
        Page on with `cursor`."""
        ns = runner.namespace(namespace)
        narrowing = _given(tags_any=tags_any, key=key, memory_types=memory_types,
                           statuses=statuses, scope=scope, agent_id=agent_id,
                           user_id=user_id, session_id=session_id, task_id=task_id)
        page: MemoryPage = await runner(ctx, ops.memories(ns, first=limit, after=cursor,
                                                          **narrowing))
        following = page.end_cursor if page.has_next_page else None
        result = Page(memories=[memory_view(m) for m in page.items], total=page.total_count,
                      next_cursor=following)
        return reply(page_text(page.items, total=page.total_count, namespace=ns,
                               next_cursor=following), result)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def neighbourhood(
        ctx: Context, id: p.MemoryId, namespace: p.Namespace = None,
        types: EdgeTypes = None, direction: Direction = "BOTH",
        limit: Annotated[int, Field(ge=1, le=100, description=(
            "At most this many relationships."))] = 25,
    ) -> Annotated[CallToolResult, Neighbourhood]:
        """A memory with its relationships (SUPPORTS, CONTRADICTS, SUPERSEDES, ...) and
        the memories at their other ends: what it rests on, what it conflicts with,
        what replaced it."""
        ns = runner.namespace(namespace)
        center: Memory = await runner(ctx, ops.memory(ns, id))
        edges: list[Edge] = await runner(ctx, ops.edges(ns, id, types=types,
                                                        direction=direction))
        links = [link_of(e, center.id) for e in edges[:limit]]
        others = dict.fromkeys(link.neighbour_id for link in links)
        found: list[Memory | None] = await runner.all(
            ctx, [ops.memory(ns, other) for other in others], absent_ok=True)
        neighbours = [m for m in found if m is not None]
        result = Neighbourhood(memory=memory_view(center), links=links,
                               neighbours=[memory_view(m) for m in neighbours])
        return reply(neighbourhood_text(center, links, neighbours), result)
