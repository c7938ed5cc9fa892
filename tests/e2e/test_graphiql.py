"""GraphiQL at GET /graphql works offline: its page comes from the project's bundle.

Strawberry's own page loads React, GraphiQL and their styles from a CDN, so
without internet it stayed a blank "Loading..." (issue 16, item 1). Here Chromium
has no network beyond the service: every request to another origin is aborted
(and recorded), the page must still render GraphiQL's editor, fetch the schema
and run a query with the key the explorer keeps, under the explorer's
Content-Security-Policy, which must never fire.
"""

from __future__ import annotations

from playwright.async_api import Browser, BrowserContext, Page, Route, expect

from tests.e2e.explorer_support import call, shot
from tests.e2e.test_explorer import keys  # noqa: F401  (a fixture)

WRITE = """mutation($input: MemoryInput!) { writeMemory(input: $input) { id } }"""


async def offline_page(chromium: Browser, service: str, key: str, elsewhere: list[str],
                       problems: list[str]) -> tuple[BrowserContext, Page]:
    """A page with no network beyond the service, holding the explorer's key."""
    context = await chromium.new_context(viewport={"width": 1400, "height": 900})

    async def only_the_service(route: Route) -> None:
        if route.request.url.startswith(service):
            await route.continue_()
        else:  # no internet: what would have gone out is recorded and refused
            elsewhere.append(route.request.url)
            await route.abort("internetdisconnected")

    await context.route("**/*", only_the_service)
    await context.add_init_script(
        f"sessionStorage.setItem('memlattice.explorer.apiKey', {key!r})")
    page = await context.new_page()
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    return context, page


EDITOR = "document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror"


async def set_query(page: Page, text: str) -> None:
    """Replace the query, and wait until GraphiQL has parsed it (it does so on a debounce,
    and picks the transport from the parsed operation: HTTP, or the WebSocket)."""
    await page.evaluate(f"text => {EDITOR}.setValue(text)", text)
    await page.wait_for_function(
        f"text => {EDITOR}.documentAST && {EDITOR}.documentAST.loc.source.body === text", arg=text)


async def test_graphiql_renders_its_editor_and_runs_a_query_offline(
    live: str, keys: dict[str, str], browser: Browser,  # noqa: F811
) -> None:
    elsewhere: list[str] = []
    problems: list[str] = []
    # The key the explorer keeps for the tab, which GraphiQL's headers start from.
    context, page = await offline_page(browser, live, keys["reader"], elsewhere, problems)
    page.on("response", lambda r: problems.append(
        f"{r.status} {r.request.method} {r.url} {r.request.headers.get('authorization')}")
        if r.status >= 400 else None)
    try:
        response = await page.goto(f"{live}/graphql")
        assert response is not None and response.status == 200
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "font-src 'self'" in csp

        editor = page.locator(".graphiql-query-editor .CodeMirror")
        await expect(editor).to_be_visible()
        await expect(page.get_by_text("Loading GraphiQL")).to_have_count(0)

        # The schema came through the key: the documentation explorer lists the root types.
        await set_query(page, "{ __schema { queryType { name } } }")
        async with page.expect_response(lambda r: r.url.endswith("/graphql")
                                        and r.request.method == "POST") as answered:
            await page.locator(".graphiql-execute-button").click()
        assert (await answered.value).request.headers["authorization"] == (
            f"Bearer {keys['reader']}")
        await expect(page.locator(".graphiql-response")).to_contain_text('"name": "Query"')
        await shot(page, "graphiql")
    finally:
        await context.close()
    assert elsewhere == [], f"GraphiQL reached beyond the service: {elsewhere}"
    assert not problems, problems


async def test_graphiql_runs_a_subscription_over_the_websocket(
    live: str, keys: dict[str, str], browser: Browser,  # noqa: F811
) -> None:
    """Subscriptions work from GraphiQL too: graphql-ws is bundled, and the key from the
    headers goes into `connection_init`, where the server reads it."""
    elsewhere: list[str] = []
    problems: list[str] = []
    context, page = await offline_page(browser, live, keys["reader"], elsewhere, problems)
    try:
        await page.goto(f"{live}/graphql")
        await expect(page.locator(".graphiql-query-editor .CodeMirror")).to_be_visible()
        await set_query(page, 'subscription Live { memoryEvents(namespace: "'
                              + keys["namespace"] + '") { kind namespace } }')
        await page.locator(".graphiql-execute-button").click()
        response = page.locator(".graphiql-response")
        await expect(response).to_contain_text('"kind": "SUBSCRIBED"')
        await call(live, keys["admin"], WRITE, {"input": {
            "namespace": keys["namespace"], "content": "seen live in GraphiQL"}})
        await expect(response).to_contain_text('"kind": "WRITTEN"')
        await shot(page, "graphiql-subscription")
    finally:
        await context.close()
    assert elsewhere == [], f"GraphiQL reached beyond the service: {elsewhere}"
    assert not problems, problems
