"""The explorer's "Earlier memories it may replace", end to end: the real app on a
socket, headless Chromium.

"Mornings are green tea for me these days", written months after "My go-to drink
is a flat white every morning", names no value the rules compare and no word of
change they know: nothing links the two on write. Opened in the memory panel, the
newer memory lists the older under its nearest earlier memories (`mayReplace`),
with when it was written and how alike the two are. Replaces with a read-only key
is refused (FORBIDDEN, shown on the row); with a write key it proposes the pair
(`proposeUpdate`, not confirmed): the panel, the graph and the search results are
loaded again, the pair stands in the states chain as a candidate, and Confirm there
supersedes the older memory. Every outcome is checked through GraphQL behind the
page's back.
"""

from __future__ import annotations

import uuid
from typing import Any

from playwright.async_api import Browser, Request, expect

from memlattice.core.settings import Settings
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

OLD = "My go-to drink is a flat white every morning."
NEW = "Mornings are green tea for me these days."
QUESTION = "What do I drink in the morning?"

UPDATES = """query($ns: String!, $statuses: [UpdateStatus!]) {
  memoryUpdates(namespace: $ns, statuses: $statuses) {
    id kind status attribute reason proposedBy newer { id } older { id } } }"""
MAY_REPLACE = """query($ns: String!, $id: ID!) { memory(namespace: $ns, id: $id) {
  mayReplace(first: 3) { memory { id } similarity update { id } } } }"""


async def test_explorer_replaces_proposes_an_update_the_rules_did_not_find(
    live: str, settings: Settings, browser: Browser
) -> None:
    namespace = f"e2e/{uuid.uuid4().hex[:12]}"
    admin, reader, writer = await seed_reader_writer_keys(settings, namespace)

    async def ok(query: str, **variables: Any) -> dict[str, Any]:
        return await call(live, admin, query, variables)

    ids = {}
    for name, content, at in [
        ("old", OLD, "2025-01-10T10:00:00Z"),
        ("passport", "Reminder: renew the passport before the summer.", "2025-02-01T10:00:00Z"),
        ("band", "Favourite band at the moment: Röyksopp.", "2025-03-01T10:00:00Z"),
        ("new", NEW, "2025-06-02T09:00:00Z"),
    ]:
        written = await ok(WRITE, input={"namespace": namespace, "content": content, "now": at})
        ids[name] = written["writeMemory"]["id"]
    links = (await ok(UPDATES, ns=namespace, statuses=None))["memoryUpdates"]
    assert links == [], f"the rules link none of these memories: {links}"
    offered = (await ok(MAY_REPLACE, ns=namespace, id=ids["new"]))["memory"]["mayReplace"]
    assert ids["old"] in [o["memory"]["id"] for o in offered], offered
    similarity = next(o["similarity"] for o in offered if o["memory"]["id"] == ids["old"])

    page = await browser.new_page(viewport={"width": 1600, "height": 1000})
    page.set_default_timeout(60_000)
    requests: list[str] = []
    calls: list[Request] = []
    problems: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("request", lambda request: calls.append(request)
            if request.url.endswith("/graphql") and request.method == "POST" else None)
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    await page.goto(f"{live}/explorer/?namespace={namespace}")
    await page.get_by_test_id("api-key").fill(reader)
    await page.get_by_test_id("tab-search").click()

    # Nothing links the two: the newer memory has no states chain, only the offer.
    await search_and_open(page, QUESTION, ids["new"])
    old_hit = page.locator(f'[data-testid="result"][data-memory-id="{ids["old"]}"]')
    await expect(old_hit).to_have_attribute("data-outdated-by", "")
    section = page.get_by_test_id("may-replace")
    items = section.get_by_test_id("may-replace-item")
    await expect(items).to_have_count(len(offered))
    assert await items.evaluate_all("els => els.map(e => e.dataset.memoryId)") == [
        o["memory"]["id"] for o in offered], "most alike first, as the API answers"
    await expect(page.get_by_test_id("updates")).to_have_count(0)
    row = section.locator(f'[data-testid="may-replace-item"][data-memory-id="{ids["old"]}"]')
    await expect(row.get_by_test_id("may-replace-content")).to_have_text(OLD)
    await expect(row).to_contain_text("2025-01-10 10:00:00 UTC")
    await expect(row).to_have_attribute("data-update-status", "")
    shown = await row.get_by_test_id("may-replace-similarity").inner_text()
    assert len(shown.split(".")[-1]) == 2 and abs(float(shown) - similarity) <= 0.005 + 1e-9, \
        (shown, similarity)
    await shot(page, "30-may-replace")

    # A read-only key may look, not say: the refusal is shown on the row with its code.
    await row.get_by_test_id("may-replace-propose").click()
    await expect(row.get_by_test_id("may-replace-error")).to_have_attribute("data-code", "FORBIDDEN")
    assert (await ok(UPDATES, ns=namespace, statuses=None))["memoryUpdates"] == []

    # With a write key, Replaces (with what changed and why): a candidate, not decided.
    await page.get_by_test_id("api-key").fill(writer)
    await row.get_by_test_id("may-replace-attribute").fill("morning drink")
    await row.get_by_test_id("may-replace-reason").fill("tea instead of coffee")
    await row.get_by_test_id("may-replace-propose").click()
    await expect(row).to_have_attribute("data-update-status", "CANDIDATE")
    await expect(row.get_by_test_id("may-replace-error")).to_have_count(0)
    await expect(row.get_by_test_id("may-replace-propose")).to_have_count(0)
    links = (await ok(UPDATES, ns=namespace, statuses=None))["memoryUpdates"]
    assert [(u["newer"]["id"], u["older"]["id"], u["kind"], u["status"], u["attribute"])
            for u in links] == [(ids["new"], ids["old"], "UPDATE", "CANDIDATE", "morning drink")]
    assert "tea instead of coffee" in links[0]["reason"]
    link_id = links[0]["id"]
    assert (await ok(STATUS, ns=namespace, id=ids["old"]))["memory"]["status"] == "ACTIVE"

    # The pair is in the states chain as a candidate, oldest first.
    states = page.get_by_test_id("update-state")
    await expect(states).to_have_count(2)
    assert await states.evaluate_all("els => els.map(e => e.dataset.memoryId)") == [
        ids["old"], ids["new"]]
    assert await states.evaluate_all("els => els.map(e => e.dataset.standing)") == [
        "outdated", "current"]
    link = page.locator(f'[data-testid="update-link"][data-update-id="{link_id}"]')
    await expect(link.get_by_test_id("update-status")).to_have_text("CANDIDATE")
    await expect(link.get_by_test_id("update-reason")).to_contain_text("tea instead of coffee")
    # Who said it: the writer's key, not the rules.
    assert links[0]["proposedBy"], links
    await expect(link.get_by_test_id("update-origin")).to_have_text(
        f"stated by {links[0]['proposedBy']}")
    await expect(link.get_by_test_id("update-disputed")).to_have_count(0)
    # The search results were asked again: the older hit is now outdated by the newer.
    await expect(old_hit).to_have_attribute("data-outdated-by", ids["new"])
    # So was the neighbourhood: the graph draws the UPDATES link, newer → older.
    await drawn_edge(page, "UPDATES", ids["new"], ids["old"])
    await shot(page, "31-proposed")

    # Confirm, where every candidate is decided: the older memory is SUPERSEDED, and
    # no longer offered (only active memories are).
    await link.get_by_test_id("update-confirm").click()
    await expect(link.get_by_test_id("update-status")).to_have_text("CONFIRMED")
    assert await states.evaluate_all("els => els.map(e => e.dataset.standing)") == [
        "superseded", "current"]
    await expect(section.locator(
        f'[data-testid="may-replace-item"][data-memory-id="{ids["old"]}"]')).to_have_count(0)
    older = (await ok(STATUS, ns=namespace, id=ids["old"]))["memory"]
    assert older == {"status": "SUPERSEDED", "supersededBy": ids["new"]}
    await shot(page, "32-confirmed")

    # Every request of the page said it does not recall (looking is not recalling),
    # the new ones too.
    sent = [(r.post_data or "", r.headers) for r in calls]
    assert any("query MayReplace" in body for body, _ in sent)
    assert any("mutation Propose" in body for body, _ in sent)
    assert all(h.get("x-memlattice-record-access") == "false" for _, h in sent), \
        [body[:40] for body, h in sent if h.get("x-memlattice-record-access") != "false"]

    foreign = [url for url in requests if not url.startswith(live)]
    assert not foreign, f"the page loaded from elsewhere: {foreign}"
    # The namespace picker asks once before the key is typed (401); nothing else may fail.
    problems = unexpected(problems)
    assert not problems, f"console errors or CSP violations: {problems}"
    await page.close()
