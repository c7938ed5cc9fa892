"""The MCP server and its writing and recalling tools: remember, recall, supersede,
link, forget, ingest_conversation (reading tools: `browse`; facts: `facts`).

Each tool builds the operation the Python client would send and runs it
through the `Runner` as the caller its API key names (the `Authorization`
header on streamable HTTP, `MEMLATTICE_API_KEY` on stdio), in the namespace
the call names or the server's default one. Results come back twice: as text
an agent reads directly, every memory with its `[id]` so that the agent can
act on it, and as compact structured content matching the tool's output
schema. Failures are tool errors whose text starts with the stable code
(`FORBIDDEN: ...`, `VALIDATION: ...`), so agents and people can act on them.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, Field

from memlattice.mcp import params as p
from memlattice.mcp.browse import add_browse_tools
from memlattice.mcp.facts import add_fact_tools
from memlattice.mcp.results import (
    RecallResult,
    Remembered,
    Superseded,
    may_replace_text,
    recall_hit,
    remembered,
    replaceable,
    reply,
)
from memlattice.mcp.runner import Runner
from memlattice.mcp.text import recall_text
from memlattice.mcp.updates import add_update_tools
from memlattice_client import _operations as ops
from memlattice_client import _updates as up
from memlattice_client._models import (
    Edge,
    ForgetResult,
    Memory,
    ReplacementCandidate,
    SearchHit,
    SupersedeResult,
)

INSTRUCTIONS = """Memlattice is long-term memory. Call `recall` at the start of a task with
what you are about to do, and `remember` for facts, preferences and decisions worth keeping
(one idea per memory, with tags). `remember` shows the earlier memories nearest the new one:
when it states a newer value of the same thing as one of them, call `replaces` with both ids.
Every memory you read comes with its [id]: `supersede` it
when it is outdated (the new version replaces it in recall, the old one stays as history),
`link` related ones (SUPPORTS, CONTRADICTS, DERIVED, RELATED), `forget` what is wrong.
`get`, `browse` and `neighbourhood` read memories without searching. Your API key decides
which namespaces, scopes and sensitivities you may touch."""

# The fields a superseding memory inherits from the one it replaces, unless given.
INHERITED = ("tags", "key", "memory_type", "scope", "agent_id", "user_id", "session_id",
             "task_id", "metadata", "confidence", "sensitivity")


class ConversationTurn(BaseModel):
    """One message of a conversation to store."""

    content: str = Field(description="what was said")
    speaker: str | None = Field(default=None, description="who said it (a name)")
    role: str | None = Field(default=None, description="or the role: user, assistant, tool")
    at: str | None = Field(default=None, description="when, ISO 8601; now if omitted")


class IngestedSession(BaseModel):
    session_id: str
    created: int = Field(description="turns written now (0 when the session was sent before)")
    ids: list[str] = Field(description="the turns' memory ids, in order")
    entities: list[str] = Field(default_factory=list, description=(
        "the whole session's entity keys, most turns first"))
    keyphrases: list[str] = Field(default_factory=list, description=(
        "the whole session's keyphrases, best first"))


def _given(**values: Any) -> dict[str, Any]:
    """Only the arguments the agent actually gave (None means 'not given')."""
    return {k: v for k, v in values.items() if v is not None}


def _scope_ids(agent_id: str | None, user_id: str | None, session_id: str | None,
               task_id: str | None) -> dict[str, str]:
    return _given(agent_id=agent_id, user_id=user_id, session_id=session_id, task_id=task_id)


def instructions(default_namespace: str | None) -> str:
    if default_namespace is None:
        return INSTRUCTIONS + " Every call names its `namespace`."
    return (INSTRUCTIONS + f" Calls without `namespace` use {default_namespace}.")


def inherited(old: Memory) -> dict[str, Any]:
    """The fields of `old` a replacement keeps when the agent does not restate them."""
    values: dict[str, Any] = {name: getattr(old, name) for name in INHERITED}
    values["tags"] = list(old.tags)
    values["metadata"] = dict(old.metadata) or None
    return _given(**values)


def build_server(runner: Runner) -> MCPServer:
    """The MCP server whose tools run through `runner`."""
    server = MCPServer("memlattice", instructions=instructions(runner.namespace_default))

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=False))
    async def remember(
        ctx: Context, content: p.Content, namespace: p.Namespace = None, tags: p.Tags = None,
        key: p.Key = None, memory_type: p.MemoryType = None, scope: p.Scope = None,
        agent_id: p.AgentId = None, user_id: p.UserId = None, session_id: p.SessionId = None,
        task_id: p.TaskId = None, metadata: p.Metadata = None,
        confidence: p.Confidence = None, sensitivity: p.Sensitivity = None,
    ) -> Annotated[CallToolResult, Remembered]:
        """Store one memory (a fact, preference, decision or observation) and return its
        id and version. To change a memory you stored, use `supersede` with its id."""
        ns = runner.namespace(namespace)
        fields = _given(tags=tags, key=key, memory_type=memory_type, scope=scope,
                        metadata=metadata, confidence=confidence, sensitivity=sensitivity,
                        **_scope_ids(agent_id, user_id, session_id, task_id))
        memory: Memory = await runner(ctx, ops.write_memory(ns, content, **fields))
        done = remembered(memory)
        if done.duplicate_of:
            return reply(f"Remembered [{done.id}] (version {done.version}) in {ns}; it"
                         f" repeats [{done.duplicate_of}].", done)
        earlier: list[ReplacementCandidate] = await runner(ctx, up.may_replace(ns, done.id))
        done.may_replace = [replaceable(c) for c in earlier] or None
        return reply(f"Remembered [{done.id}] (version {done.version}) in {ns}."
                     + may_replace_text(done.may_replace or []), done)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def recall(
        ctx: Context, query: p.Query, namespace: p.Namespace = None, limit: p.Limit = 10,
        mode: p.Mode = None, scope: p.RecallScope = None, agent_id: p.AgentId = None,
        user_id: p.UserId = None, session_id: p.SessionId = None, task_id: p.TaskId = None,
        tags_any: p.TagsAny = None, expand: p.Expand = 0, budget_tokens: p.BudgetTokens = 1500,
    ) -> Annotated[CallToolResult, RecallResult]:
        """Find the memories most relevant to `query`, best first. Each line starts with
        the memory's [id], to pass to get, link, supersede or forget.

        Give the ids of who is asking (user_id, session_id, ...) to see their scoped
        memories. The text is at most `budget_tokens`; the structured result lists every
        hit with the parts of its score and the ids it contradicts.
        """
        ns = runner.namespace(namespace)
        options: dict[str, Any] = _given(limit=limit, mode=mode, scope=scope,
                                         **_scope_ids(agent_id, user_id, session_id, task_id))
        if tags_any:
            options["filter"] = {"tags_any": tags_any}
        if expand > 0:
            options["expansion"] = {"max_expand": expand}
        hits: list[SearchHit] = await runner(ctx, ops.search(ns, query, **options))
        return reply(recall_text(hits, budget_tokens, query=query),
                     RecallResult(query=query, hits=[recall_hit(h) for h in hits]))

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=False))
    async def supersede(
        ctx: Context, id: p.MemoryId,
        content: Annotated[str, Field(description="The memory's new, complete content.")],
        namespace: p.Namespace = None, tags: p.Tags = None, key: p.Key = None,
        memory_type: p.MemoryType = None, metadata: p.Metadata = None,
        confidence: p.Confidence = None, sensitivity: p.Sensitivity = None,
        expected_version: p.ExpectedVersion = None,
    ) -> Annotated[CallToolResult, Superseded]:
        """Update a memory that is outdated or wrong: a new memory with `content` replaces
        memory `id` in recall, and the old one is kept, SUPERSEDED, as history. Fields not
        given (tags, key, type, scope and its ids, metadata, ...) are kept from the old one.
        """
        ns = runner.namespace(namespace)
        old: Memory = await runner(ctx, ops.memory(ns, id))
        fields = {**inherited(old), **_given(tags=tags, key=key, memory_type=memory_type,
                                             metadata=metadata, confidence=confidence,
                                             sensitivity=sensitivity)}
        version = old.version if expected_version is None else expected_version
        done: SupersedeResult = await runner(ctx, ops.supersede_memory(
            ns, id, content, expected_version=version, **fields))
        result = Superseded(id=done.current.id, version=done.current.version,
                            previous_id=done.previous.id,
                            previous_status=done.previous.status.value)
        return reply(f"[{result.id}] now replaces [{result.previous_id}]"
                     f" ({result.previous_status}).", result)

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=False))
    async def link(
        ctx: Context,
        source_id: Annotated[str, Field(description="The memory the relation starts from.")],
        target_id: Annotated[str, Field(description="The memory it points to.")],
        type: Annotated[p.EdgeName, Field(description=(
            "SUPPORTS, CONTRADICTS (recall flags the conflict), DERIVED, RELATED (recall's"
            " expansion follows it). SUPERSEDES is refused: use the `supersede` tool."))]
        = "RELATED",
        namespace: p.Namespace = None,
        metadata: Annotated[dict[str, Any] | None, Field(
            description="Free JSON kept with the relation, e.g. why.")] = None,
    ) -> Edge:
        """Relate two memories of one namespace (source -> target)."""
        if type == "SUPERSEDES":
            raise ToolError(
                "VALIDATION: link does not supersede: a SUPERSEDES relation alone would leave"
                f" [{target_id}] active and still recalled. Use the `supersede` tool with"
                f" id={target_id} and the new content (the new memory replaces it), or"
                f" `forget` [{target_id}] if [{source_id}] already says it all.")
        ns = runner.namespace(namespace)
        edge: Edge = await runner(ctx, ops.add_edge(ns, source_id, target_id, type,
                                                    metadata=metadata))
        return edge

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=True))
    async def forget(
        ctx: Context, namespace: p.Namespace = None,
        id: Annotated[str | None, Field(description="Forget this memory.")] = None,
        contains: Annotated[str | None, Field(
            description="Forget every memory whose content, key or tags contain this"
                        " text (case-insensitive).")] = None,
        key: Annotated[str | None, Field(description="Only memories with this key.")] = None,
        tag: Annotated[str | None, Field(description="Only memories with this tag.")] = None,
        tags: Annotated[list[str] | None, Field(
            description="Only memories with all of these tags.")] = None,
        query: Annotated[str | None, Field(
            description="Only memories matching all of these words.")] = None,
    ) -> ForgetResult:
        """Tombstone memories: by `id`, by `contains`, or those matching every one of id /
        key / tag / tags / query given. They leave recall but stay in the audit trail.
        Returns how many and which."""
        ns = runner.namespace(namespace)
        predicate = _given(contains=contains, id=id, key=key, tag=tag, tags=tags, query=query)
        result: ForgetResult = await runner(ctx, ops.forget(ns, **predicate))
        return result

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True))
    async def ingest_conversation(
        ctx: Context,
        session_id: Annotated[str, Field(description="The conversation's id; sending the"
                                                     " same id again extends it.")],
        messages: Annotated[list[ConversationTurn], Field(description="The turns, in order.")],
        namespace: p.Namespace = None, user_id: p.UserId = None, agent_id: p.AgentId = None,
    ) -> IngestedSession:
        """Store a conversation session in one call: one memory per turn ("speaker:
        content"), the session, the order of its turns and its speakers. Recall then
        reads each turn with the turns around it. Sending the same session again
        changes nothing; sending its continuation extends it."""
        ns = runner.namespace(namespace)
        turns: list[Any] = [_given(content=m.content, speaker=m.speaker, role=m.role, at=m.at)
                 for m in messages]
        done = await runner(ctx, ops.ingest_conversation(
            ns, session_id, turns, **_scope_ids(agent_id, user_id, None, None)))
        keys = done.session
        return IngestedSession(session_id=done.session_id, created=done.created,
                               ids=[m.id for m in done.memories],
                               entities=keys.entities if keys else [],
                               keyphrases=keys.keyphrases if keys else [])

    add_browse_tools(server, runner)
    add_fact_tools(server, runner)
    add_update_tools(server, runner)
    return server
