"""A LlamaIndex retriever over Memlattice search.

    from llama_index.core.query_engine import RetrieverQueryEngine
    from memlattice_client import MemlatticeClient
    from memlattice_client.integrations.llamaindex import MemlatticeRetriever

    retriever = MemlatticeRetriever(MemlatticeClient(), namespace="demo", similarity_top_k=4)
    nodes = retriever.retrieve("where does Alice live?")
    engine = RetrieverQueryEngine.from_args(retriever, llm=my_llm)

Each hit is a `NodeWithScore`: a `TextNode` whose id is the memory's, text its
content and metadata what the hit says about it; the score is the search's.
Errors are the client's typed ones (`ForbiddenError`, `ValidationError`, ...),
raised from `retrieve` / `aretrieve` as LlamaIndex raises a retriever's own.
Needs the `llamaindex` extra: `pip install './client[llamaindex]'`.
"""

from __future__ import annotations

import asyncio
from typing import Any

try:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ImportError("MemlatticeRetriever needs LlamaIndex: pip install"
                      " 'memlattice-client[llamaindex]' (or './client[llamaindex]')") from exc

from memlattice_client import _operations as ops
from memlattice_client._client import AsyncMemlatticeClient, MemlatticeClient
from memlattice_client._inputs import SearchOptions
from memlattice_client._models import SearchHit

__all__ = ["MemlatticeRetriever", "node_of"]


def node_of(hit: SearchHit) -> NodeWithScore:
    """A search hit as a scored LlamaIndex node."""
    m = hit.memory
    metadata: dict[str, Any] = {
        "namespace": m.namespace, "key": m.key, "memory_type": m.memory_type,
        "tags": list(m.tags), "session_id": m.session_id,
        "created_at": m.created_at.isoformat()}
    # Kept out of what the LLM and the embedder see: the text is the memory.
    hidden = list(metadata)
    return NodeWithScore(node=TextNode(id_=m.id, text=m.content, metadata=metadata,
                                       excluded_llm_metadata_keys=hidden,
                                       excluded_embed_metadata_keys=hidden),
                         score=hit.score)


class MemlatticeRetriever(BaseRetriever):
    """The `similarity_top_k` best memories of `namespace` for a query.

    `search_options` go to every search (`user_id=`, `scope=`, `filter=`,
    `min_score=`, ...). `client` serves `retrieve`; `async_client` serves
    `aretrieve`, which otherwise runs the sync client in a thread.
    """

    def __init__(self, client: MemlatticeClient | None = None, *, namespace: str,
                 async_client: AsyncMemlatticeClient | None = None,
                 similarity_top_k: int = 4, search_options: SearchOptions | None = None,
                 callback_manager: CallbackManager | None = None) -> None:
        if client is None and async_client is None:
            raise TypeError("MemlatticeRetriever needs a client, an async_client or both")
        super().__init__(callback_manager=callback_manager)
        self.client = client
        self.async_client = async_client
        self.namespace = namespace
        self.similarity_top_k = similarity_top_k
        self.search_options: SearchOptions = search_options or {}

    def _search(self, query: QueryBundle) -> ops.Call[list[SearchHit]]:
        # The server embeds the query: a bundle's own vector (another model's, as a
        # rule) is not sent.
        options: dict[str, Any] = {**self.search_options, "limit": self.similarity_top_k}
        return ops.search(self.namespace, query.query_str, **options)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if self.client is None:
            raise TypeError("this retriever has only an async_client: use aretrieve")
        return [node_of(hit) for hit in self.client.send(self._search(query_bundle))]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if self.async_client is None:
            return await asyncio.to_thread(self._retrieve, query_bundle)
        return [node_of(hit) for hit in await self.async_client.send(self._search(query_bundle))]
