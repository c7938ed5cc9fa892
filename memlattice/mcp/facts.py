"""The fact tools, store_fact and recall_facts, over the API's storeFact / recallFacts.

A fact is a claim of some kind that storing again reinforces instead of
duplicating; its evidence names the memories it rests on.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from memlattice.mcp import params as p
from memlattice.mcp.runner import Runner
from memlattice_client import _knowledge as kn
from memlattice_client._record_models import FactHit, FactWriteResult, Record

Kind = Annotated[str, Field(description="What the fact is about, e.g. 'preference',"
                                        " 'location', 'schedule'.")]


class FactItem(BaseModel):
    id: str
    kind: str | None
    claim: str
    confidence: float
    score: float | None = None
    evidence: list[str] = Field(default_factory=list, description="kind:ref of each evidence")


class FactsResult(BaseModel):
    facts: list[FactItem]


class StoredFact(BaseModel):
    fact: FactItem
    created: bool = Field(description="false when the same claim existed and was reinforced")


def _fact(record: Record, score: float | None = None) -> FactItem:
    return FactItem(id=record.memory.id, kind=record.kind, claim=record.memory.content,
                    confidence=record.memory.confidence, score=score,
                    evidence=[f"{e.kind}:{e.ref}" for e in record.evidence])


def add_fact_tools(server: MCPServer, runner: Runner) -> None:
    """store_fact and recall_facts."""

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True))
    async def store_fact(
        ctx: Context, kind: Kind,
        claim: Annotated[str, Field(description="The fact in one sentence.")],
        namespace: p.Namespace = None, confidence: p.Confidence = None,
        evidence: Annotated[list[str] | None, Field(
            description="Ids of the memories the fact rests on.")] = None,
    ) -> StoredFact:
        """Store a fact: a `claim` of some `kind`. The same (namespace, kind, claim) is one
        fact, so storing it again reinforces it."""
        ns = runner.namespace(namespace)
        refs = [{"kind": "memory", "ref": ref} for ref in evidence or ()]
        fields: dict[str, Any] = {k: v for k, v in (("confidence", confidence), ("evidence", refs or None))
                  if v is not None}
        result: FactWriteResult = await runner(ctx, kn.store_fact(ns, kind, claim, **fields))
        return StoredFact(fact=_fact(result.fact), created=result.created)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def recall_facts(
        ctx: Context, namespace: p.Namespace = None,
        query: Annotated[str | None, Field(
            description="Rank by relevance to this; omitted: by confidence.")] = None,
        kind: Annotated[str | None, Field(description="Only facts of this kind.")] = None,
        limit: p.Limit = 10,
    ) -> FactsResult:
        """The current facts of the namespace by relevance to `query` (else by
        confidence), optionally of one `kind`."""
        ns = runner.namespace(namespace)
        hits: list[FactHit] = await runner(ctx, kn.recall_facts(ns, query, kind=kind,
                                                                limit=limit))
        return FactsResult(facts=[_fact(h.fact, h.score) for h in hits])
