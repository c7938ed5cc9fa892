"""The write-side LLM reconciles its facts (memlattice.services.session_facts): a fact
about a subject and attribute said again is reinforced, a new value SUPERSEDES the
old one, kept as history. Against a real chat server on loopback: no real model.

The fake model reads the numbered turns and answers where Ines lives when a turn
names a city, with its subject and attribute; any other turn gives a fact
without them.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from memlattice.core.settings import FactsLLMSettings, Settings
from memlattice.services.events import EventKind
from tests._fake_endpoint import serving
from tests.integration._apps import app_with
from tests.integration.test_session_facts import INGEST, FactsApp

LINE = re.compile(r"^\[(\d+)\](?: \([^)]*\))? (.*)$")
CITIES = ("Bergen", "Tromsø")

MEMORY = """query($ns: String!, $id: ID!, $asOf: DateTime) {
  memory(namespace: $ns, id: $id, asOf: $asOf) { id status supersededBy reinforcements } }"""
HISTORY = """query($ns: String!, $id: ID!) { memoryHistory(namespace: $ns, id: $id) {
  version memory { status } } }"""
UPDATES = """query($ns: String!) { memoryUpdates(namespace: $ns, statuses: [CONFIRMED]) {
  status reason subject attribute newer { id } older { id } } }"""
SEARCH = """query($input: SearchInput!) { search(input: $input) { memory { id } } }"""


async def chat(request: Request) -> JSONResponse:
    body = await request.json()
    facts = []
    for line in body["messages"][-1]["content"].splitlines():
        match = LINE.match(line)
        assert match, line
        number, text = int(match.group(1)), match.group(2)
        city = next((c for c in CITIES if c in text), None)
        if city is not None:
            facts.append({"fact": f"Ines lives in {city}.", "subject": "Ines",
                          "attribute": "home city", "turns": [number]})
        elif "pottery" in text:
            facts.append({"fact": "Ines takes a pottery class.", "turns": [number]})
    return JSONResponse({
        "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": json.dumps({"facts": facts})}}],
    })


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with serving(Route("/v1/chat/completions", chat, methods=["POST"])) as url:
        yield url + "/v1"


@asynccontextmanager
async def facts_app(settings: Settings, base_url: str) -> AsyncIterator[FactsApp]:
    """The write-side LLM on; requests may take long on a busy machine."""
    none = settings.embedding.model_copy(update={"provider": "none"})
    patient = settings.limits.model_copy(update={"request_timeout_s": 600.0})
    configured = FactsLLMSettings(model="facts-test", base_url=base_url, max_facts=5,
                                 judge_updates=False)  # tests/../test_update_judge.py
    async with app_with(settings, embedding=none, facts_llm=configured,
                        limits=patient) as client:
        yield FactsApp(client)


START = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=6)


def said(hours: int) -> str:
    return (START + timedelta(hours=hours)).isoformat().replace("+00:00", "Z")


async def ingest(app: FactsApp, namespace: str, session: str, hours: int,
                 *lines: str, user: str = "u-1") -> None:
    started = time.monotonic()
    await app.ok(INGEST, {"input": {
        "namespace": namespace, "sessionId": session, "userId": user, "messages": [
            {"speaker": "Ines", "content": text, "at": said(hours)} for text in lines]}})
    assert app.runtime.session_facts is not None
    await app.runtime.session_facts.drain()
    print(f"# {session} ingested and read in {time.monotonic() - started:.1f}s")


async def facts(graph_client: Any, namespace: str,
                user: str = "u-1") -> dict[str, dict[str, Any]]:
    """The model's facts of one user's sessions, by content."""
    rows = await graph_client.read(("""
        MATCH (f:Memory {namespace: $ns, memoryType: 'observation'})
        RETURN f.content AS content, f.id AS id, f.status AS status,
               f.`meta.subject` AS subject, f.`meta.attributeKey` AS attributeKey,
               f.userId AS userId,
               COUNT { (f)-[:DERIVED]->() } AS derived""", {"ns": namespace}))
    return {str(r["content"]): dict(r) for r in rows if r["userId"] == user}


async def test_a_fact_said_again_is_reinforced_and_a_new_value_supersedes_it(
    settings: Settings, base_url: str, graph_client: Any, namespace: str,
) -> None:
    async with facts_app(settings, base_url) as app:
        await ingest(app, namespace, "s-1", 0, "I live in Bergen, by the harbour.",
                     "I signed up for a pottery class.")
        first = await facts(graph_client, namespace)
        assert set(first) == {"Ines lives in Bergen.", "Ines takes a pottery class."}
        bergen = first["Ines lives in Bergen."]
        assert bergen["subject"] == '"Ines"' and bergen["attributeKey"] == '"home city"'

        await ingest(app, namespace, "s-2", 1, "Bergen is rainy, but I love living here.")
        again = await facts(graph_client, namespace)
        assert len(again) == 2  # reinforced, not written twice
        assert again["Ines lives in Bergen."]["derived"] == 2  # from both sessions' turns
        memory = (await app.ok(MEMORY, {"ns": namespace, "id": bergen["id"]}))["memory"]
        assert memory["reinforcements"] == 1 and memory["status"] == "ACTIVE"

        bus = app.runtime.service.events.bus
        assert bus is not None
        events = (await bus.open(namespace)).subscription
        before = datetime.now(UTC)
        await ingest(app, namespace, "s-3", 3, "Big news: we moved to Tromsø!")
        now = await facts(graph_client, namespace)
        tromso = now["Ines lives in Tromsø."]
        assert tromso["status"] == "active"
        assert now["Ines lives in Bergen."]["status"] == "superseded"  # kept, not deleted
        memory = (await app.ok(MEMORY, {"ns": namespace, "id": bergen["id"]}))["memory"]
        assert memory["supersededBy"] == tromso["id"]
        (link,) = (await app.ok(UPDATES, {"ns": namespace}))["memoryUpdates"]
        assert (link["newer"]["id"], link["older"]["id"]) == (tromso["id"], bergen["id"])
        # Ours, or the write's own update detection's when it proposed the pair first
        # (then confirmed, not linked twice).
        assert (link["subject"], link["attribute"]) in {("ines", "home city"),
                                                        ("ines", "residence")}, link
        assert "facts model" in link["reason"] or "bergen" in link["reason"].casefold(), link
        assert now["Ines takes a pottery class."]["status"] == "active"  # no pair: untouched

        # History: the fact as it was before session 3 is still found.
        then = (await app.ok(MEMORY, {"ns": namespace, "id": bergen["id"],
                                      "asOf": before.isoformat()}))["memory"]
        assert then["status"] == "ACTIVE" and then["supersededBy"] is None
        versions = (await app.ok(HISTORY, {"ns": namespace, "id": bergen["id"]}))
        assert [v["memory"]["status"] for v in versions["memoryHistory"]][-1] == "ACTIVE"
        hits = (await app.ok(SEARCH, {"input": {
            "filter": {"namespace": namespace, "asOf": said(2)},
            "query": "Where does Ines live?"}}))["search"]
        ids = [h["memory"]["id"] for h in hits]
        assert bergen["id"] in ids and tromso["id"] not in ids, hits

        # Audited and announced: the supersede is in the trail and on the event bus.
        audit = await graph_client.read(("""
            MATCH (a:AuditEntry {memoryId: $old}) RETURN a.operation AS operation""",
            {"old": bergen["id"]}))
        assert {"reinforce", "supersede"} <= {r["operation"] for r in audit}

        # Another user's chat about an Ines is theirs: it replaces nothing of u-1's.
        await ingest(app, namespace, "s-4", 4, "I live in Bergen.", user="u-2")
        assert (await facts(graph_client, namespace, "u-2"))[
            "Ines lives in Bergen."]["status"] == "active"
        assert (await facts(graph_client, namespace))["Ines lives in Tromsø."][
            "status"] == "active"
        seen: list[tuple[str, tuple[str, ...]]] = []
        while (EventKind.SUPERSEDED, (bergen["id"], tromso["id"])) not in seen:
            event = await events.next_within(120)  # a shared log is polled
            assert event is not None, seen
            seen.append((event.kind, event.memory_ids))
