"""Per-namespace search defaults, cached briefly so recall stays one round trip.

A configuration change made through this process is seen at once; one made
through another process is seen within `ttl_s` seconds. Concurrent searches
share one read of a namespace's defaults, and under steady traffic the value
is read again before it expires (memlattice.core.read_through).
"""

from __future__ import annotations

from memlattice.core.model import utcnow
from memlattice.core.read_through import ReadThrough
from memlattice.core.search_config import NamespaceSettings
from memlattice.graph.namespace_configs import NamespaceConfig, NamespaceConfigGraph


class NamespaceDefaults:
    def __init__(self, graph: NamespaceConfigGraph, *, ttl_s: float = 5.0) -> None:
        self.graph = graph
        self.ttl_s = ttl_s
        self._configs: ReadThrough[str, NamespaceConfig | None] = ReadThrough(
            self._read, ttl_s=ttl_s)

    async def _read(self, namespace: str) -> NamespaceConfig | None:
        return await self.graph.get(namespace=namespace)

    async def configure(self, namespace: str, settings: NamespaceSettings,
                        actor: str) -> NamespaceConfig:
        config = await self.graph.put(
            namespace=namespace, settings=settings.model_dump(mode="json", exclude_none=True),
            actor=actor, now=utcnow(),
        )
        self._configs.put(namespace, config)
        return config

    async def get(self, namespace: str) -> NamespaceConfig | None:
        return await self._configs.get(namespace)

    def forget_cached(self, namespace: str) -> None:
        """Drop the cached configuration (after a wipe removed it)."""
        self._configs.forget(namespace)

    async def settings(self, namespace: str) -> NamespaceSettings:
        config = await self.get(namespace)
        return NamespaceSettings(**config.settings) if config else NamespaceSettings()
