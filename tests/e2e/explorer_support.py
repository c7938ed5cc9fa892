"""Helpers of the explorer's end-to-end tests: Chromium, keys, GraphQL calls
for seeding and checking behind the page's back, screenshots, the graph's state."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Page, expect

from memlattice.core.settings import Settings
from memlattice.graph.client import GraphClient
from memlattice.graph.keys import ApiKeyGraph
from memlattice.services.apikeys import KeySpec, create_key

# Outside the repository: look at them after changing the page.
ARTIFACTS = Path(os.environ.get("MEMLATTICE_SCREENSHOTS")
                 or Path(tempfile.gettempdir()) / "memlattice-explorer")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]

WRITE = """mutation($input: MemoryInput!) { writeMemory(input: $input) { id createdAt } }"""
WRITE_MANY = """mutation($inputs: [MemoryInput!]!) { writeMemories(inputs: $inputs) { id } }"""
SUPERSEDE = """mutation($id: ID!, $memory: MemoryInput!) {
  supersedeMemory(id: $id, memory: $memory) { current { id createdAt } } }"""
ADD_EDGES = """mutation($ns: String!, $inputs: [EdgeSpecInput!]!) {
  addEdges(namespace: $ns, inputs: $inputs) { id } }"""
ACCESS_COUNT = """query($ns: String!, $id: ID!) { memory(namespace: $ns, id: $id) { accessCount } }"""


def chromium_executable() -> str:
    path = os.environ.get("MEMLATTICE_CHROMIUM") or shutil.which("chromium") or ""
    if not path or not os.access(path, os.X_OK):
        pytest.fail("Chromium is missing: `apt-get install chromium` (./dev test does it as root)"
                    " or point MEMLATTICE_CHROMIUM at a Chromium binary")
    return path


async def make_keys(settings: Settings, namespaces: tuple[str, ...]) -> tuple[str, str]:
    """(an admin key to seed with, a read-only key for the browser bound to `namespaces`)."""
    admin, reader = await create_keys(settings, (
        KeySpec(name="e2e-seed", namespaces=None, admin=True),
        KeySpec(name="e2e-explorer", namespaces=namespaces)))
    return admin, reader


async def create_keys(settings: Settings, specs: tuple[KeySpec, ...]) -> list[str]:
    """One key per spec, straight in the database (as `memlattice keys create` does)."""
    client = GraphClient.connect(settings.neo4j.uri or "", settings.neo4j.user,
                                 settings.neo4j.password.get_secret_value(),
                                 settings.neo4j.database)
    try:
        graph = ApiKeyGraph(client)
        return [(await create_key(graph, spec))[1] for spec in specs]
    finally:
        await client.close()


async def call(url: str, admin_key: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    """One GraphQL operation as an agent would send it (its searches count as recalls)."""
    async with httpx.AsyncClient(base_url=url, timeout=60, headers={
            "authorization": f"Bearer {admin_key}", "x-memlattice-actor": "e2e-seed"}) as http:
        body = (await http.post("/graphql", json={"query": query, "variables": variables})).json()
    assert not body.get("errors"), body
    data: dict[str, Any] = body["data"]
    return data


async def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    await page.screenshot(path=str(path))
    print(f"screenshot: {path}")


def unexpected(problems: list[str]) -> list[str]:
    """The console errors a test must not see. Chromium logs every 401 and 429 answer
    as "Failed to load resource"; a refused key (401) is what some tests do on
    purpose, and a 429 is the server asking the page to wait its turn, which the page
    does (explorer/src/api.ts `graphql`): on a machine with two cores a process is
    busy with one operation in flight, and then a key with several waits for another's."""
    return [p for p in problems if "status of 401" not in p and "status of 429" not in p]


async def graph_state(page: Page) -> dict[str, Any]:
    state: dict[str, Any] = await page.evaluate("""() => {
        const cy = window.memlatticeExplorer.graph.cy;
        return {
            nodes: Object.fromEntries(cy.nodes().map(n => [n.id(), n.data()])),
            edges: cy.edges().map(e => ({type: e.data('type'), source: e.data('source'),
                                         target: e.data('target')})),
        };
    }""")
    return state


async def drawn_edge(page: Page, type: str, source: str, target: str,
                     label: str | None = None) -> None:
    """Wait until the graph draws this edge (labelled `label`, when given). After a
    decision or a proposal the page redraws the neighbourhood on its own time, and
    `data-busy` may still read "false" from before the redraw began, so a read at
    once can see the old graph, or none (a CI run saw no edges at all)."""
    await page.wait_for_function(
        """([type, source, target, label]) => {
            const cy = window.memlatticeExplorer?.graph?.cy;
            return !!cy && cy.edges().some(e => e.data('type') === type
                && e.data('source') === source && e.data('target') === target
                && (label === null || e.data('label') === label));
        }""", arg=[type, source, target, label], timeout=60_000)


async def click_node(page: Page, node_id: str) -> None:
    """Clicks a node where Chromium draws it, like a user would."""
    box = await page.get_by_test_id("graph").bounding_box()
    assert box is not None
    position = await page.evaluate(
        "id => window.memlatticeExplorer.graph.cy.getElementById(id).renderedPosition()", node_id)
    await page.mouse.click(box["x"] + position["x"], box["y"] + position["y"])


async def search_and_open(page: Page, query: str, memory_id: str) -> None:
    """Search the explorer for `query`, check `memory_id` is among the hits, open it."""
    await page.get_by_test_id("query").fill(query)
    async with page.expect_response(lambda r: r.url.endswith("/graphql")
                                    and "query Search" in (r.request.post_data or ""),
                                    timeout=120_000) as answered:
        await page.get_by_test_id("search").click()
    body = await (await answered.value).json()
    assert not body.get("errors"), body
    shown = [hit["memory"]["id"] for hit in body["data"]["search"]]
    assert memory_id in shown, (memory_id, body)
    await page.locator(f'[data-testid="result"][data-memory-id="{memory_id}"]').click()
    await expect(page.get_by_test_id("detail")).to_have_attribute("data-memory-id", memory_id)


STATUS = """query($ns: String!, $id: ID!) { memory(namespace: $ns, id: $id) { status supersededBy } }"""


async def seed_reader_writer_keys(settings: Settings, namespace: str) -> list[str]:
    """An admin key to seed with, and a read-only and a writing key of `namespace`,
    as the explorer's update tests use them."""
    return await create_keys(settings, (
        KeySpec(name="e2e-seed", namespaces=None, admin=True),
        KeySpec(name="e2e-explorer", namespaces=(namespace,)),
        KeySpec(name="e2e-explorer-writer", namespaces=(namespace,), can_write=True)))
