"""The update tools, updates, decide_update and replaces, over memoryUpdates /
confirmUpdate / rejectUpdate / proposeUpdate.

The server links a memory that states a new value of something to the memory that
stated the old one (found on write). `recall` marks an outdated hit; an agent that
knows better confirms the link (the old memory becomes SUPERSEDED, kept as history)
or rejects it (never proposed again). An agent that knows its new memory replaces an
earlier one (`remember` shows the nearest earlier ones) says so with `replaces`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from memlattice.mcp import params as p
from memlattice.mcp.runner import Runner
from memlattice_client import _updates as up
from memlattice_client._models import MemoryUpdate


class UpdateItem(BaseModel):
    id: str
    status: str
    kind: str = Field(description="UPDATE (the older one is outdated) or CONTRADICTION"
                                  " (another source disagrees; both cannot hold)")
    confidence: float
    reason: str
    newer_id: str | None = None
    newer: str | None = Field(default=None, description="the newer memory's content")
    older_id: str | None = None
    older: str | None = Field(default=None, description="the older memory's content")


class UpdatesResult(BaseModel):
    updates: list[UpdateItem]


def _item(u: MemoryUpdate) -> UpdateItem:
    return UpdateItem(id=u.id, status=u.status.value, kind=u.kind, confidence=u.confidence,
                      reason=u.reason, newer_id=u.newer.id if u.newer else None,
                      newer=u.newer.content if u.newer else None,
                      older_id=u.older.id if u.older else None,
                      older=u.older.content if u.older else None)


def add_update_tools(server: MCPServer, runner: Runner) -> None:
    """updates, decide_update and replaces."""

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def updates(
        ctx: Context, namespace: p.Namespace = None,
        memory_id: Annotated[str | None, Field(
            description="Only the links of this memory (either side).")] = None,
        limit: p.Limit = 10,
    ) -> UpdatesResult:
        """Candidate and confirmed updates: a newer memory states another value of what
        an older one stated ("I live in Bergen" -> "we moved to Tromsø"), newest first."""
        ns = runner.namespace(namespace)
        found: list[MemoryUpdate] = await runner(ctx, up.memory_updates(
            ns, memory_id=memory_id, first=limit))
        return UpdatesResult(updates=[_item(u) for u in found])

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True))
    async def decide_update(
        ctx: Context,
        id: Annotated[str, Field(description="The update's id (from `updates`).")],
        decision: Annotated[Literal["confirm", "reject"], Field(description=(
            "confirm: the newer memory replaces the older (which is kept as history);"
            " reject: the link is wrong and is never proposed again."))],
        namespace: p.Namespace = None,
        note: Annotated[str | None, Field(description="Why, when rejecting.")] = None,
    ) -> UpdateItem:
        """Confirm or reject an update the server found."""
        ns = runner.namespace(namespace)
        call = (up.confirm_update(ns, id) if decision == "confirm"
                else up.reject_update(ns, id, note=note))
        done: MemoryUpdate = await runner(ctx, call)
        return _item(done)

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True))
    async def replaces(
        ctx: Context,
        newer_id: Annotated[str, Field(description="The memory with the new state.")],
        older_id: Annotated[str, Field(description="The earlier memory it replaces.")],
        namespace: p.Namespace = None,
        confirm: Annotated[bool, Field(description=(
            "true: the older memory is SUPERSEDED now (kept as history, out of recall);"
            " false: a candidate that recall marks MAY BE OUTDATED, for someone to decide."))] = True,
        attribute: Annotated[str, Field(description=(
            "What changed, in a word or two (home, port, owner).")
            , max_length=128)] = "",
        reason: Annotated[str | None, Field(description="Why, in words.")] = None,
    ) -> UpdateItem:
        """Say that a newer memory states a newer value of what an older one stated
        ("we settled into our flat in Tromsø" replaces "I live in Bergen"). Use it after
        `remember` when one of the earlier memories it shows is outdated by the new one."""
        ns = runner.namespace(namespace)
        done: MemoryUpdate = await runner(ctx, up.propose_update(
            ns, newer_id, older_id, confirm=confirm, attribute=attribute, reason=reason))
        return _item(done)
