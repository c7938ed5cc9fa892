"""A page on another origin uses the API in Chromium, and one not listed cannot (issue 29, item 1).

The API is served on 127.0.0.1; a blank page is served from another port and
reached as `http://frontend.test:<port>` (listed in `cors_origins`) and as
`http://elsewhere.test:<port>` (not listed); Chromium resolves both names to
127.0.0.1. From the listed origin the page runs a query, a mutation and a
subscription (graphql-transport-ws, raw, as any client library speaks it) with
an API key, and reads the exposed request id and bookmark; from the other,
fetch fails as a CORS error and the WebSocket never opens.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from playwright.async_api import Browser, async_playwright
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from memlattice.core.settings import Settings
from memlattice.server.app import create_app
from tests._live import serve_in_thread
from tests.e2e.explorer_support import CHROMIUM_ARGS, chromium_executable, make_keys

RESOLVE = "--host-resolver-rules=MAP frontend.test 127.0.0.1, MAP elsewhere.test 127.0.0.1"

# Runs inside the page: query, then subscribe, write once SUBSCRIBED, and wait
# for the write's event. Every step's outcome is returned, failures included.
SCRIPT = """async ({api, key, ns}) => {
  const out = {};
  const post = async (query, variables) => {
    try {
      const r = await fetch(api + "/graphql", {method: "POST", body: JSON.stringify({query, variables}),
        headers: {"content-type": "application/json", "authorization": "Bearer " + key}});
      return {status: r.status, body: await r.json(), requestId: r.headers.get("x-request-id"),
              bookmark: r.headers.get("x-memlattice-bookmark")};
    } catch (e) { return {failed: String(e)}; }
  };
  out.query = await post("query($ns: String!) { memories(filter: {namespace: $ns}) { totalCount } }",
                         {ns});
  out.events = [];
  out.subscription = await new Promise(resolve => {
    const timer = setTimeout(() => resolve("timed out"), 60000);
    const ws = new WebSocket(api.replace("http", "ws") + "/graphql", "graphql-transport-ws");
    ws.onopen = () => ws.send(JSON.stringify(
      {type: "connection_init", payload: {authorization: "Bearer " + key}}));
    ws.onclose = e => { clearTimeout(timer); resolve("closed " + e.code); };
    ws.onmessage = async m => {
      const message = JSON.parse(m.data);
      if (message.type === "connection_ack") {
        ws.send(JSON.stringify({id: "1", type: "subscribe", payload: {variables: {ns},
          query: "subscription($ns: String!) { memoryEvents(namespace: $ns) { kind memoryId } }"}}));
      } else if (message.type === "next") {
        const event = message.payload.data.memoryEvents;
        out.events.push(event.kind);
        if (event.kind === "SUBSCRIBED") {
          out.pending = post("mutation($input: MemoryInput!) { writeMemory(input: $input) { id } }",
                                    {input: {namespace: ns, content: "written from another origin"}});
        } else if (event.kind === "WRITTEN") {
          out.writtenId = event.memoryId;
          out.mutation = await out.pending; delete out.pending;
          clearTimeout(timer); ws.onclose = null; ws.close(); resolve("done");
        }
      } else {
        out.other = message;
      }
    };
  });
  return out;
}"""


def blank_page(request: Request) -> HTMLResponse:
    return HTMLResponse("<!doctype html><title>a frontend</title><p>frontend</p>")


@pytest.fixture(scope="module")
def servers(settings: Settings) -> Iterator[tuple[str, int]]:
    """(the API's base URL, the port of the page server)."""
    pages = Starlette(routes=[Route("/", blank_page)])
    with serve_in_thread(pages, lifespan="off") as page_url:
        port = int(page_url.rsplit(":", 1)[1])
        app = create_app(settings.model_copy(update={
            "auth_mode": "keys", "environment": "test",
            "cors_origins": [f"http://frontend.test:{port}"]}))
        with serve_in_thread(app) as api:
            yield api, port


@pytest.fixture(scope="module")
async def chromium() -> AsyncIterator[Browser]:
    # One launch for the module; `run_page` opens each page in a context of its own.
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=chromium_executable(),
                                                    args=[*CHROMIUM_ARGS, RESOLVE])
        try:
            yield launched
        finally:
            await launched.close()


async def run_page(chromium: Browser, origin: str, api: str, key: str, ns: str) -> dict[str, Any]:
    page = await chromium.new_page()
    try:
        await page.goto(origin + "/")
        result: dict[str, Any] = await page.evaluate(SCRIPT, {"api": api, "key": key, "ns": ns})
        return result
    finally:
        await page.close()


async def test_a_listed_origin_queries_writes_and_subscribes(
        servers: tuple[str, int], settings: Settings, chromium: Browser) -> None:
    api, port = servers
    ns = f"cors-{uuid.uuid4().hex[:8]}"
    admin, _ = await make_keys(settings, (ns,))
    out = await run_page(chromium, f"http://frontend.test:{port}", api, admin, ns)
    assert out["query"]["status"] == 200, out
    assert out["query"]["body"] == {"data": {"memories": {"totalCount": 0}}}, out
    assert out["query"]["requestId"], out  # an exposed header the page can read
    assert out["subscription"] == "done", out
    assert out["events"] == ["SUBSCRIBED", "WRITTEN"], out
    written = out["mutation"]
    assert written["status"] == 200 and not written["body"].get("errors"), out
    assert written["body"]["data"]["writeMemory"]["id"] == out["writtenId"]
    assert written["bookmark"], out  # a write's bookmark is readable too


async def test_an_origin_not_listed_is_refused(
        servers: tuple[str, int], settings: Settings, chromium: Browser) -> None:
    api, port = servers
    ns = f"cors-{uuid.uuid4().hex[:8]}"
    admin, _ = await make_keys(settings, (ns,))
    out = await run_page(chromium, f"http://elsewhere.test:{port}", api, admin, ns)
    assert "Failed to fetch" in out["query"]["failed"], out
    assert out["subscription"] == "closed 1006", out  # the handshake was refused
    assert out["events"] == [] and "mutation" not in out, out
