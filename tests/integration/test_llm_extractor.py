"""The optional LLM extractor, against a real OpenAI-compatible server on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from memlattice.core.auth import Tenant
from memlattice.core.records.config import ConsolidationSettings
from memlattice.server.app import runtime_of
from memlattice.services.consolidation import Consolidator
from memlattice.services.llm_extract import openai_extractor, parse_observations
from tests._fake_endpoint import serving
from tests.conftest import GraphQLClient
from tests.integration._knowledge import LIST_RECORDS, write_record

CALLS: list[dict[str, Any]] = []


async def chat(request: Request) -> JSONResponse:
    body = await request.json()
    CALLS.append(body)
    episode = body["messages"][-1]["content"]
    answer = {"observations": [
        {"subject": "release", "predicate": "is shipped by",
         "object": "kubectl" if "kubectl" in episode else "hand"},
        {"subject": "", "predicate": "broken", "object": "dropped"},
    ]}
    return JSONResponse({
        "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": json.dumps(answer)}}],
    })


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with serving(Route("/v1/chat/completions", chat, methods=["POST"])) as url:
        yield url + "/v1"


def test_extractor_is_off_by_default_and_drops_malformed_answers() -> None:
    assert openai_extractor(ConsolidationSettings()) is None
    assert parse_observations("not json") == []
    assert parse_observations('{"observations": "nope"}') == []
    found = parse_observations(json.dumps({"observations": [
        {"subject": "a", "predicate": "b", "object": "c", "confidence": 0.7},
        {"subject": "a", "predicate": "b"}, {"subject": "a", "predicate": "b", "object": "c",
                                             "confidence": 3}]}))
    assert [(o.subject, o.confidence) for o in found] == [("a", 0.7)]


async def test_extracted_observations_become_facts_once(
    gql: GraphQLClient, namespace: str, session_app: Any, base_url: str
) -> None:
    episode = {"outcome": "success", "toolGraph": [{"id": "a", "tool": "kubectl"}],
               "timeline": [{"time": "2026-01-01T00:00:00Z", "kind": "deploy",
                             "summary": "shipped the release"}]}
    await write_record(gql, namespace, "EPISODIC", episode)
    await write_record(gql, namespace, "EPISODIC", {**episode, "outcome": "failure"})
    settings = ConsolidationSettings(llm_model="extractor-test", llm_base_url=base_url)
    consolidator = Consolidator(runtime_of(session_app[0]).service, settings,
                                extractor=openai_extractor(settings))
    CALLS.clear()
    try:
        await check_extraction(gql, namespace, consolidator)
    finally:
        await consolidator.aclose()


async def check_extraction(gql: GraphQLClient, namespace: str,
                           consolidator: Consolidator) -> None:
    first = await consolidator.consolidate(Tenant.system(namespace))
    assert len(CALLS) == 1  # only the successful episode is read
    assert CALLS[0]["model"] == "extractor-test" and CALLS[0]["temperature"] == 0
    assert len(first.created["semantic"]) == 1
    facts = (await gql.ok(LIST_RECORDS, {"ns": namespace, "types": ["SEMANTIC"]}))["records"]
    assert [f["payload"]["object"] for f in facts] == ["kubectl"]
    second = await consolidator.consolidate(Tenant.system(namespace))
    assert len(CALLS) == 1 and second.changed is False  # the answer was kept, not re-asked
