"""The MCP server against the real service: in-process, over streamable HTTP, over stdio.

Every transport authenticates with an API key and runs the tools through the
same resolvers as GraphQL, so a key bound to one namespace is refused another.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from memlattice.core.settings import Settings
from memlattice.graph.keys import ApiKeyGraph
from memlattice.mcp import http_app
from memlattice.mcp.gateway import Gateway
from memlattice.mcp.tools import build_server
from memlattice.server.app import runtime_of
from memlattice.services.apikeys import KeySpec, create_key
from tests._live import serve_in_thread
from tests.conftest import Neo4jServer

TOOLS = {"remember", "recall", "forget", "link", "ingest_conversation", "store_fact",
         "recall_facts"}


def error_code(result: Any) -> str | None:
    """The stable code a failed tool call starts its message with (`FORBIDDEN: ...`)."""
    if not result.is_error:
        return None
    found = re.search(r"\b([A-Z][A-Z_]+): ", result.content[0].text)
    return found.group(1) if found else None


@pytest.fixture
def in_process(session_app: tuple[Any, Any], admin_key: str) -> Any:
    gateway = Gateway(runtime_of(session_app[0]))
    return build_server(lambda: gateway, lambda ctx: admin_key)


async def bound_key(session_app: tuple[Any, Any], namespace: str) -> str:
    _, key = await create_key(ApiKeyGraph(runtime_of(session_app[0]).client),
                              KeySpec(name="mcp-test", namespaces=(namespace,), can_write=True))
    return key


async def remember_recall_link_forget(client: Client, ns: str) -> None:
    tools = {t.name for t in (await client.list_tools()).tools}
    assert TOOLS <= tools
    first = await client.call_tool("remember", {
        "namespace": ns, "content": "The deploy window is Tuesday 14:00 UTC",
        "tags": ["ops"], "key": "deploy.window", "scope": "user", "user_id": "u7"})
    assert not first.is_error, first.content
    memory = first.structured_content
    assert memory["namespace"] == ns and memory["version"] == 1
    second = await client.call_tool("remember", {
        "namespace": ns, "content": "Deploys need two approvals", "tags": ["ops"],
        "sensitivity": "public"})
    assert second.structured_content["sensitivity"] == "PUBLIC"
    other_id = second.structured_content["id"]

    recalled = await client.call_tool("recall", {
        "namespace": ns, "query": "when is the deploy window?", "user_id": "u7", "limit": 5})
    assert not recalled.is_error, recalled.content
    hits = recalled.structured_content["hits"]
    assert hits[0]["id"] == memory["id"] and hits[0]["score"] > 0
    assert "Tuesday 14:00 UTC" in recalled.content[0].text
    hidden = await client.call_tool("recall", {"namespace": ns, "query": "deploy window",
                                               "user_id": "someone-else", "scope": "user"})
    assert memory["id"] not in {h["id"] for h in hidden.structured_content["hits"]}

    linked = await client.call_tool("link", {"namespace": ns, "source_id": other_id,
                                             "target_id": memory["id"], "type": "SUPPORTS"})
    assert not linked.is_error, linked.content
    assert linked.structured_content["type"] == "SUPPORTS"

    gone = await client.call_tool("forget", {"namespace": ns, "contains": "two approvals"})
    assert gone.structured_content == {"count": 1, "ids": [other_id]}
    again = await client.call_tool("recall", {"namespace": ns, "query": "approvals",
                                              "mode": "lexical"})
    assert other_id not in {h["id"] for h in again.structured_content["hits"]}

    fact = await client.call_tool("store_fact", {
        "namespace": ns, "kind": "schedule", "claim": "Deploys happen on Tuesdays",
        "evidence": [memory["id"]]})
    assert not fact.is_error, fact.content
    assert fact.structured_content["created"] is True
    assert fact.structured_content["fact"]["evidence"] == [f"memory:{memory['id']}"]
    facts = await client.call_tool("recall_facts", {"namespace": ns, "query": "deploy day"})
    assert [f["claim"] for f in facts.structured_content["facts"]] == [
        "Deploys happen on Tuesdays"]

    bad = await client.call_tool("remember", {"namespace": ns, "content": "   "})
    assert error_code(bad) == "VALIDATION"


async def test_in_process_tools(in_process: Any, namespace: str) -> None:
    async with Client(in_process) as client:
        await remember_recall_link_forget(client, namespace)


async def test_a_conversation_in_one_call(in_process: Any, namespace: str) -> None:
    session = {"namespace": namespace, "session_id": "chat-1", "user_id": "u7", "messages": [
        {"speaker": "Ana", "content": "Where should we hold the offsite?",
         "at": "2026-03-02T09:00:00Z"},
        {"speaker": "Ben", "content": "Lisbon, near the river.", "at": "2026-03-02T09:00:05Z"},
    ]}
    async with Client(in_process) as client:
        done = await client.call_tool("ingest_conversation", session)
        assert not done.is_error, done.content
        assert done.structured_content["created"] == 2
        ids = done.structured_content["ids"]
        again = await client.call_tool("ingest_conversation", session)
        assert again.structured_content == {**done.structured_content, "created": 0}
        recalled = await client.call_tool("recall", {
            "namespace": namespace, "query": "offsite location", "user_id": "u7",
            "scope": "session", "session_id": "chat-1", "mode": "lexical"})
        assert not recalled.is_error, recalled.content
        assert ids[1] in {h["id"] for h in recalled.structured_content["hits"]}


@pytest.fixture(scope="module")
def mcp_url(settings: Settings) -> Iterator[str]:
    app = http_app(settings.model_copy(update={"auth_mode": "keys"}))
    with serve_in_thread(app) as url:
        yield url + "/mcp"


@contextlib.asynccontextmanager
async def http_client(url: str, key: str) -> AsyncIterator[Client]:
    """An MCP client over streamable HTTP that sends `key` with every request."""
    async with (httpx2.AsyncClient(headers={"authorization": f"Bearer {key}"},
                                   timeout=60) as http,
                Client(streamable_http_client(url, http_client=http)) as client):
        yield client


async def test_streamable_http_with_a_bound_key(mcp_url: str, session_app: tuple[Any, Any],
                                                namespace: str) -> None:
    key = await bound_key(session_app, namespace)
    async with http_client(mcp_url, key) as client:
        await remember_recall_link_forget(client, namespace)
        denied = await client.call_tool("remember", {"namespace": f"{namespace}-x",
                                                     "content": "elsewhere"})
        assert error_code(denied) == "FORBIDDEN"
        above = await client.call_tool("remember", {"namespace": namespace, "content": "x",
                                                    "sensitivity": "high"})
        assert error_code(above) == "FORBIDDEN"  # the key's clearance is low


async def test_streamable_http_refuses_a_missing_key(mcp_url: str, namespace: str) -> None:
    async with Client(mcp_url) as client:
        refused = await client.call_tool("recall", {"namespace": namespace, "query": "x"})
        assert error_code(refused) == "UNAUTHENTICATED"


async def test_stdio_subprocess(neo4j_server: Neo4jServer, session_app: tuple[Any, Any],
                                namespace: str) -> None:
    key = await bound_key(session_app, namespace)
    env = {**os.environ, "NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
           "NEO4J_PASSWORD": neo4j_server.password, "MEMLATTICE_API_KEY": key,
           "MEMLATTICE_ENVIRONMENT": "test"}
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "memlattice.cli", "mcp", "--transport", "stdio"],
                                   env=env, cwd=os.getcwd())
    async with Client(params) as client:
        await remember_recall_link_forget(client, namespace)
        denied = await client.call_tool("recall", {"namespace": f"other/{uuid.uuid4().hex}",
                                                   "query": "x"})
        assert error_code(denied) == "FORBIDDEN"
