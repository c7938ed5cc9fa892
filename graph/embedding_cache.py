"""The persistent half of the embedding cache (see memlattice.embeddings.cache):
vectors by (model, text digest), shared by every namespace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memlattice.graph.client import GraphClient, Query


def cache_get(*, model: str, digests: list[str]) -> Query:
    query = (
        "CYPHER 25\nUNWIND $keys AS key\n"
        "MATCH (e:EmbeddingCache {key: key})\n"
        "RETURN e.digest AS digest, e.vector AS vector"
    )
    return query, {"keys": [f"{model}|{d}" for d in digests]}


def cache_put(*, model: str, items: list[dict[str, Any]]) -> Query:
    query = (
        "CYPHER 25\nUNWIND $items AS item\n"
        "MERGE (e:EmbeddingCache {key: $model + '|' + item.digest})\n"
        "ON CREATE SET e.model = $model, e.digest = item.digest, e.vector = item.vector"
    )
    return query, {"model": model, "items": items}


class EmbeddingCacheGraph:
    """The persistent half of the embedding cache (see memlattice.embeddings.cache)."""

    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def get_many(self, model: str, digests: Sequence[str]) -> dict[str, list[float]]:
        if not digests:
            return {}
        records = await self.client.read(cache_get(model=model, digests=list(digests)))
        return {r["digest"]: list(r["vector"]) for r in records}

    async def put_many(self, model: str, items: Mapping[str, list[float]]) -> None:
        if items:
            await self.client.write(cache_put(
                model=model, items=[{"digest": d, "vector": v} for d, v in items.items()]
            ))
