"""The optional write-side LLM (memlattice.services.session_facts), against a real
OpenAI-compatible chat server on loopback: no test needs a real model.

The fake model reads the numbered turns it is shown and answers facts naming
their numbers, plus an invented turn number and a malformed item that must be
dropped; it can also be made to fail (503) or to answer garbage.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from memlattice.core.auth import Tenant
from memlattice.core.settings import FactsLLMSettings, Settings
from memlattice.server.app import runtime_of
from memlattice.services.session_facts import session_facts
from tests._fake_endpoint import serving
from tests.integration._apps import app_with

CALLS: list[dict[str, Any]] = []
MODE = {"answer": "facts"}  # facts | garbage | down
LINE = re.compile(r"^\[(\d+)\](?: \([^)]*\))? (.*)$")

INGEST = """mutation($input: ConversationInput!) {
  ingestConversation(input: $input) { created memories { id content } } }"""
SEARCH = """query($input: SearchInput!) { search(input: $input) {
  memory { id content memoryType } } }"""

TURNS = [
    ("Caroline", "Have you been anywhere nice lately?", "2023-05-07T10:00:00Z"),
    ("Melanie", "Yes! We went camping by the lake last weekend.", "2023-05-07T10:00:05Z"),
    ("Caroline", "That sounds lovely, who went with you?", "2023-05-07T10:00:10Z"),
    ("Melanie", "My kids and my husband. We roasted marshmallows.", "2023-05-07T10:00:15Z"),
]
MORE = [("Caroline", "I signed up for a pottery class on Friday.", "2023-05-07T10:01:00Z")]


def facts_for(shown: str) -> list[Any]:
    """What the fake model finds in the numbered turns it was shown."""
    numbers = {}
    for line in shown.splitlines():
        match = LINE.match(line)
        assert match, line
        for word in ("camping", "husband", "pottery"):
            if word in match.group(2):
                numbers[word] = int(match.group(1))
    found: list[Any] = [{"fact": "Caroline was told a story.", "turns": [99]}, "junk"]
    if "camping" in numbers and "husband" in numbers:
        found.append({"fact": "Melanie went camping by the lake with her husband and kids"
                              " in early May 2023.",
                      "turns": [numbers["camping"], numbers["husband"]]})
    if "pottery" in numbers:
        found.append({"fact": "Caroline signed up for a pottery class.",
                      "turns": [numbers["pottery"]]})
    return found


async def chat(request: Request) -> JSONResponse:
    body = await request.json()
    CALLS.append(body)
    if MODE["answer"] == "down":
        return JSONResponse({"error": {"message": "overloaded"}}, status_code=503)
    content = ("Sure! Here are the facts: none" if MODE["answer"] == "garbage"
               else json.dumps({"facts": facts_for(body["messages"][-1]["content"])}))
    return JSONResponse({
        "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
    })


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with serving(Route("/v1/chat/completions", chat, methods=["POST"])) as url:
        yield url + "/v1"


@pytest.fixture(autouse=True)
def fresh_model() -> None:
    CALLS.clear()
    MODE["answer"] = "facts"


class FactsApp:
    """An app with the write-side LLM on, and ways to look at what it did."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.runtime = runtime_of(client.app)  # type: ignore[attr-defined]

    async def ok(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = (await self.client.post(
            "/graphql", json={"query": query, "variables": variables})).json()
        assert not body.get("errors"), body
        return body["data"]  # type: ignore[no-any-return]

    async def ingest(self, namespace: str, turns: list[tuple[str, str, str]]) -> list[str]:
        """Send a session and wait until the model's reading of it has ended."""
        done = (await self.ok(INGEST, {"input": session(namespace, turns)}))
        assert self.runtime.session_facts is not None
        await self.runtime.session_facts.drain()
        return [m["id"] for m in done["ingestConversation"]["memories"]]

    def answers(self, outcome: str) -> float:
        value = self.client.app.state.metrics.registry.get_sample_value(  # type: ignore
            "memlattice_session_fact_answers_total", {"outcome": outcome})
        return float(value or 0.0)


@asynccontextmanager
async def facts_app(settings: Settings, base_url: str) -> AsyncIterator[FactsApp]:
    none = settings.embedding.model_copy(update={"provider": "none"})
    configured = FactsLLMSettings(model="facts-test", base_url=base_url, max_facts=5,
                                 judge_updates=False)  # tests/../test_update_judge.py
    async with app_with(settings, embedding=none, facts_llm=configured) as client:
        yield FactsApp(client)


def session(namespace: str, turns: list[tuple[str, str, str]]) -> dict[str, Any]:
    return {"namespace": namespace, "sessionId": "s-1", "userId": "u-1", "messages": [
        {"speaker": who, "content": text, "at": at} for who, text, at in turns]}


async def facts_of(graph_client: Any, namespace: str) -> dict[str, dict[str, Any]]:
    """Each fact of the namespace by content: how it is filed and the turns it came from."""
    rows = await graph_client.read(("""
        MATCH (f:Memory {namespace: $ns, memoryType: 'observation'})
        RETURN f.content AS content, f.scope AS scope, f.sessionId AS sessionId,
               f.userId AS userId, f.sourceType AS sourceType,
               COUNT { (f)-[:IN_SESSION]->() } AS inSession,
               COLLECT { MATCH (f)-[:DERIVED]->(t:Memory) RETURN t.id ORDER BY t.id } AS turns""",
        {"ns": namespace}))
    found = {}
    for row in rows:
        fact = dict(row)
        found[fact.pop("content")] = fact
    return found


CAMPING = "Melanie went camping by the lake with her husband and kids in early May 2023."
POTTERY = "Caroline signed up for a pottery class."


async def test_facts_are_written_derived_from_their_turns_searchable_and_read_once(
    settings: Settings, base_url: str, graph_client: Any, namespace: str,
) -> None:
    async with facts_app(settings, base_url) as app:
        turns = await app.ingest(namespace, TURNS)
        assert len(CALLS) == 1 and CALLS[0]["model"] == "facts-test"
        assert CALLS[0]["temperature"] == 0
        assert CALLS[0]["messages"][-1]["content"].startswith(
            "[1] (2023-05-07 10:00 UTC) Caroline: Have you been")
        facts = await facts_of(graph_client, namespace)
        assert facts == {CAMPING: {  # the invented turn and the junk item are dropped
            "scope": "session", "sessionId": "s-1", "userId": "u-1",
            "sourceType": "session_facts", "inSession": 0,
            "turns": sorted([turns[1], turns[3]])}}
        hits = (await app.ok(SEARCH, {"input": {
            "filter": {"namespace": namespace},
            "query": "who went camping with her husband"}}))["search"]
        found = {h["memory"]["content"]: h["memory"]["memoryType"] for h in hits}
        assert found[CAMPING] == "observation" and len(found) > 1  # beside the turns

        await app.ingest(namespace, TURNS)  # the same session again: nothing to read
        assert len(CALLS) == 1 and len(await facts_of(graph_client, namespace)) == 1

        more = await app.ingest(namespace, TURNS + MORE)  # its continuation: only the new turn
        assert len(CALLS) == 2
        assert CALLS[1]["messages"][-1]["content"].startswith("[1] (2023-05-07 10:01 UTC)"
                                                              " Caroline: I signed up")
        assert (await facts_of(graph_client, namespace))[POTTERY]["turns"] == [more[4]]
        assert app.answers("answered") == 2


async def test_a_failing_model_leaves_the_session_stored_and_is_asked_again_later(
    settings: Settings, base_url: str, graph_client: Any, namespace: str,
) -> None:
    MODE["answer"] = "down"
    async with facts_app(settings, base_url) as app:
        turns = await app.ingest(namespace, TURNS)
        assert len(turns) == 4 and CALLS  # stored, although the model failed
        assert await facts_of(graph_client, namespace) == {}
        assert app.answers("model_error") == 1
        MODE["answer"] = "facts"
        await app.ingest(namespace, TURNS)  # the turns were given back: read now
        assert list(await facts_of(graph_client, namespace)) == [CAMPING]


async def test_a_malformed_answer_is_ignored_and_not_asked_again(
    settings: Settings, base_url: str, graph_client: Any, namespace: str,
) -> None:
    MODE["answer"] = "garbage"
    async with facts_app(settings, base_url) as app:
        assert len(await app.ingest(namespace, TURNS)) == 4
        assert len(CALLS) == 1 and app.answers("malformed") == 1
        assert await facts_of(graph_client, namespace) == {}
        await app.ingest(namespace, TURNS)
        assert len(CALLS) == 1  # it answered: the turns count as read


async def test_each_namespace_gets_its_own_facts_from_its_own_turns(
    settings: Settings, base_url: str, graph_client: Any, namespace: str,
) -> None:
    other = namespace + "-other"
    async with facts_app(settings, base_url) as app:
        mine = await app.ingest(namespace, TURNS)
        theirs = await app.ingest(other, TURNS)  # same session id, same words
        assert len(CALLS) == 2
        assert (await facts_of(graph_client, namespace))[CAMPING]["turns"] == sorted(
            [mine[1], mine[3]])
        assert (await facts_of(graph_client, other))[CAMPING]["turns"] == sorted(
            [theirs[1], theirs[3]])
        hits = (await app.ok(SEARCH, {"input": {
            "filter": {"namespace": other}, "query": "camping husband"}}))["search"]
        assert {h["memory"]["id"] for h in hits}.isdisjoint(mine)


async def test_the_write_side_llm_is_off_by_default(
    settings: Settings, graph_client: Any, namespace: str,
) -> None:
    assert Settings().facts_llm.model is None and settings.facts_llm.model is None
    none = settings.embedding.model_copy(update={"provider": "none"})
    async with app_with(settings, embedding=none) as client:
        app = FactsApp(client)
        assert app.runtime.session_facts is None
        assert session_facts(app.runtime.service, FactsLLMSettings()) is None
        await app.ok(INGEST, {"input": session(namespace, TURNS)})
    assert await facts_of(graph_client, namespace) == {} and not CALLS


async def test_a_session_read_twice_at_once_is_read_once(
    settings: Settings, base_url: str, graph_client: Any, namespace: str,
) -> None:
    MODE["answer"] = "down"  # stored, its turns unread
    async with facts_app(settings, base_url) as app:
        ids = await app.ingest(namespace, TURNS)
        MODE["answer"], calls = "facts", len(CALLS)
        facts, tenant = app.runtime.session_facts, Tenant.system(namespace)
        assert facts is not None
        turns = [await app.runtime.service.get(tenant=tenant, id=i) for i in ids]
        done = await asyncio.gather(*[facts.extract("s-1", turns, tenant=tenant, actor="t")
                                      for _ in range(2)])
        assert len(CALLS) == calls + 1  # the session's lock made the second claim find nothing
        assert sorted(len(written) for written in done) == [0, 1]
        assert list(await facts_of(graph_client, namespace)) == [CAMPING]
