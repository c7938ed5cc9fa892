"""The MCP tools: remember, recall, forget, link, ingest_conversation, store_fact,
recall_facts.

Each tool authenticates the caller's API key (the `Authorization` header on
streamable HTTP, `MEMLATTICE_API_KEY` on stdio), builds the operation the
Python client would send, and runs it through the `Gateway` as that caller.
Results come back twice: as text an agent can read directly (recall returns a
ready prompt block) and as structured content matching the tool's output schema.
Failures are tool errors whose text starts with the stable code
(`FORBIDDEN: ...`, `VALIDATION: ...`), so agents and people can act on them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from memlattice.core.errors import MemlatticeError as ServerError
from memlattice.mcp.gateway import Gateway
from memlattice_client import _knowledge as kn
from memlattice_client import _operations as ops
from memlattice_client._errors import MemlatticeError as ClientError
from memlattice_client._models import (
    Edge,
    FactHit,
    FactWriteResult,
    ForgetResult,
    Memory,
    Record,
    SearchHit,
)
from memlattice_client._operations import Call
from memlattice_client._prompt import format_memories

INSTRUCTIONS = """Memlattice is long-term memory. Call `recall` at the start of a task with
what you are about to do, and `remember` for facts, preferences and decisions worth keeping
(one idea per memory, with tags). `link` relates memories (SUPPORTS, CONTRADICTS, DERIVED,
RELATED); `forget` tombstones what is wrong or outdated. Every call names a namespace; your
API key decides which namespaces, scopes and sensitivities you may touch."""

ScopeName = Literal["task", "session", "user", "agent"]
EdgeName = Literal["RELATED", "DERIVED", "CONTRADICTS", "SUPPORTS", "SUPERSEDES"]
ModeName = Literal["hybrid", "semantic", "lexical"]
SensitivityName = Literal["public", "low", "medium", "high", "hyper"]
TokenSource = Callable[[Context], str | None]


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


class RecallResult(BaseModel):
    query: str
    hits: list[RecallHit]


class ConversationTurn(BaseModel):
    """One message of a conversation to store."""

    content: str
    speaker: str | None = Field(default=None, description="who said it (a name)")
    role: str | None = Field(default=None, description="or the role: user, assistant, tool")
    at: str | None = Field(default=None, description="when, ISO 8601; now if omitted")


class IngestedSession(BaseModel):
    session_id: str
    created: int = Field(description="turns written now (0 when the session was sent before)")
    ids: list[str] = Field(description="the turns' memory ids, in order")


def _hit(h: SearchHit) -> RecallHit:
    return RecallHit(id=h.memory.id, content=h.memory.content, score=h.score,
                     similarity_score=h.similarity_score, fts_score=h.fts_score,
                     recency_score=h.recency_score, graph_score=h.graph_score,
                     expanded=h.expanded, tags=list(h.memory.tags), key=h.memory.key,
                     created_at=h.memory.created_at.isoformat(),
                     conflicts=[c.id for c in h.conflicts])


def _given(**values: Any) -> dict[str, Any]:
    """Only the arguments the agent actually gave (None means 'not given')."""
    return {k: v for k, v in values.items() if v is not None}


def _scope_ids(agent_id: str | None, user_id: str | None, session_id: str | None,
               task_id: str | None) -> dict[str, str]:
    return _given(agent_id=agent_id, user_id=user_id, session_id=session_id, task_id=task_id)


def build_server(gateway: Callable[[], Gateway], token_for: TokenSource) -> MCPServer:
    """The MCP server over `gateway()` (resolved per call: the runtime starts later)."""
    server = MCPServer("memlattice", instructions=INSTRUCTIONS)

    async def run(ctx: Context, call: Call[Any]) -> Any:
        gw = gateway()
        try:
            principal = await gw.authenticate(token_for(ctx))
            return await gw.run(call, principal)
        except (ClientError, ServerError) as exc:  # an operation's, or authentication's
            raise ToolError(f"{exc.code}: {exc.message}") from exc

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=False))
    async def remember(
        ctx: Context, namespace: str, content: str, tags: list[str] | None = None,
        key: str | None = None, memory_type: str | None = None,
        scope: ScopeName | None = None, agent_id: str | None = None,
        user_id: str | None = None, session_id: str | None = None, task_id: str | None = None,
        metadata: dict[str, Any] | None = None, confidence: float | None = None,
        sensitivity: SensitivityName | None = None,
    ) -> Memory:
        """Store one memory (a fact, preference, decision or observation) in `namespace`.

        `scope` with its id (e.g. scope="user", user_id="u1") makes it visible only to
        that user's (or session's, agent's, task's) recalls; without it the whole
        namespace sees it. `key` names a slot (e.g. "user.city") that recall boosts.
        `sensitivity` (default low) hides it from keys whose clearance is lower.
        """
        fields = _given(tags=tags, key=key, memory_type=memory_type, scope=scope,
                        metadata=metadata, confidence=confidence, sensitivity=sensitivity,
                        **_scope_ids(agent_id, user_id, session_id, task_id))
        memory: Memory = await run(ctx, ops.write_memory(namespace, content, **fields))
        return memory

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def recall(
        ctx: Context, namespace: str, query: str, limit: int = 10,
        mode: ModeName | None = None, scope: ScopeName | None = None,
        agent_id: str | None = None, user_id: str | None = None,
        session_id: str | None = None, task_id: str | None = None,
        tags_any: list[str] | None = None, expand: int = 0,
        budget_tokens: int = 1500,
    ) -> Annotated[CallToolResult, RecallResult]:
        """Find the memories most relevant to `query`, best first, each with its score.

        Give the ids of who is asking (user_id, session_id, ...) to see their scoped
        memories; `scope` starts the visibility chain at that level. `mode` picks the
        indexes (hybrid by default). `expand` > 0 also brings up to that many memories
        linked to the hits. The text result is a prompt block of at most
        `budget_tokens`; the structured result lists every hit.
        """
        options: dict[str, Any] = _given(limit=limit, mode=mode, scope=scope)
        context = _scope_ids(agent_id, user_id, session_id, task_id)
        if context:
            options["context"] = context
        if tags_any:
            options["filter"] = {"tags_any": tags_any}
        if expand > 0:
            options["expansion"] = {"max_expand": expand}
        hits: list[SearchHit] = await run(ctx, ops.search(namespace, query, **options))
        text = format_memories(hits, budget_tokens, query=query)
        structured = RecallResult(query=query, hits=[_hit(h) for h in hits])
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content=structured.model_dump(mode="json"))

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=True))
    async def forget(
        ctx: Context, namespace: str, contains: str | None = None, id: str | None = None,
        key: str | None = None, tag: str | None = None, tags: list[str] | None = None,
        query: str | None = None,
    ) -> ForgetResult:
        """Tombstone memories: those whose content `contains` a substring, or those
        matching every one of id / key / tag / tags / query. They leave recall but stay
        in the audit trail. Returns how many and which."""
        predicate = _given(contains=contains, id=id, key=key, tag=tag, tags=tags, query=query)
        result: ForgetResult = await run(ctx, ops.forget(namespace, **predicate))
        return result

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=False))
    async def link(
        ctx: Context, namespace: str, source_id: str, target_id: str,
        type: EdgeName = "RELATED", metadata: dict[str, Any] | None = None,
    ) -> Edge:
        """Relate two memories of one namespace: SUPPORTS, CONTRADICTS (recall flags
        the conflict), DERIVED, RELATED (recall's expansion follows it), SUPERSEDES."""
        edge: Edge = await run(ctx, ops.add_edge(namespace, source_id, target_id, type,
                                                 metadata=metadata))
        return edge

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True))
    async def ingest_conversation(
        ctx: Context, namespace: str, session_id: str, messages: list[ConversationTurn],
        user_id: str | None = None, agent_id: str | None = None,
    ) -> IngestedSession:
        """Store a conversation session in one call: one memory per turn ("speaker:
        content"), the session, the order of its turns and its speakers. Recall then
        reads each turn with the turns around it. Sending the same session again
        changes nothing; sending its continuation extends it."""
        turns = [_given(content=m.content, speaker=m.speaker, role=m.role, at=m.at)
                 for m in messages]
        done = await run(ctx, ops.ingest_conversation(
            namespace, session_id, turns, **_scope_ids(agent_id, user_id, None, None)))
        return IngestedSession(session_id=done.session_id, created=done.created,
                               ids=[m.id for m in done.memories])

    _add_fact_tools(server, run)
    return server


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


def _add_fact_tools(server: MCPServer, run: Callable[..., Any]) -> None:
    """store_fact and recall_facts, over the API's storeFact / recallFacts."""

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True))
    async def store_fact(ctx: Context, namespace: str, kind: str, claim: str,
                         confidence: float | None = None,
                         evidence: list[str] | None = None) -> StoredFact:
        """Store a fact: a `claim` of some `kind` (e.g. "preference", "location"). The same
        (namespace, kind, claim) is one fact, so storing it again reinforces it.
        `evidence` lists ids of the memories it rests on."""
        fields = _given(confidence=confidence,
                        evidence=[{"kind": "memory", "ref": ref} for ref in evidence or ()] or None)
        result: FactWriteResult = await run(ctx, kn.store_fact(namespace, kind, claim, **fields))
        return StoredFact(fact=_fact(result.fact), created=result.created)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def recall_facts(ctx: Context, namespace: str, query: str | None = None,
                           kind: str | None = None, limit: int = 10) -> FactsResult:
        """The current facts of `namespace` by relevance to `query` (else by confidence),
        optionally of one `kind`."""
        hits: list[FactHit] = await run(ctx, kn.recall_facts(namespace, query, kind=kind,
                                                             limit=limit))
        return FactsResult(facts=[_fact(h.fact, h.score) for h in hits])
