"""The MCP server against the real service: in-process, over streamable HTTP, over stdio.

Every transport authenticates with an API key and runs the tools through the
same resolvers as GraphQL, so a key bound to one namespace is refused another.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
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
from memlattice.mcp import http_app, stdio_runner
from memlattice.mcp.gateway import Gateway
from memlattice.mcp.runner import Runner
from memlattice.mcp.tools import build_server
from memlattice.server.app import runtime_of
from memlattice.services.apikeys import KeySpec, create_key
from tests._live import serve_in_thread
from tests.conftest import Neo4jServer

TOOLS = {"remember", "recall", "supersede", "forget", "link", "get", "browse",
         "neighbourhood", "ingest_conversation", "store_fact", "recall_facts", "updates",
         "decide_update", "replaces"}


def error_code(result: Any) -> str | None:
    """The stable code a failed tool call starts its message with (`FORBIDDEN: ...`)."""
    if not result.is_error:
        return None
    found = re.search(r"\b([A-Z][A-Z_]+): ", result.content[0].text)
    return found.group(1) if found else None


@pytest.fixture
def in_process(session_app: tuple[Any, Any], admin_key: str) -> Any:
    gateway = Gateway(runtime_of(session_app[0]))
    return build_server(Runner(lambda: gateway, lambda ctx: admin_key))


def server_with(session_app: tuple[Any, Any], key: str | None,
                default_namespace: str | None) -> Any:
    """A stdio-style server (one key for every call) with a default namespace."""
    gateway = Gateway(runtime_of(session_app[0]))
    return build_server(stdio_runner(lambda: gateway, key, default_namespace))


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
    assert memory == {"id": memory["id"], "version": 1, "namespace": ns}  # compact
    assert f"[{memory['id']}]" in first.content[0].text
    second = await client.call_tool("remember", {
        "namespace": ns, "content": "Deploys need two approvals", "tags": ["ops"],
        "sensitivity": "public"})
    other_id = second.structured_content["id"]
    got = await client.call_tool("get", {"namespace": ns, "id": other_id})
    assert not got.is_error, got.content
    assert got.structured_content["sensitivity"] == "PUBLIC"
    assert got.structured_content["content"] == "Deploys need two approvals"

    recalled = await client.call_tool("recall", {
        "namespace": ns, "query": "when is the deploy window?", "user_id": "u7", "limit": 5})
    assert not recalled.is_error, recalled.content
    hits = recalled.structured_content["hits"]
    assert hits[0]["id"] == memory["id"] and hits[0]["score"] > 0
    text = recalled.content[0].text
    assert "Tuesday 14:00 UTC" in text
    assert f"[{memory['id']}]" in text  # an agent can act on what it read
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


async def test_recall_marks_an_outdated_memory_and_an_agent_confirms_the_update(
    in_process: Any, namespace: str,
) -> None:
    async with Client(in_process) as client:
        old = await client.call_tool("remember", {
            "namespace": namespace, "content": "The metrics exporter listens on 9100."})
        new = await client.call_tool("remember", {
            "namespace": namespace, "content": "The exporter now listens on 9200."})
        old_id, new_id = old.structured_content["id"], new.structured_content["id"]
        found = await client.call_tool("recall", {
            "namespace": namespace, "query": "which port does the metrics exporter use"})
        hits = {h["id"]: h for h in found.structured_content["hits"]}
        assert hits[old_id]["outdated_by"] == new_id and hits[new_id].get("outdated_by") is None
        # The rules' link is a candidate: the agent is told so, and how to decide it.
        assert f"MAY BE OUTDATED by [{new_id}] (inferred, not confirmed;" in found.content[0].text
        listed = await client.call_tool("updates", {"namespace": namespace})
        (update,) = listed.structured_content["updates"]
        assert f"decide_update {update['id']})" in found.content[0].text
        assert (update["newer_id"], update["older_id"]) == (new_id, old_id)
        done = await client.call_tool("decide_update", {
            "namespace": namespace, "id": update["id"], "decision": "confirm"})
        assert done.structured_content["status"] == "CONFIRMED"
        again = await client.call_tool("recall", {
            "namespace": namespace, "query": "which port does the metrics exporter use"})
        assert old_id not in {h["id"] for h in again.structured_content["hits"]}


async def test_remember_shows_what_the_new_memory_may_replace_and_the_agent_says_so(
    in_process: Any, namespace: str,
) -> None:
    async with Client(in_process) as client:
        old = await client.call_tool("remember", {
            "namespace": namespace, "content": "I live in Bergen, right by the harbour."})
        assert old.structured_content.get("may_replace") is None  # nothing earlier
        new = await client.call_tool("remember", {
            "namespace": namespace,
            "content": "We finally settled into our flat in Tromsø, by the harbour too."})
        old_id, new_id = old.structured_content["id"], new.structured_content["id"]
        shown = new.structured_content["may_replace"]
        assert [r["id"] for r in shown] == [old_id]
        assert f"[{old_id}] I live in Bergen" in new.content[0].text
        assert "`replaces`" in new.content[0].text
        done = await client.call_tool("replaces", {
            "namespace": namespace, "newer_id": new_id, "older_id": old_id,
            "attribute": "home"})
        assert not done.is_error, done.content
        assert done.structured_content["status"] == "CONFIRMED"
        found = await client.call_tool("recall", {"namespace": namespace,
                                                  "query": "Where do I live?"})
        assert [h["id"] for h in found.structured_content["hits"]] == [new_id]
        backwards = await client.call_tool("replaces", {
            "namespace": namespace, "newer_id": old_id, "older_id": new_id})
        assert error_code(backwards) == "CONFLICT"  # the link says the other way


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
        # The session's keys, derived on write: its speakers (a name set off by a comma
        # at a sentence's start reads as someone spoken to), its words.
        assert done.structured_content["entities"] == ["ana", "ben"]
        assert {"offsite", "river"} <= set(done.structured_content["keyphrases"])
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
        assert "Authorization: Bearer" in refused.content[0].text


async def test_stdio_subprocess(neo4j_server: Neo4jServer, session_app: tuple[Any, Any],
                                namespace: str) -> None:
    key = await bound_key(session_app, namespace)
    env = {**os.environ, "NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
           "NEO4J_PASSWORD": neo4j_server.password, "MEMLATTICE_API_KEY": key,
           "MEMLATTICE_ENVIRONMENT": "test", "MEMLATTICE_MCP_NAMESPACE": namespace}
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "memlattice.cli", "mcp", "--transport", "stdio"],
                                   env=env, cwd=os.getcwd())
    async with Client(params) as client:
        await remember_recall_link_forget(client, namespace)
        denied = await client.call_tool("recall", {"namespace": f"other/{uuid.uuid4().hex}",
                                                   "query": "x"})
        assert error_code(denied) == "FORBIDDEN"
        implied = await client.call_tool("remember", {"content": "No namespace given"})
        assert implied.structured_content["namespace"] == namespace  # MEMLATTICE_MCP_NAMESPACE


def test_a_bad_default_namespace_stops_the_server() -> None:
    env = {**os.environ, "MEMLATTICE_MCP_NAMESPACE": "/absolute"}
    done = subprocess.run([sys.executable, "-m", "memlattice.cli", "mcp"], env=env, check=False,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1
    assert "MEMLATTICE_MCP_NAMESPACE" in done.stderr and "absolute" in done.stderr


def undescribed(schema: dict[str, Any]) -> list[str]:
    """Parameters (and fields of nested input objects) with no description."""
    objects = [schema, *schema.get("$defs", {}).values()]
    return [name for obj in objects for name, prop in obj.get("properties", {}).items()
            if not prop.get("description")]


async def test_every_parameter_is_described(in_process: Any) -> None:
    async with Client(in_process) as client:
        tools = (await client.list_tools()).tools
    assert TOOLS <= {t.name for t in tools}
    missing = {t.name: undescribed(t.input_schema) for t in tools}
    assert {name: params for name, params in missing.items() if params} == {}


async def test_a_default_namespace(session_app: tuple[Any, Any], admin_key: str,
                                   namespace: str) -> None:
    async with Client(server_with(session_app, admin_key, namespace)) as client:
        written = await client.call_tool("remember", {"content": "The office plant is Fern"})
        assert not written.is_error, written.content
        assert written.structured_content["namespace"] == namespace
        found = await client.call_tool("recall", {"query": "office plant", "mode": "lexical"})
        assert [h["id"] for h in found.structured_content["hits"]] == [
            written.structured_content["id"]]
        elsewhere = await client.call_tool("recall", {"namespace": f"{namespace}-other",
                                                      "query": "office plant",
                                                      "mode": "lexical"})
        assert elsewhere.structured_content["hits"] == []  # a named namespace wins
    async with Client(server_with(session_app, admin_key, None)) as client:
        refused = await client.call_tool("remember", {"content": "nowhere"})
        assert error_code(refused) == "VALIDATION"
        assert "MEMLATTICE_MCP_NAMESPACE" in refused.content[0].text


async def test_stdio_without_a_key_is_told_to_set_one(session_app: tuple[Any, Any],
                                                      namespace: str) -> None:
    async with Client(server_with(session_app, None, namespace)) as client:
        refused = await client.call_tool("recall", {"query": "anything"})
    assert error_code(refused) == "UNAUTHENTICATED"
    text = refused.content[0].text
    assert "MEMLATTICE_API_KEY" in text and "Authorization" not in text


async def test_supersede_replaces_a_memory_in_recall(in_process: Any, namespace: str) -> None:
    ns = {"namespace": namespace}
    async with Client(in_process) as client:
        old = (await client.call_tool("remember", {
            **ns, "content": "Ana lives in Porto", "tags": ["home"], "key": "ana.city",
            "scope": "user", "user_id": "ana"})).structured_content
        other = (await client.call_tool("remember", {
            **ns, "content": "Ana moved to Lisbon in May"})).structured_content

        refused = await client.call_tool("link", {**ns, "source_id": other["id"],
                                                  "target_id": old["id"],
                                                  "type": "SUPERSEDES"})
        assert error_code(refused) == "VALIDATION"
        assert "`supersede`" in refused.content[0].text
        untouched = await client.call_tool("neighbourhood", {**ns, "id": old["id"]})
        assert untouched.structured_content["links"] == []  # the refusal wrote nothing

        done = await client.call_tool("supersede", {**ns, "id": old["id"],
                                                    "content": "Ana lives in Lisbon"})
        assert not done.is_error, done.content
        new = done.structured_content
        assert new["previous_id"] == old["id"] and new["previous_status"] == "SUPERSEDED"

        recalled = await client.call_tool("recall", {**ns, "query": "where does Ana live",
                                                     "user_id": "ana", "mode": "lexical"})
        ids = [h["id"] for h in recalled.structured_content["hits"]]
        assert new["id"] in ids and old["id"] not in ids
        current = (await client.call_tool("get", {**ns, "id": new["id"]})).structured_content
        assert (current["tags"], current["key"], current["scope"], current["user_id"]) == (
            ["home"], "ana.city", "USER", "ana")  # kept from the memory it replaces
        previous = await client.call_tool("get", {**ns, "id": old["id"]})
        assert previous.structured_content["status"] == "SUPERSEDED"
        assert previous.structured_content["superseded_by"] == new["id"]
        again = await client.call_tool("supersede", {**ns, "id": old["id"],
                                                     "content": "Ana lives in Faro"})
        assert error_code(again) == "CONFLICT"  # only the current memory can be replaced


async def test_browse_and_neighbourhood(in_process: Any, namespace: str) -> None:
    ns = {"namespace": namespace}
    async with Client(in_process) as client:
        ids = []
        for content in ("Standup is at 9:30", "Standup moved to 10:00 on Mondays",
                        "Retro is every other Friday"):
            written = await client.call_tool("remember", {**ns, "content": content,
                                                          "tags": ["meetings"]})
            ids.append(written.structured_content["id"])

        first = await client.call_tool("browse", {**ns, "limit": 2})
        assert not first.is_error, first.content
        page = first.structured_content
        assert [m["id"] for m in page["memories"]] == [ids[2], ids[1]]  # newest first
        assert page["total"] == 3 and page["next_cursor"]
        assert all(f"[{i}]" in first.content[0].text for i in (ids[2], ids[1]))
        rest = await client.call_tool("browse", {**ns, "limit": 2,
                                                 "cursor": page["next_cursor"]})
        assert [m["id"] for m in rest.structured_content["memories"]] == [ids[0]]
        assert "next_cursor" not in rest.structured_content
        none = await client.call_tool("browse", {**ns, "tags_any": ["unknown"]})
        assert none.structured_content["memories"] == []

        linked = await client.call_tool("link", {**ns, "source_id": ids[1],
                                                 "target_id": ids[0], "type": "CONTRADICTS"})
        assert not linked.is_error, linked.content
        around = await client.call_tool("neighbourhood", {**ns, "id": ids[0]})
        assert not around.is_error, around.content
        hood = around.structured_content
        assert hood["memory"]["id"] == ids[0]
        assert [(x["type"], x["direction"], x["neighbour_id"]) for x in hood["links"]] == [
            ("CONTRADICTS", "IN", ids[1])]
        assert [m["id"] for m in hood["neighbours"]] == [ids[1]]
        assert f"<- CONTRADICTS [{ids[1]}]" in around.content[0].text
        missing = await client.call_tool("get", {**ns, "id": "no-such-memory"})
        assert error_code(missing) == "NOT_FOUND"
        await client.call_tool("forget", {**ns, "id": ids[1]})
        after = await client.call_tool("neighbourhood", {**ns, "id": ids[0]})
        assert [m["status"] for m in after.structured_content["neighbours"]] == ["FORGOTTEN"]
        assert f"<- CONTRADICTS [{ids[1]}]" in after.content[0].text
        assert "(tags: meetings; FORGOTTEN)" in after.content[0].text
