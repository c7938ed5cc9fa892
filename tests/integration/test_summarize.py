"""summarize: a bounded extractive bullet list plus the memories it used."""

from __future__ import annotations

from typing import Any

from memlattice.core.model import Sensitivity
from tests.conftest import GraphQLClient
from tests.integration._keys import as_key, make_key
from tests.integration._support import WRITE_MANY, code, mem

SUMMARIZE = """
query($ns: String!, $window: SummaryWindowInput) {
  summarize(namespace: $ns, window: $window) {
    text bullets { text memoryId } memories { id content }
  }
}
"""


async def seed(gql: GraphQLClient, namespace: str) -> dict[str, str]:
    rows = [
        mem(namespace, "Backups run nightly at two. They take an hour.", tags=["ops"]),
        mem(namespace, "backups run nightly at two", tags=["ops"]),
        mem(namespace, "The API is versioned by URL prefix.", tags=["api"]),
        mem(namespace, "Deploys need two approvals from maintainers.", tags=["ops"],
            summary="Two approvals per deploy."),
        mem(namespace, "Vault codes rotate weekly.", tags=["ops"], sensitivity="HIGH"),
    ]
    written = (await gql.ok(WRITE_MANY, {"inputs": rows}))["writeMemories"]
    return {m["content"]: m["id"] for m in written}


async def test_summary_is_extractive_bounded_and_deduplicated(gql: GraphQLClient,
                                                              namespace: str) -> None:
    ids = await seed(gql, namespace)
    result = (await gql.ok(SUMMARIZE, {"ns": namespace, "window": {"tags": ["ops"],
                                                                   "limit": 10}}))["summarize"]
    texts = [b["text"] for b in result["bullets"]]
    assert "Two approvals per deploy." in texts  # a memory's summary is preferred
    assert sum("ackups run nightly" in t for t in texts) == 1  # a near-copy adds no bullet
    assert "The API is versioned by URL prefix." not in texts  # outside the tag window
    assert result["text"].splitlines() == [f"- {t}" for t in texts]
    assert {m["id"] for m in result["memories"]} == {b["memoryId"] for b in result["bullets"]}
    one = (await gql.ok(SUMMARIZE, {"ns": namespace, "window": {"limit": 1}}))["summarize"]
    assert len(one["bullets"]) == 1 and len(one["memories"]) == 1
    relevant = (await gql.ok(SUMMARIZE, {"ns": namespace, "window": {
        "query": "API versioning prefix", "limit": 1}}))["summarize"]
    assert relevant["bullets"][0]["memoryId"] == ids["The API is versioned by URL prefix."]
    bad = await gql.error(SUMMARIZE, {"ns": namespace, "window": {"limit": 0}})
    assert code(bad) == "VALIDATION"


async def test_summary_respects_clearance(gql: GraphQLClient, namespace: str,
                                         graph_client: Any, session_app: Any) -> None:
    await seed(gql, namespace)
    everything = (await gql.ok(SUMMARIZE, {"ns": namespace}))["summarize"]["text"]
    assert "Vault codes rotate weekly." in everything
    secret = await make_key(graph_client, namespace, clearance=Sensitivity.LOW)
    async with as_key(session_app, secret) as low:
        for window in ({}, {"query": "vault codes rotate"}):
            text = (await low.ok(SUMMARIZE, {"ns": namespace, "window": window}))[
                "summarize"]["text"]
            assert "Vault" not in text
