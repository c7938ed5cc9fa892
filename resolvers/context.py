"""The typed per-request context every resolver receives.

DataLoaders are created here, per request, never at module level: a loader's
cache must not outlive the request that filled it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from strawberry.dataloader import DataLoader
from strawberry.types import Info as _Info

from graph.memories import MemoryGraph
from memlattice.service import MemoryService


@dataclass
class Context:
    service: MemoryService
    actor: str
    embedding_loaders: dict[str, DataLoader[str, list[float] | None]] = field(
        default_factory=dict
    )

    @property
    def graph(self) -> MemoryGraph:
        return self.service.graph

    def embedding_loader(self, namespace: str) -> DataLoader[str, list[float] | None]:
        """Batch `Memory.embedding` lookups of one response into one query per namespace."""
        loader = self.embedding_loaders.get(namespace)
        if loader is None:

            async def load(ids: Sequence[str]) -> list[list[float] | None]:
                found = await self.graph.embeddings(namespace=namespace, ids=ids)
                return [found.get(i) for i in ids]

            loader = DataLoader(load_fn=load)
            self.embedding_loaders[namespace] = loader
        return loader


Info = _Info[Context, None]
