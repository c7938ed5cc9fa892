"""The explorer's knowledge updates, end to end: the real app on a socket, headless Chromium.

Two pairs of memories where the newer states another value of what the older
stated (the server links them on write with an UPDATES candidate). In one
browser session: the outdated hit is marked in the results, the chain of states
of the attribute is listed oldest first with the link's reason, confidence and
status, the UPDATES link is drawn in the graph; Confirm with a read-only key is
refused (FORBIDDEN, shown), with a write key it supersedes the older memory;
Reject with a note keeps the pair as REJECTED, still saying who stated it. Every outcome is checked through
GraphQL behind the page's back.

Then a pair the rules link ("We moved to Tromsø last month." after "I live in
Bergen.", one speaker), disputed in the database as the update judge would: the
link says who found it and that it is disputed (search ignores it, so the older
hit is not marked outdated; the graph labels it "UPDATES? disputed", drawn apart),
and Confirm still supersedes the older memory.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from playwright.async_api import Browser, Page, expect

from memlattice.core.auth import Tenant
from memlattice.core.settings import Settings
from memlattice.graph.client import GraphClient
from memlattice.graph.updates.proposals import ProposalGraph
from tests.e2e.explorer_support import (
    STATUS,
    WRITE,
    call,
    drawn_edge,
    search_and_open,
    seed_reader_writer_keys,
    shot,
    unexpected,
)

expect.set_options(timeout=60_000)  # a shared CI machine can be slow; failures still fail

UPDATES = """query($ns: String!, $id: ID, $statuses: [UpdateStatus!]) {
  memoryUpdates(namespace: $ns, memoryId: $id, statuses: $statuses) {
    id status note proposedBy disputedBy newer { id } older { id status } } }"""
INGEST = """mutation($input: ConversationInput!) {
  ingestConversation(input: $input) { memories { id content } } }"""
PROPOSE = """mutation($ns: String!, $newer: ID!, $older: ID!) {
  proposeUpdate(namespace: $ns, newerId: $newer, olderId: $older) { id proposedBy } }"""
SEARCH = """query($input: SearchInput!) {
  search(input: $input) { memory { id } outdatedBy { id } update { id } } }"""


async def test_explorer_update_chain_confirm_and_reject(
    live: str, settings: Settings, browser: Browser
) -> None:
    namespace = f"e2e/{uuid.uuid4().hex[:12]}"
    admin, reader, writer = await seed_reader_writer_keys(settings, namespace)

    async def ok(query: str, **variables: Any) -> dict[str, Any]:
        return await call(live, admin, query, variables)

    ids = {}
    for name, content in [
        ("old_port", "The metrics exporter listens on 9100."),
        ("new_port", "The exporter now listens on 9200."),
        ("old_sync", "The platform team's daily standup is at 9:30 in room Fjord."),
        ("new_sync", "The platform team's standup is now at 10:15."),
    ]:
        written = await ok(WRITE, input={"namespace": namespace, "content": content})
        ids[name] = written["writeMemory"]["id"]
    links = (await ok(UPDATES, ns=namespace))["memoryUpdates"]
    pairs = {(link["newer"]["id"], link["older"]["id"]): link for link in links}
    assert set(pairs) == {(ids["new_port"], ids["old_port"]), (ids["new_sync"], ids["old_sync"])}, \
        f"the server links each pair with one UPDATES candidate: {links}"
    port_link = pairs[(ids["new_port"], ids["old_port"])]["id"]
    sync_link = pairs[(ids["new_sync"], ids["old_sync"])]["id"]
    # What the page will show, asked as an agent would (this also warms the search path).
    hits = (await ok(SEARCH, input={"filter": {"namespace": namespace},
                                    "query": "Which port does the metrics exporter listen on?"}))
    marks = {h["memory"]["id"]: h["outdatedBy"] and h["outdatedBy"]["id"] for h in hits["search"]}
    assert marks.get(ids["old_port"]) == ids["new_port"], hits

    page = await browser.new_page(viewport={"width": 1600, "height": 1000})
    page.set_default_timeout(60_000)
    requests: list[str] = []
    problems: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    await page.goto(f"{live}/explorer/?namespace={namespace}")
    await page.get_by_test_id("api-key").fill(reader)
    await page.get_by_test_id("tab-search").click()

    # The older statement is still found, marked outdated by the newer one.
    await search_and_open(page, "Which port does the metrics exporter listen on?", ids["old_port"])
    old_hit = page.locator(f'[data-testid="result"][data-memory-id="{ids["old_port"]}"]')
    await expect(old_hit).to_have_attribute("data-outdated-by", ids["new_port"])
    await expect(old_hit.get_by_test_id("outdated")).to_contain_text("listens on 9200")
    # The rules' link is a candidate: the hit says it may be outdated, not that it is.
    await expect(old_hit.get_by_test_id("outdated")).to_contain_text("may be outdated by")

    # The chain of states: oldest first, with the link's reason, confidence and status.
    states = page.get_by_test_id("update-state")
    await expect(states).to_have_count(2)
    assert await states.evaluate_all("els => els.map(e => e.dataset.memoryId)") == [
        ids["old_port"], ids["new_port"]]
    assert await states.evaluate_all("els => els.map(e => e.dataset.standing)") == [
        "outdated", "current"]
    link = page.locator(f'[data-testid="update-link"][data-update-id="{port_link}"]')
    await expect(link.get_by_test_id("update-status")).to_have_text("CANDIDATE")
    await expect(link.get_by_test_id("update-reason")).not_to_be_empty()
    confidence = float(await link.get_by_test_id("update-confidence").inner_text())
    assert 0 < confidence <= 1
    # Found on write by the rule set, stated by nobody, disputed by no model.
    await expect(link.get_by_test_id("update-origin")).to_have_text("found by the rules")
    await expect(link).to_have_attribute("data-disputed", "false")
    await expect(link.get_by_test_id("update-disputed")).to_have_count(0)

    # The graph draws the UPDATES link, newer → older, which `edges` does not list.
    await drawn_edge(page, "UPDATES", ids["new_port"], ids["old_port"], "UPDATES?")
    await shot(page, "20-update-chain")

    # A read-only key may look, not decide: the refusal is shown with its code.
    await link.get_by_test_id("update-confirm").click()
    await expect(link.get_by_test_id("update-error")).to_contain_text("FORBIDDEN")
    assert (await ok(STATUS, ns=namespace, id=ids["old_port"]))["memory"]["status"] == "ACTIVE"

    # With a write key, Confirm: the older memory becomes SUPERSEDED, kept as history.
    await page.get_by_test_id("api-key").fill(writer)
    await link.get_by_test_id("update-confirm").click()
    await expect(link.get_by_test_id("update-status")).to_have_text("CONFIRMED")
    await expect(link.get_by_test_id("update-error")).to_have_count(0)
    assert await states.evaluate_all("els => els.map(e => e.dataset.standing)") == [
        "superseded", "current"]
    await expect(page.get_by_test_id("detail-status")).to_have_text("SUPERSEDED")
    older = (await ok(STATUS, ns=namespace, id=ids["old_port"]))["memory"]
    assert older == {"status": "SUPERSEDED", "supersededBy": ids["new_port"]}
    await drawn_edge(page, "SUPERSEDES", ids["new_port"], ids["old_port"])
    await shot(page, "21-confirmed")

    # The second pair: the writer states it, then it is rejected with a note; the pair
    # leaves the chain, listed as rejected, still saying who stated it.
    stated = (await call(live, writer, PROPOSE, {"ns": namespace, "newer": ids["new_sync"],
                                                 "older": ids["old_sync"]}))["proposeUpdate"]
    assert stated["id"] == sync_link and stated["proposedBy"], stated
    await search_and_open(page, "What time is the platform team's standup?", ids["new_sync"])
    link = page.locator(f'[data-testid="update-link"][data-update-id="{sync_link}"]')
    await expect(link.get_by_test_id("update-status")).to_have_text("CANDIDATE")
    await link.get_by_test_id("update-note").fill("two different meetings")
    await link.get_by_test_id("update-reject").click()
    rejected = page.locator(f'[data-testid="rejected-update"][data-update-id="{sync_link}"]')
    await expect(rejected).to_contain_text("two different meetings")
    origin = rejected.get_by_test_id("rejected-origin")
    await expect(origin).to_have_text(f"stated by {stated['proposedBy']}")
    await expect(origin).to_have_attribute("data-proposed-by", stated["proposedBy"])
    await expect(page.get_by_test_id("update-state")).to_have_count(0)
    decided = (await ok(UPDATES, ns=namespace, id=ids["new_sync"],
                        statuses=["REJECTED"]))["memoryUpdates"]
    assert [(d["id"], d["status"], d["note"], d["proposedBy"]) for d in decided] == [
        (sync_link, "REJECTED", "two different meetings", stated["proposedBy"])]
    assert (await ok(STATUS, ns=namespace, id=ids["old_sync"]))["memory"]["status"] == "ACTIVE"
    await shot(page, "22-rejected")

    foreign = [url for url in requests if not url.startswith(live)]
    assert not foreign, f"the page loaded from elsewhere: {foreign}"
    # The namespace picker asks once before the key is typed (401); nothing else may fail.
    problems = unexpected(problems)
    assert not problems, f"console errors or CSP violations: {problems}"
    await page.close()


async def dispute(settings: Settings, namespace: str, newer: str, older: str) -> list[str]:
    """What the update judge does when its model does not read the pair as an update,
    straight through the graph layer the service uses."""
    client = GraphClient.connect(settings.neo4j.uri or "", settings.neo4j.user,
                                 settings.neo4j.password.get_secret_value(),
                                 settings.neo4j.database)
    try:
        return await ProposalGraph(client).dispute(
            tenant=Tenant.system(namespace), pairs=[(newer, older)], by="model test",
            actor="e2e-judge", now=datetime.now(UTC))
    finally:
        await client.close()


async def open_page(browser: Browser, live: str, namespace: str, key: str,
                    problems: list[str]) -> Page:
    page = await browser.new_page(viewport={"width": 1600, "height": 1000})
    page.set_default_timeout(60_000)
    page.on("request", lambda request: None if request.url.startswith(live)
            else problems.append(f"foreign request: {request.url}"))
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    await page.goto(f"{live}/explorer/?namespace={namespace}")
    await page.get_by_test_id("api-key").fill(key)
    await page.get_by_test_id("tab-search").click()
    return page


async def test_explorer_disputed_candidate_is_marked_and_can_be_confirmed(
    live: str, settings: Settings, browser: Browser
) -> None:
    namespace = f"e2e/{uuid.uuid4().hex[:12]}"
    admin, _reader, writer = await seed_reader_writer_keys(settings, namespace)

    async def ok(query: str, **variables: Any) -> dict[str, Any]:
        return await call(live, admin, query, variables)

    async def say(session: str, text: str, at: str) -> str:
        done = await ok(INGEST, input={"namespace": namespace, "sessionId": session, "messages": [
            {"speaker": "Ines", "content": text, "at": at}]})
        (memory,) = done["ingestConversation"]["memories"]
        return str(memory["id"])

    old = await say("s-1", "I live in Bergen.", "2025-01-10T10:00:00Z")
    new = await say("s-2", "We moved to Tromsø last month.", "2025-06-02T09:00:00Z")
    (link,) = (await ok(UPDATES, ns=namespace))["memoryUpdates"]
    assert (link["newer"]["id"], link["older"]["id"], link["status"]) == (new, old, "CANDIDATE")
    assert link["proposedBy"] is None and link["disputedBy"] is None, link
    question = "Where does Ines live?"
    hits = (await ok(SEARCH, input={"filter": {"namespace": namespace}, "query": question}))
    assert {h["memory"]["id"]: h["outdatedBy"] for h in hits["search"]}.get(old) == {"id": new}

    # The update judge's model did not say Tromsø replaces Bergen: search ignores the link.
    assert await dispute(settings, namespace, new, old) == [old]
    (link,) = (await ok(UPDATES, ns=namespace))["memoryUpdates"]
    assert (link["status"], link["disputedBy"]) == ("CANDIDATE", "model test"), link
    hits = (await ok(SEARCH, input={"filter": {"namespace": namespace}, "query": question}))
    assert all(h["outdatedBy"] is None for h in hits["search"]), hits

    problems: list[str] = []
    page = await open_page(browser, live, namespace, writer, problems)
    await search_and_open(page, question, old)
    old_hit = page.locator(f'[data-testid="result"][data-memory-id="{old}"]')
    await expect(old_hit).to_have_attribute("data-outdated-by", "")

    # The link: found by the rules, disputed by the model, still a candidate to decide.
    states = page.get_by_test_id("update-state")
    await expect(states).to_have_count(2)
    assert await states.evaluate_all("els => els.map(e => e.dataset.memoryId)") == [old, new]
    assert await states.evaluate_all("els => els.map(e => e.dataset.standing)") == [
        "disputed", "current"]
    shown = page.locator(f'[data-testid="update-link"][data-update-id="{link["id"]}"]')
    await expect(shown).to_have_attribute("data-disputed", "true")
    await expect(shown.get_by_test_id("update-status")).to_have_text("CANDIDATE")
    await expect(shown.get_by_test_id("update-origin")).to_have_text("found by the rules")
    marker = shown.get_by_test_id("update-disputed")
    await expect(marker).to_have_text("disputed by model test: search ignores it until confirmed")
    await expect(marker).to_have_attribute("data-disputed-by", "model test")
    await expect(shown.get_by_test_id("update-confirm")).to_be_enabled()
    await expect(shown.get_by_test_id("update-reject")).to_be_enabled()
    # The graph draws it apart from a candidate search heeds.
    await drawn_edge(page, "UPDATES", new, old, "UPDATES? disputed")
    assert await page.evaluate(
        "id => window.memlatticeExplorer.graph.cy.getElementById(id).data('disputed')",
        f"update:{link['id']}") is True
    await shot(page, "23-disputed")

    # A person confirms it anyway: the older memory is SUPERSEDED; the dispute stays told.
    await shown.get_by_test_id("update-confirm").click()
    await expect(shown.get_by_test_id("update-status")).to_have_text("CONFIRMED")
    await expect(shown.get_by_test_id("update-error")).to_have_count(0)
    await expect(shown).to_have_attribute("data-disputed", "false")
    await expect(shown.get_by_test_id("update-disputed")).to_have_count(0)
    await expect(shown.get_by_test_id("update-was-disputed")).to_have_text(
        "disputed by model test before it was confirmed")
    assert await states.evaluate_all("els => els.map(e => e.dataset.standing)") == [
        "superseded", "current"]
    await expect(page.get_by_test_id("detail-status")).to_have_text("SUPERSEDED")
    assert (await ok(STATUS, ns=namespace, id=old))["memory"] == {
        "status": "SUPERSEDED", "supersededBy": new}
    await drawn_edge(page, "UPDATES", new, old, "UPDATES")  # confirmed: no longer disputed
    await shot(page, "24-disputed-confirmed")

    # The namespace picker asks once before the key is typed (401); nothing else may fail.
    problems = unexpected(problems)
    assert not problems, f"console errors, CSP violations or foreign requests: {problems}"
    await page.close()
