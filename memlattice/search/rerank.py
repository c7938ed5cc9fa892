"""Rerankers: a hook that reorders the head of a result list.

A reranker is any async callable `(query, [(id, text), ...]) -> [score, ...]`
registered under a name in the server (`RerankerRegistry.register`), or an
OpenAI-compatible `/rerank` endpoint (the Cohere/Jina/vLLM shape:
`{model, query, documents}` in, `{results: [{index, relevance_score}]}` out).
A search names the reranker it wants; an unknown name is a VALIDATION error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import httpx

from memlattice.core.errors import Unavailable, ValidationError

Reranker = Callable[[str, Sequence[tuple[str, str]]], Awaitable[list[float]]]


class RerankerRegistry:
    def __init__(self) -> None:
        self._rerankers: dict[str, Reranker] = {}

    def register(self, name: str, reranker: Reranker) -> None:
        self._rerankers[name] = reranker

    def names(self) -> list[str]:
        return sorted(self._rerankers)

    def get(self, name: str) -> Reranker:
        try:
            return self._rerankers[name]
        except KeyError:
            known = ", ".join(self.names()) or "none are registered"
            raise ValidationError(f"unknown reranker {name!r} ({known})",
                                  field="reranker") from None


def http_reranker(base_url: str, model: str, api_key: str | None = None,
                  timeout_s: float = 10.0) -> Reranker:
    """A reranker backed by an OpenAI-compatible `/rerank` endpoint."""
    url = base_url.rstrip("/") + "/rerank"
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}

    async def rerank(query: str, documents: Sequence[tuple[str, str]]) -> list[float]:
        if not documents:
            return []
        body = {"model": model, "query": query, "documents": [text for _, text in documents]}
        try:
            async with httpx.AsyncClient(timeout=timeout_s) as client:
                response = await client.post(url, json=body, headers=headers)
                response.raise_for_status()
                results = response.json()["results"]
        except (httpx.HTTPError, KeyError, ValueError) as exc:
            raise Unavailable(f"the rerank endpoint at {base_url} failed: {type(exc).__name__}",
                              retryable=True) from exc
        scores = [0.0] * len(documents)
        for item in results:
            scores[int(item["index"])] = float(item["relevance_score"])
        return scores

    return rerank
