"""The explorer on a key with tight limits, end to end in Chromium: when the server
answers 429 (RATE_LIMITED, `Retry-After`), the page waits and asks again, so a
person sees the memory and its neighbourhood, not an error.

Opening a memory sends several requests at once (its detail, its states, the
memories it may replace, its neighbourhood). A key allowed one request a second
with a burst of two has most of them refused at first; a server whose process is
busy refuses the same way (HTTP 429, limit `share`) whenever another key is
active, which is how a CI run once saw the graph left empty.
"""

from __future__ import annotations

import uuid

from playwright.async_api import Browser, Response, expect

from memlattice.core.fairness import KeyLimits
from memlattice.core.settings import Settings
from memlattice.services.apikeys import KeySpec
from tests.e2e.explorer_support import ADD_EDGES, WRITE, call, create_keys, drawn_edge, unexpected

TIGHT = KeyLimits(rate=1.0, burst=2.0)


async def test_explorer_waits_its_turn_when_the_key_is_over_its_rate(
    live: str, settings: Settings, browser: Browser
) -> None:
    namespace = f"e2e/{uuid.uuid4().hex[:12]}"
    admin, limited = await create_keys(settings, (
        KeySpec(name="e2e-seed", namespaces=None, admin=True),
        KeySpec(name="e2e-tight", namespaces=(namespace,), limits=TIGHT)))
    ids = []
    for content in ("The lighthouse keeper logs the weather at dawn.",
                    "The lighthouse lamp was converted to LED in 2019."):
        written = await call(live, admin, WRITE, {"input": {"namespace": namespace,
                                                           "content": content}})
        ids.append(written["writeMemory"]["id"])
    await call(live, admin, ADD_EDGES, {"ns": namespace, "inputs": [
        {"sourceId": ids[0], "targetId": ids[1], "type": "RELATED"}]})

    page = await browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(60_000)
    statuses: list[int] = []
    problems: list[str] = []

    def answered(response: Response) -> None:
        # Only the limited key's requests: the page may ask once before the key is
        # typed in, and that one is answered 401.
        sent_with = response.request.headers.get("authorization") or ""
        if response.url.endswith("/graphql") and limited in sent_with:
            statuses.append(response.status)

    page.on("response", answered)
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    await page.goto(f"{live}/explorer/?namespace={namespace}")
    await page.get_by_test_id("api-key").fill(limited)
    await page.get_by_test_id("tab-search").click()
    await page.get_by_test_id("query").fill("lighthouse keeper weather")
    await page.get_by_test_id("search").click()
    hit = page.locator(f'[data-testid="result"][data-memory-id="{ids[0]}"]')
    await expect(hit).to_have_count(1, timeout=60_000)
    await hit.click()

    await expect(page.get_by_test_id("detail")).to_have_attribute(
        "data-memory-id", ids[0], timeout=60_000)
    await drawn_edge(page, "RELATED", ids[0], ids[1])
    await expect(page.get_by_test_id("error")).to_have_count(0)
    assert 429 in statuses, f"the key's limit never refused the page: {statuses}"
    assert set(statuses) <= {200, 429}, statuses
    assert not unexpected(problems), problems
