"""The two reads of a recall: its candidates, then its hits whole.

`MemoryGraph` takes these from here (graph.memories stays a module of one
size); the statements are graph.recall_query's, their rows are decoded by
graph.recall_rows.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from memlattice.core.auth import Tenant
from memlattice.core.model import MemoryFilter
from memlattice.core.search_config import ExpansionConfig
from memlattice.core.vector_spaces import VectorSpace
from memlattice.graph import recall_query
from memlattice.graph.client import GraphClient
from memlattice.graph.memory_filters import fenced
from memlattice.graph.recall_plan import whole_rows
from memlattice.graph.recall_rows import Hit, SearchResult, hit_rows, search_result


class RecallReads:
    """A recall's reads, for a class that holds the graph client."""

    client: GraphClient

    async def search(
        self, flt: MemoryFilter, *, tenant: Tenant, now: datetime,
        vector: list[float] | None, lucene: str | None, candidates: int,
        expansion: ExpansionConfig | None,
        with_embeddings: bool, needed: int = 10, space: VectorSpace | None = None,
        first_try: bool = False, context_hops: int = 0, cross_similarity: bool = False,
        entities: bool = False,
    ) -> SearchResult:
        """One recall round trip (graph.recall_query); `first_try` marks a small pool
        whose shortfall the caller answers with a second, full search."""
        if vector is None and lucene is None:
            return SearchResult()
        flt = fenced(flt, tenant)
        records = await self.client.read(recall_query.search(
            flt, tenant=tenant, now=now, vector=vector, lucene=lucene, candidates=candidates,
            expansion=expansion, with_embeddings=with_embeddings, needed=needed, space=space,
            first_try=first_try, context_hops=context_hops, cross_similarity=cross_similarity,
            entities=entities,
        ))
        return replace(search_result(records[0]), whole=whole_rows(flt))

    async def hits(self, flt: MemoryFilter, *, tenant: Tenant, now: datetime,
                   eids: list[str]) -> dict[str, Hit]:
        """The hits of a search whole, by element id (graph.recall_query.hits): those
        that still pass its filter, with their conflicts."""
        if not eids:
            return {}
        records = await self.client.read(recall_query.hits(
            fenced(flt, tenant), tenant=tenant, now=now, eids=eids))
        return hit_rows(records[0])
