"""The update judge's tests' fake model and app (tests/integration/test_update_judge*.py).

The fake model knows one thing: where Ines lives. Shown a new memory that names a
city and an offer that names another, it says the new one replaces the offer
(attribute "home city", confidence 0.9); it answers anything else with an empty
list.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memlattice.core.settings import FactsLLMSettings, Settings
from memlattice.server.app import runtime_of
from memlattice.services.update_judge import UpdateJudge
from tests._fake_endpoint import serving
from tests.integration._apps import app_with

BLOCK = re.compile(r"^(?:New memory (\d+)|  (\d+[a-z])) \(said [^)]*\): (.*)$")
CITIES = ("Bergen", "Tromsø", "Oslo")

WRITE = """mutation($input: MemoryInput!) { writeMemory(input: $input) { id } }"""
UPDATES = """query($ns: String!) { memoryUpdates(namespace: $ns, statuses: [CANDIDATE, CONFIRMED]) {
  id status kind confidence reason attribute proposedBy disputedBy
  newer { id } older { id status } } }"""

class FakeJudge:
    """What the fake model was shown, and how it should answer next."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.mode = "judge"  # or "down", "garbage", "silent" (names nothing)

    async def chat(self, request: Request) -> Response:
        body = await request.json()
        shown = body["messages"][-1]["content"]
        self.prompts.append(shown)
        if self.mode == "down":
            return JSONResponse({"error": {"message": "down"}}, status_code=400)
        content = "no JSON here" if self.mode == "garbage" else json.dumps(
            {"replaces": [] if self.mode == "silent" else self.verdicts(shown)})
        return JSONResponse({
            "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": content}}]})

    @staticmethod
    def verdicts(shown: str) -> list[dict[str, Any]]:
        found, city = [], None
        for line in shown.splitlines():
            match = BLOCK.match(line)
            if match is None:
                continue
            named = next((c for c in CITIES if c in match.group(3)), None)
            if match.group(1):
                city = named
            elif city and named and named != city:
                found.append({"earlier": match.group(2), "attribute": "home city",
                              "confidence": 0.9})
        return found


@pytest.fixture(scope="module")
def judge() -> Iterator[tuple[FakeJudge, str]]:
    fake = FakeJudge()
    with serving(Route("/v1/chat/completions", fake.chat, methods=["POST"])) as url:
        yield fake, url + "/v1"


class JudgedApp:
    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.runtime = runtime_of(client.app)  # type: ignore[attr-defined]

    @property
    def judge(self) -> UpdateJudge:
        assert self.runtime.update_judge is not None
        return self.runtime.update_judge

    async def ok(self, query: str, variables: dict[str, Any],
                 key: str | None = None) -> dict[str, Any]:
        headers = {"authorization": f"Bearer {key}"} if key else {}
        body: dict[str, Any] = (await self.client.post(
            "/graphql", json={"query": query, "variables": variables},
            headers=headers)).json()
        assert not body.get("errors"), body
        return body["data"]  # type: ignore[no-any-return]

    async def write(self, namespace: str, content: str, at: str, key: str | None = None,
                    **fields: Any) -> str:
        done = await self.ok(WRITE, {"input": {"namespace": namespace, "content": content,
                                               "now": at, **fields}}, key)
        await self.judge.drain()
        return str(done["writeMemory"]["id"])

    async def links(self, namespace: str, key: str | None = None) -> list[dict[str, Any]]:
        return list((await self.ok(UPDATES, {"ns": namespace}, key))["memoryUpdates"])

    async def waiting(self, namespace: str) -> int:
        """The namespace's memories queued for judging."""
        return await self.judge.queue.graph.count(namespace)

    def outcomes(self, outcome: str) -> float:
        value = self.client.app.state.metrics.registry.get_sample_value(  # type: ignore
            "memlattice_update_judge_answers_total", {"outcome": outcome})
        return float(value or 0.0)


async def settle_all(app: JudgedApp, namespace: str) -> None:
    """Take the namespace's memories out of the queue."""
    graph = app.judge.queue.graph
    rows = await graph.client.write(("MATCH (m:Unjudged) WHERE m.namespace = $ns"
                                     " RETURN collect(m.id) AS ids", {"ns": namespace}))
    await graph.settle(list(rows[0]["ids"]))


@asynccontextmanager
async def judged_app(settings: Settings, url: str, judging: dict[str, Any] | None = None,
                     **overrides: Any) -> AsyncIterator[JudgedApp]:
    """The write-side LLM on, judging only (no session facts are asked of this fake:
    it answers any prompt as a judge, which session facts would read as no facts);
    `judging`: more FactsLLMSettings (the queue's retries, say)."""
    configured = FactsLLMSettings(model="judge-test", base_url=url, **(judging or {}))
    patient = settings.limits.model_copy(update={"request_timeout_s": 600.0})
    async with app_with(settings, facts_llm=configured, limits=patient,
                        **overrides) as client:
        yield JudgedApp(client)


async def eventually(check: Callable[[], Awaitable[bool]], *, within_s: float = 180.0) -> None:
    """Poll `check` until it holds; the deadline is generous (a busy machine), never
    what the test measures."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while not await check():
        assert loop.time() < deadline, "never happened"
        await asyncio.sleep(0.2)
