"""The graph explorer, end to end: the real app on a socket, driven by headless Chromium.

Seeds a namespace through GraphQL (a SUPERSEDES chain of three versions, RELATED,
SUPPORTS and CONTRADICTS relationships), then in the browser: the API key field,
a search with score bars, a result's detail with its audit history, the
neighbourhood graph expanded by clicking a node, and a walk down the supersede
chain; then that none of it counted as a recall. Screenshots land in
`$TMPDIR/memlattice-explorer/` (tests.e2e.explorer_support.ARTIFACTS).

Chromium is Debian's `chromium` (`./dev test` installs it when it can); the test
fails, never skips, when it or the built bundle is missing. Every request the
page makes must stay on the service's origin, and the Content-Security-Policy
must never fire: that is the proof that nothing comes from a CDN.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest
from playwright.async_api import Browser, expect

from memlattice.core.settings import Settings
from tests.e2e.explorer_support import (
    ACCESS_COUNT,
    ADD_EDGES,
    SUPERSEDE,
    WRITE_MANY,
    call,
    click_node,
    graph_state,
    make_keys,
    shot,
    unexpected,
)

expect.set_options(timeout=20_000)  # a shared CI machine can be slow; failures still fail

AGENT_SEARCH = """query($input: SearchInput!) { search(input: $input) { memory { id } } }"""


@pytest.fixture(scope="module")
async def keys(settings: Settings, live: str) -> dict[str, str]:
    """An admin key to seed with, and a read-only key for the browser, bound to two namespaces."""
    namespace, hub = f"e2e/{uuid.uuid4().hex[:12]}", f"e2e/{uuid.uuid4().hex[:12]}"
    admin, reader = await make_keys(settings, (namespace, hub))
    return {"namespace": namespace, "hub": hub, "admin": admin, "reader": reader}


async def seed(url: str, namespace: str, admin_key: str) -> dict[str, str]:
    """Writes the scene through the public API; returns the ids by name."""

    async def ok(query: str, variables: dict[str, Any]) -> dict[str, Any]:
        return await call(url, admin_key, query, variables)

    def memory(content: str, **fields: Any) -> dict[str, Any]:
        return {"namespace": namespace, "content": content, **fields}

    written = (await ok(WRITE_MANY, {"inputs": [
        memory("Alice lives in Lisbon", key="alice.home", tags=["alice", "home"]),
        memory("Alice works as a marine biologist at the aquarium", tags=["alice", "work"]),
        memory("Alice has never lived outside Berlin", tags=["alice"], memoryType="claim"),
        memory("Porto is a coastal city in the north of Portugal", tags=["places"]),
        memory("Coastal cities in Portugal have mild, rainy winters", tags=["places"]),
    ]}))["writeMemories"]
    v1, work, berlin, porto, winters = (m["id"] for m in written)
    v2 = (await ok(SUPERSEDE, {"id": v1, "memory": memory(
        "Alice lives in Porto since 2024", key="alice.home",
        tags=["alice", "home"])}))["supersedeMemory"]["current"]["id"]
    v3 = (await ok(SUPERSEDE, {"id": v2, "memory": memory(
        "Alice lives in Porto with her partner, near the river", key="alice.home",
        tags=["alice", "home"])}))["supersedeMemory"]["current"]["id"]
    await ok(ADD_EDGES, {"ns": namespace, "inputs": [
        {"sourceId": v3, "targetId": work, "type": "RELATED"},
        {"sourceId": berlin, "targetId": v3, "type": "CONTRADICTS"},
        {"sourceId": porto, "targetId": v3, "type": "SUPPORTS"},
        {"sourceId": porto, "targetId": winters, "type": "RELATED"},
    ]})
    return {"v1": v1, "v2": v2, "v3": v3, "work": work, "berlin": berlin, "porto": porto,
            "winters": winters}


async def test_explorer_search_detail_graph_and_chain(
    live: str, keys: dict[str, str], browser: Browser
) -> None:
    namespace = keys["namespace"]
    ids = await seed(live, namespace, keys["admin"])
    page = await browser.new_page(viewport={"width": 1600, "height": 1000})
    requests: list[str] = []
    problems: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))

    response = await page.goto(f"{live}/explorer/?namespace={namespace}")
    assert response is not None and response.status == 200
    csp = response.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp

    # Without a key the server refuses, and the page says so with the stable code.
    await page.get_by_test_id("tab-search").click()
    await page.get_by_test_id("query").fill("where does Alice live?")
    await page.get_by_test_id("search").click()
    await expect(page.get_by_test_id("error")).to_contain_text("UNAUTHENTICATED")

    # With the key (kept in sessionStorage, sent as a Bearer header) the search runs.
    await page.get_by_test_id("api-key").fill(keys["reader"])
    async with page.expect_request(lambda r: r.url.endswith("/graphql")) as sent:
        await page.get_by_test_id("search").click()
    headers = (await sent.value).headers
    assert headers["authorization"] == f"Bearer {keys['reader']}"
    assert headers["x-memlattice-record-access"] == "false"  # a person, not an agent
    results = page.get_by_test_id("result")
    await expect(results.first).to_be_visible()
    await expect(page.get_by_test_id("error")).to_have_count(0)
    shown = await results.evaluate_all("els => els.map(e => e.dataset.memoryId)")
    assert ids["v3"] in shown
    assert ids["v1"] not in shown and ids["v2"] not in shown  # superseded leave search
    top = results.first
    for part in ("final", "similarity", "fts", "recency", "popularity", "graph", "boost"):
        await expect(top.locator(f'[data-part="{part}"]')).to_have_count(1)
    widths = await top.locator(".bar-fill").evaluate_all(
        "els => els.map(e => e.getBoundingClientRect().width)")
    assert max(widths) > 0, "the score bars are drawn"
    assert await page.evaluate(
        "k => sessionStorage.getItem('memlattice.explorer.apiKey') === k", keys["reader"])
    await shot(page, "01-results")

    # Open the current version: detail, audit history, chain, and its neighbourhood.
    await page.locator(f'[data-testid="result"][data-memory-id="{ids["v3"]}"]').click()
    detail = page.get_by_test_id("detail")
    await expect(detail).to_have_attribute("data-memory-id", ids["v3"])
    await expect(page.get_by_test_id("detail-content")).to_have_text(
        "Alice lives in Porto with her partner, near the river")
    await expect(page.get_by_test_id("detail-status")).to_have_text("ACTIVE")
    audit = page.get_by_test_id("audit").locator("tbody tr")
    await expect(audit.first).to_be_visible()
    operations = await audit.evaluate_all("rows => rows.map(r => r.dataset.operation)")
    assert operations, "the audit history is listed"
    chain = page.get_by_test_id("chain-item")
    await expect(chain).to_have_count(3)
    assert await chain.evaluate_all("els => els.map(e => e.dataset.memoryId)") == [
        ids["v1"], ids["v2"], ids["v3"]]
    assert await chain.evaluate_all("els => els.map(e => e.dataset.status)") == [
        "SUPERSEDED", "SUPERSEDED", "ACTIVE"]
    await expect(page.get_by_test_id("conflicts")).to_contain_text("never lived outside Berlin")

    graph = page.get_by_test_id("graph")
    await expect(graph).to_have_attribute("data-busy", "false")
    await expect(graph).to_have_attribute("data-nodes", "5")  # v3, v2, work, berlin, porto
    state = await graph_state(page)
    assert set(state["nodes"]) == {ids["v3"], ids["v2"], ids["work"], ids["berlin"],
                                   ids["porto"]}
    assert ids["winters"] not in state["nodes"]
    assert state["nodes"][ids["v2"]]["status"] == "SUPERSEDED"
    assert state["nodes"][ids["berlin"]]["contradicted"] is True
    assert state["nodes"][ids["v3"]]["contradicted"] is True
    assert state["nodes"][ids["work"]]["contradicted"] is False
    assert {e["type"] for e in state["edges"]} == {"SUPERSEDES", "RELATED", "CONTRADICTS",
                                                   "SUPPORTS"}
    await shot(page, "02-detail-and-neighbourhood")

    # Expand Porto by clicking it: its other neighbour joins, and its detail opens.
    await click_node(page, ids["porto"])
    await expect(graph).to_have_attribute("data-nodes", "6")
    await expect(graph).to_have_attribute("data-busy", "false")
    await expect(detail).to_have_attribute("data-memory-id", ids["porto"])
    state = await graph_state(page)
    assert ids["winters"] in state["nodes"]
    assert state["nodes"][ids["porto"]]["expanded"] is True
    assert {"type": "RELATED", "source": ids["porto"], "target": ids["winters"]} in state["edges"]
    await shot(page, "03-expanded")

    # Walk the supersede chain: back to v3, then down to the first version.
    await page.locator(f'[data-testid="result"][data-memory-id="{ids["v3"]}"]').click()
    await expect(detail).to_have_attribute("data-memory-id", ids["v3"])
    await page.locator(f'[data-testid="chain-item"][data-memory-id="{ids["v1"]}"]').click()
    await expect(detail).to_have_attribute("data-memory-id", ids["v1"])
    await expect(page.get_by_test_id("detail-status")).to_have_text("SUPERSEDED")
    await expect(page.get_by_test_id("detail-content")).to_have_text("Alice lives in Lisbon")
    await expect(page.locator("ol.chain li.current")).to_contain_text("Alice lives in Lisbon")
    await expect(graph).to_have_attribute("data-busy", "false")
    state = await graph_state(page)
    assert state["nodes"][ids["v1"]]["focus"] is True
    assert {"type": "SUPERSEDES", "source": ids["v2"], "target": ids["v1"]} in state["edges"]
    await shot(page, "04-supersede-chain")

    # Mode and filters reach the API: semantic candidates, tagged `places` only.
    await page.get_by_test_id("mode").select_option("SEMANTIC")
    await page.get_by_text("Filters & scope").click()
    await page.get_by_test_id("tags").fill("places")
    await page.get_by_test_id("query").fill("coastal cities in Portugal")
    async with page.expect_request(lambda r: r.url.endswith("/graphql")) as sent:
        await page.get_by_test_id("search").click()
    variables = (await sent.value).post_data_json["variables"]["input"]
    assert variables["mode"] == "SEMANTIC" and variables["filter"]["tagsAny"] == ["places"]
    await expect(results).to_have_count(2)
    assert set(await results.evaluate_all("els => els.map(e => e.dataset.memoryId)")) == {
        ids["porto"], ids["winters"]}
    await shot(page, "05-filtered")

    # The namespace picker offers this key's namespaces (those holding memories), no other.
    options = page.get_by_test_id("namespace-options").locator("option")
    await expect(options.first).to_be_attached()
    offered = set(await options.evaluate_all("els => els.map(e => e.value)"))
    assert namespace in offered and offered <= {namespace, keys["hub"]}

    # None of the page's searches and reads counted as a recall. An agent's search
    # then does: once its count has landed, the page's would have landed too (the
    # counts are flushed in the order they were recorded), so the deadline only
    # bounds the wait.
    await call(live, keys["admin"], AGENT_SEARCH, {"input": {
        "filter": {"namespace": namespace, "key": "alice.home"}, "query": "Porto",
        "mode": "LEXICAL"}})
    deadline = time.monotonic() + 120
    while True:
        counted = (await call(live, keys["admin"], ACCESS_COUNT,
                              {"ns": namespace, "id": ids["v3"]}))["memory"]["accessCount"]
        if counted or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    assert counted == 1, "only the agent's search counts, not the three the page ran"
    for name in ("porto", "winters", "work", "berlin"):
        assert (await call(live, keys["admin"], ACCESS_COUNT, {"ns": namespace, "id": ids[name]})
                )["memory"]["accessCount"] == 0, name

    foreign = [url for url in requests if not url.startswith(live)]
    assert not foreign, f"the page loaded from elsewhere: {foreign}"
    problems = unexpected(problems)
    assert not problems, f"console errors or CSP violations: {problems}"
    await page.close()


async def test_a_memory_with_more_neighbours_than_the_alias_limit(
    live: str, keys: dict[str, str], browser: Browser
) -> None:
    """The page fetches neighbours in batches below the server's alias cap (30)."""
    hub_ns, leaves = keys["hub"], 45
    written = (await call(live, keys["admin"], WRITE_MANY, {"inputs": [
        {"namespace": hub_ns, "content": "Reading list of the book club", "tags": ["hub"]},
        *({"namespace": hub_ns, "content": f"Book number {i} on the reading list"}
          for i in range(leaves)),
    ]}))["writeMemories"]
    hub, others = written[0]["id"], [m["id"] for m in written[1:]]
    await call(live, keys["admin"], ADD_EDGES, {"ns": hub_ns, "inputs": [
        {"sourceId": hub, "targetId": other, "type": "RELATED"} for other in others]})

    page = await browser.new_page(viewport={"width": 1600, "height": 1000})
    await page.goto(f"{live}/explorer/?namespace={hub_ns}")
    await page.get_by_test_id("api-key").fill(keys["reader"])
    await page.get_by_test_id("tab-search").click()
    await page.get_by_text("Filters & scope").click()
    await page.get_by_test_id("tags").fill("hub")
    await page.get_by_test_id("query").fill("reading list")
    await page.get_by_test_id("search").click()
    await page.locator(f'[data-testid="result"][data-memory-id="{hub}"]').click()
    graph = page.get_by_test_id("graph")
    await expect(graph).to_have_attribute("data-nodes", str(leaves + 1))
    await expect(graph).to_have_attribute("data-edges", str(leaves))
    await expect(page.get_by_test_id("error")).to_have_count(0)
    await shot(page, "06-hub")
    await page.close()
