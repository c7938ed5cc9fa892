"""Rerankers: the registry, and the OpenAI-compatible `/rerank` client against a
real HTTP server on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from memlattice.core.errors import Unavailable, ValidationError
from memlattice.search.rerank import RerankerRegistry, http_reranker
from tests._fake_endpoint import serving

SEEN: list[dict[str, Any]] = []


async def rerank(request: Request) -> JSONResponse:
    body = await request.json()
    SEEN.append({"body": body, "auth": request.headers.get("authorization")})
    if body["query"] == "fail":
        return JSONResponse({"error": "boom"}, status_code=500)
    # Relevance = how many query words the document contains; results out of order.
    words = set(body["query"].split())
    results = [{"index": i, "relevance_score": float(len(words & set(doc.split())))}
               for i, doc in enumerate(body["documents"])]
    return JSONResponse({"results": list(reversed(results))})


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with serving(Route("/v1/rerank", rerank, methods=["POST"])) as url:
        yield url + "/v1"


async def test_http_reranker_maps_scores_back_to_documents(base_url: str) -> None:
    reranker = http_reranker(base_url, "tiny-rerank", api_key="secret")
    scores = await reranker("green tea", [("a", "black coffee"), ("b", "green tea please"),
                                          ("c", "tea")])
    assert scores == [0.0, 2.0, 1.0]
    assert SEEN[-1]["body"]["model"] == "tiny-rerank"
    assert SEEN[-1]["auth"] == "Bearer secret"
    assert await reranker("anything", []) == []


async def test_http_reranker_failure_is_unavailable(base_url: str) -> None:
    with pytest.raises(Unavailable, match="rerank endpoint"):
        await http_reranker(base_url, "m")("fail", [("a", "x")])


def test_unknown_reranker_names_the_known_ones() -> None:
    registry = RerankerRegistry()

    async def noop(query: str, docs: Any) -> list[float]:
        return [0.0] * len(docs)

    registry.register("noop", noop)
    assert registry.get("noop") is noop
    with pytest.raises(ValidationError, match="noop"):
        registry.get("other")
