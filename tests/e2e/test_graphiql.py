"""GraphiQL at GET /graphql works offline: its page comes from the project's bundle.

Strawberry's own page loads React, GraphiQL and their styles from a CDN, so
without internet it stayed a blank "Loading..." (issue 16, item 1). Here Chromium
has no network beyond the service: every request to another origin is aborted
(and recorded), the page must still render GraphiQL's editor, fetch the schema
and run a query with the key the explorer keeps, under the explorer's
Content-Security-Policy, which must never fire.
"""

from __future__ import annotations

from playwright.async_api import Browser, Route, expect

from tests.e2e.test_explorer import browser, keys, live, shot  # noqa: F401  (fixtures)


async def test_graphiql_renders_its_editor_and_runs_a_query_offline(
    live: str, keys: dict[str, str], browser: Browser,  # noqa: F811
) -> None:
    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    elsewhere: list[str] = []
    problems: list[str] = []

    async def only_the_service(route: Route) -> None:
        if route.request.url.startswith(live):
            await route.continue_()
        else:  # no internet: what would have gone out is recorded and refused
            elsewhere.append(route.request.url)
            await route.abort("internetdisconnected")

    await context.route("**/*", only_the_service)
    # The key the explorer keeps for the tab, which GraphiQL's headers start from.
    await context.add_init_script(
        f"sessionStorage.setItem('memlattice.explorer.apiKey', {keys['reader']!r})")
    page = await context.new_page()
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))
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
        await page.evaluate("""() => document.querySelector(
            '.graphiql-query-editor .CodeMirror').CodeMirror.setValue(
            '{ __schema { queryType { name } } }')""")
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
