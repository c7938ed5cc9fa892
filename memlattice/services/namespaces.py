"""Per-namespace search defaults, cached briefly so recall stays one round trip.

A configuration change made through this process is seen at once; one made
through another process is seen within `ttl_s` seconds.
"""

from __future__ import annotations

import time

from memlattice.core.model import utcnow
from memlattice.core.search_config import NamespaceSettings
from memlattice.graph.namespace_configs import NamespaceConfig, NamespaceConfigGraph


class NamespaceDefaults:
    def __init__(self, graph: NamespaceConfigGraph, *, ttl_s: float = 5.0) -> None:
        self.graph = graph
        self.ttl_s = ttl_s
        self._cache: dict[str, tuple[float, NamespaceConfig | None]] = {}

    async def configure(self, namespace: str, settings: NamespaceSettings,
                        actor: str) -> NamespaceConfig:
        config = await self.graph.put(
            namespace=namespace, settings=settings.model_dump(mode="json", exclude_none=True),
            actor=actor, now=utcnow(),
        )
        self._cache[namespace] = (time.monotonic(), config)
        return config

    async def get(self, namespace: str) -> NamespaceConfig | None:
        cached = self._cache.get(namespace)
        if cached is not None and time.monotonic() - cached[0] < self.ttl_s:
            return cached[1]
        config = await self.graph.get(namespace=namespace)
        self._cache[namespace] = (time.monotonic(), config)
        return config

    def forget_cached(self, namespace: str) -> None:
        """Drop the cached configuration (after a wipe removed it)."""
        self._cache.pop(namespace, None)

    async def settings(self, namespace: str) -> NamespaceSettings:
        config = await self.get(namespace)
        return NamespaceSettings(**config.settings) if config else NamespaceSettings()
