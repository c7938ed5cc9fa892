"""The write-side LLM judges which earlier memories a new memory replaces
(memlattice.services.update_judge), against a real chat server on loopback: no
real model.

The fake model knows one thing: where Ines lives. Shown a new memory that names a
city and an offer that names another, it says the new one replaces the offer
(attribute "home city", confidence 0.9); it answers anything else with an empty
list. "Ines settled into a flat in Tromsø" after "Bergen has been home for Ines"
names no word of change the rules know, so only the model links them.
"""

from __future__ import annotations

from typing import Any

import pytest

from memlattice.core.model import Sensitivity
from memlattice.core.settings import FactsLLMSettings, Settings
from memlattice.graph.judge_queue import JudgeQueueGraph
from tests.integration._apps import app_with
from tests.integration._judge import FakeJudge, JudgedApp, judge, judged_app, settle_all
from tests.integration._keys import make_key

__all__ = ["judge"]  # the fake model, a fixture

OLD = "Bergen has been home for Ines since 2019."
NEW = "Ines settled into a flat in Tromsø with her partner."
OTHER = "The pottery class moved to Thursdays."

WRITE_MANY = """mutation($inputs: [MemoryInput!]!) { writeMemories(inputs: $inputs) { id } }"""
INGEST = """mutation($input: ConversationInput!) {
  ingestConversation(input: $input) { memories { id } } }"""
PROPOSE = """mutation($ns: String!, $newer: ID!, $older: ID!) {
  proposeUpdate(namespace: $ns, newerId: $newer, olderId: $older) { id } }"""
CONFIRM = """mutation($ns: String!, $id: ID!) { confirmUpdate(namespace: $ns, id: $id) {
  status older { status } } }"""
AUDIT = """query($ns: String!, $id: ID!) { auditTrail(namespace: $ns, id: $id) { operation } }"""
SEARCH = """query($input: SearchInput!) { search(input: $input) {
  memory { id } outdatedBy { id } } }"""
CONFIGURE = """mutation($ns: String!) { configureNamespace(namespace: $ns,
  input: {autoSupersede: 0.8}) { autoSupersede } }"""


async def test_the_model_links_what_the_rules_cannot_read_and_recall_prefers_it(
    settings: Settings, judge: tuple[FakeJudge, str], namespace: str,
) -> None:
    fake, url = judge
    fake.mode = "judge"
    async with judged_app(settings, url) as app:
        old = await app.write(namespace, OLD, "2025-01-10T10:00:00Z")
        other = await app.write(namespace, OTHER, "2025-02-01T10:00:00Z")
        new = await app.write(namespace, NEW, "2025-06-02T09:00:00Z")
        assert any(NEW in p and OLD in p for p in fake.prompts)  # shown with its offer
        (link,) = await app.links(namespace)
        assert (link["newer"]["id"], link["older"]["id"]) == (new, old)
        assert link["status"] == "CANDIDATE" and link["kind"] == "UPDATE"
        assert link["confidence"] == pytest.approx(0.9)
        assert link["attribute"] == "home city"
        assert link["reason"].startswith("judged by model judge-test")
        assert link["older"]["status"] == "ACTIVE"  # a candidate: kept, marked
        hits = (await app.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                                "query": "Where does Ines live?"}}))["search"]
        order = [h["memory"]["id"] for h in hits]
        assert order.index(new) < order.index(old)
        assert next(h for h in hits if h["memory"]["id"] == old)["outdatedBy"] == {"id": new}
        assert other not in {link["older"]["id"], link["newer"]["id"]}
        assert app.outcomes("linked") == 1 and app.outcomes("answered") >= 1

        # Writing the same content again creates nothing, so nothing is judged again.
        asked = len(fake.prompts)
        await app.write(namespace, NEW, "2025-06-03T09:00:00Z")
        assert len(fake.prompts) == asked
        assert len(await app.links(namespace)) == 1


async def test_a_namespace_that_supersedes_on_its_own_confirms_a_confident_judgement(
    settings: Settings, judge: tuple[FakeJudge, str], namespace: str,
) -> None:
    fake, url = judge
    fake.mode = "judge"
    async with judged_app(settings, url) as app:
        await app.ok(CONFIGURE, {"ns": namespace})
        ids = (await app.ok(INGEST, {"input": {
            "namespace": namespace, "sessionId": "s-1", "messages": [
                {"speaker": "Ines", "content": "Bergen has been home since 2019.",
                 "at": "2025-01-10T10:00:00Z"},
                {"speaker": "Ines", "content": "Work was long today.",
                 "at": "2025-01-10T10:01:00Z"},
                {"speaker": "Ines", "content": "We finally have keys to a flat in Oslo!",
                 "at": "2025-05-10T10:00:00Z"}]}}))["ingestConversation"]["memories"]
        await app.judge.drain()
        (link,) = await app.links(namespace)
        assert link["status"] == "CONFIRMED"
        assert (link["newer"]["id"], link["older"]["id"]) == (ids[2]["id"], ids[0]["id"])
        assert link["older"]["status"] == "SUPERSEDED"


async def test_a_model_that_is_down_or_answers_garbage_links_nothing_and_fails_no_write(
    settings: Settings, judge: tuple[FakeJudge, str], namespace: str,
) -> None:
    fake, url = judge
    async with judged_app(settings, url, {"judge_retry_s": 3600.0}) as app:
        fake.mode = "judge"
        await app.write(namespace, OLD, "2025-01-10T10:00:00Z")
        fake.mode = "down"
        await app.write(namespace, NEW, "2025-06-02T09:00:00Z")
        fake.mode = "garbage"
        await app.write(namespace, "Ines lives in Oslo now, near her sister.",
                        "2025-08-02T09:00:00Z")
        assert await app.links(namespace) == []
        assert app.outcomes("model_error") == 1 and app.outcomes("malformed") == 1
        # Both wait in the graph to be asked again (an hour from now, here).
        assert await app.waiting(namespace) == 2
        assert app.outcomes("retried") == 2
        await settle_all(app, namespace)  # no later test's judge asks about them


async def test_the_model_is_never_shown_a_memory_the_writers_key_may_not_see(
    settings: Settings, judge: tuple[FakeJudge, str], namespace: str, graph_client: Any,
) -> None:
    fake, url = judge
    fake.mode = "judge"
    async with judged_app(settings, url, auth_mode="keys") as app:
        high = await make_key(graph_client, namespace, clearance=Sensitivity.HIGH)
        low = await make_key(graph_client, namespace, clearance=Sensitivity.LOW)
        secret = "Ines keeps a spare key to her Bergen flat under the mat."
        hidden = await app.write(namespace, secret, "2025-01-10T10:00:00Z", high,
                                 sensitivity="HIGH")
        seen = await app.write(namespace, OLD, "2025-01-11T10:00:00Z", low)
        new = await app.write(namespace, NEW, "2025-06-02T09:00:00Z", low)
        assert not any(secret in p for p in fake.prompts)
        (link,) = await app.links(namespace, high)
        assert (link["newer"]["id"], link["older"]["id"]) == (new, seen)
        assert hidden != seen


async def test_with_judging_off_the_model_is_asked_nothing_about_updates(
    settings: Settings, judge: tuple[FakeJudge, str], namespace: str, graph_client: Any,
) -> None:
    fake, url = judge
    fake.mode = "judge"
    configured = FactsLLMSettings(model="judge-test", base_url=url, judge_updates=False)
    async with app_with(settings, facts_llm=configured) as client:
        app = JudgedApp(client)
        assert app.runtime.update_judge is None
        asked = len(fake.prompts)
        await app.ok(WRITE_MANY, {"inputs": [
            {"namespace": namespace, "content": OLD, "now": "2025-01-10T10:00:00Z"},
            {"namespace": namespace, "content": NEW, "now": "2025-06-02T09:00:00Z"}]})
        assert len(fake.prompts) == asked
        assert await app.links(namespace) == []
        # Nothing was queued, so a process that judges later finds nothing of these.
        assert await JudgeQueueGraph(graph_client).count(namespace) == 0




async def test_a_rule_link_the_model_was_shown_and_did_not_name_is_disputed_until_stated(
    settings: Settings, judge: tuple[FakeJudge, str], namespace: str,
) -> None:
    """"We moved to Tromsø" after "I live in Bergen" is a pair the rules link; a model
    that reads no update there disputes their candidate: search stops marking and
    reordering by it, the link stays listed, and a person or writer may still
    confirm or state it."""
    fake, url = judge
    fake.mode = "silent"
    async with judged_app(settings, url) as app:
        async def turn(session: str, text: str, at: str) -> str:
            done = await app.ok(INGEST, {"input": {
                "namespace": namespace, "sessionId": session,
                "messages": [{"speaker": "Ines", "content": text, "at": at}]}})
            await app.judge.drain()
            return str(done["ingestConversation"]["memories"][0]["id"])

        old = await turn("s-1", "I live in Bergen.", "2025-01-10T10:00:00Z")
        new = await turn("s-2", "We moved to Tromsø last month.", "2025-06-02T09:00:00Z")
        (link,) = await app.links(namespace)
        assert (link["newer"]["id"], link["older"]["id"]) == (new, old)
        assert link["status"] == "CANDIDATE" and link["proposedBy"] is None
        assert link["disputedBy"] == "model judge-test"
        assert app.outcomes("disputed") >= 1
        question = {"input": {"filter": {"namespace": namespace},
                              "query": "Where does Ines live?"}}
        hits = (await app.ok(SEARCH, question))["search"]
        assert all(h["outdatedBy"] is None for h in hits)
        trail = (await app.ok(AUDIT, {"ns": namespace, "id": old}))["auditTrail"]
        assert "dispute-update" in [e["operation"] for e in trail]

        # The writer states it: the dispute ends and the mark is back.
        await app.ok(PROPOSE, {"ns": namespace, "newer": new, "older": old})
        (link,) = await app.links(namespace)
        assert link["disputedBy"] is None and link["proposedBy"]
        hits = (await app.ok(SEARCH, question))["search"]
        assert next(h for h in hits if h["memory"]["id"] == old)["outdatedBy"] == {"id": new}
        done = (await app.ok(CONFIRM, {"ns": namespace, "id": link["id"]}))["confirmUpdate"]
        assert done["status"] == "CONFIRMED" and done["older"]["status"] == "SUPERSEDED"
