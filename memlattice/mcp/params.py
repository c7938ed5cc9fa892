"""The tools' parameter types, each with the description an agent reads in the
tool's JSON schema.

An agent chooses arguments from the schema alone; a parameter without a
description is a guess. The types are shared so that `user_id` means the same
thing, in the same words, in every tool that takes it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

ScopeName = Literal["task", "session", "user", "agent"]
ModeName = Literal["hybrid", "semantic", "lexical"]
SensitivityName = Literal["public", "low", "medium", "high", "hyper"]
EdgeName = Literal["RELATED", "DERIVED", "CONTRADICTS", "SUPPORTS", "SUPERSEDES"]
StatusName = Literal["ACTIVE", "SUPERSEDED", "FORGOTTEN", "RETRACTED"]
DirectionName = Literal["OUT", "IN", "BOTH"]

Namespace = Annotated[str | None, Field(
    description="The namespace (a path such as 'team/notes'). Omit it to use the server's"
                " default namespace (MEMLATTICE_MCP_NAMESPACE).")]
MemoryId = Annotated[str, Field(description="A memory's id, as recall, browse or remember"
                                            " show it.")]

AgentId = Annotated[str | None, Field(description="The agent's id, for agent-scoped memories.")]
UserId = Annotated[str | None, Field(description="The end user's id, for user-scoped memories.")]
SessionId = Annotated[str | None, Field(description="The conversation's or session's id.")]
TaskId = Annotated[str | None, Field(description="The task's id, for task-scoped memories.")]

Content = Annotated[str, Field(description="The memory itself: one fact, preference, decision"
                                           " or observation, in plain words.")]
Tags = Annotated[list[str] | None, Field(description="Labels to find it by, e.g. ['ops'].")]
Key = Annotated[str | None, Field(
    description="A slot it fills, e.g. 'user.city'; recall boosts memories whose key the"
                " query names.")]
MemoryType = Annotated[str | None, Field(
    description="A lower-case type such as 'note' (the default), 'preference' or 'decision'."
                " Facts are stored with store_fact.")]
Scope = Annotated[ScopeName | None, Field(
    description="Who may recall it: 'user', 'session', 'agent' or 'task', with that level's"
                " id (e.g. scope='user' and user_id). Omitted: the whole namespace.")]
Metadata = Annotated[dict[str, Any] | None, Field(description="Free JSON kept with the memory.")]
Confidence = Annotated[float | None, Field(description="How sure, from 0 to 1 (default 1).")]
Sensitivity = Annotated[SensitivityName | None, Field(
    description="Hides it from keys cleared below this level (default 'low').")]

Query = Annotated[str, Field(description="What to look for, in natural language.")]
Limit = Annotated[int, Field(ge=1, le=100, description="At most this many memories.")]
Mode = Annotated[ModeName | None, Field(
    description="The indexes: 'hybrid' (default: words and meaning), 'semantic' or"
                " 'lexical'.")]
RecallScope = Annotated[ScopeName | None, Field(
    description="Start the visibility chain at this level (e.g. 'session' sees session,"
                " user, agent and namespace memories of the ids given).")]
TagsAny = Annotated[list[str] | None, Field(description="Only memories with any of these tags.")]
Expand = Annotated[int, Field(ge=0, le=50, description=(
    "Also bring up to this many memories linked to the hits (0: none)."))]
BudgetTokens = Annotated[int, Field(ge=50, le=20000, description=(
    "The text result's size limit in tokens; the structured result lists every hit."))]
ExpectedVersion = Annotated[int | None, Field(
    description="Refuse (CONFLICT) unless the memory is still at this version.")]
