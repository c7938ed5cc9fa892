"""Which vector space each namespace searches, and keeping side spaces current.

The service asks two things on its hot paths: which space to search (a state
lookup, cached for `ttl_s`), and, after a write, whether the namespace has a
side space to embed the new memory into. Memories written into a side space
late or not at all (an embedding endpoint down, a replica with a stale cache)
are caught up by the background `Reembedder`, which sweeps for them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memlattice.core.auth import Tenant
from memlattice.core.embedding_text import embedding_text
from memlattice.core.errors import MemlatticeError
from memlattice.core.model import utcnow
from memlattice.core.read_through import ReadThrough
from memlattice.core.settings import VectorIndexSettings
from memlattice.core.vector_spaces import SpaceState, VectorSpace, requested_space
from memlattice.embeddings.registry import EmbedderRegistry
from memlattice.graph.vector_spaces import Progress, VectorSpaceGraph
from memlattice.services.write_vectors import embed_checked

log = logging.getLogger(__name__)

MemoryRow = tuple[str, str, Mapping[str, Any] | str | None]
"""A memory to embed: (id, content, metadata as a mapping or as the stored JSON)."""


@dataclass(frozen=True)
class EmbeddingReport:
    """A namespace's spaces as a reader sees them: the primary space by its model."""

    state: SpaceState
    active: VectorSpace
    progress: Progress


class VectorSpaces:
    def __init__(self, graph: VectorSpaceGraph, embedders: EmbedderRegistry,
                 index: VectorIndexSettings, *, ttl_s: float = 2.0) -> None:
        self.graph = graph
        self.embedders = embedders
        self.index = index
        self.ttl_s = ttl_s
        self._states: ReadThrough[str, SpaceState] = ReadThrough(graph.state, ttl_s=ttl_s)
        self._on_change: list[Callable[[], None]] = []
        self.lagging: set[tuple[str, VectorSpace]] = set()
        """Side spaces a write could not embed into; the Reembedder catches them up."""

    def on_change(self, callback: Callable[[], None]) -> None:
        """Call `callback` whenever a namespace starts building a space (wakes the worker)."""
        self._on_change.append(callback)

    def _notify(self) -> None:
        for callback in self._on_change:
            callback()

    async def state(self, namespace: str) -> SpaceState:
        """Every search asks this: one read per namespace at a time, none older than
        `ttl_s` (memlattice.core.read_through)."""
        return await self._states.get(namespace)

    def forget_cached(self, namespace: str) -> None:
        self._states.forget(namespace)

    async def configure(self, namespace: str, model: str, dimension: int) -> SpaceState:
        """Aim `namespace` at a model; a new space is checked, indexed, then built
        in the background while the current one keeps serving searches."""
        target = requested_space(model, dimension, primary=self.embedders.primary)
        if target is not None:
            await self.embedders.check(target)
            await self.graph.ensure_index(target, self.index)
        state, unused = await self.graph.set_target(namespace, target, utcnow())
        self._states.put(namespace, state)
        for space in unused:
            await self.graph.drop_vectors(namespace, space)
        self._notify()
        return state

    async def vectors(self, space: VectorSpace, rows: Sequence[MemoryRow]
                      ) -> list[tuple[str, str, list[float]]]:
        """`(id, content, vector)` in `space` of each `(id, content, metadata)` row, as
        every write embeds a memory (memlattice.core.embedding_text)."""
        embedder = self.embedders.get(space)
        assert embedder is not None
        vectors = await embed_checked(
            embedder, space.dimension,
            [embedding_text(content, metadata) for _, content, metadata in rows],
            what=f"{space.model}'s vector")
        return [(id, content, vector)
                for (id, content, _), vector in zip(rows, vectors, strict=True)]

    async def progress(self, namespace: str, space: VectorSpace | None) -> Progress:
        return await self.graph.progress(namespace, space)

    async def report(self, namespace: str, tenant: Tenant | None = None) -> EmbeddingReport:
        """The namespace's spaces; the counts are of what `tenant` may see (all without)."""
        state = await self.graph.state(namespace)
        progress = await self.graph.progress(namespace, state.target or state.active, tenant)
        return EmbeddingReport(state=state, active=state.active or self.embedders.primary,
                               progress=progress)

    async def embed_written(self, namespace: str, rows: Sequence[MemoryRow]) -> None:
        """Put fresh `(id, content, metadata)` rows into the namespace's side spaces.

        Best effort by design: the memory itself is already committed, and a
        failure here only delays it in the side space until the sweep.
        """
        if not rows:
            return
        state = await self.state(namespace)
        for space in state.side_spaces:
            try:
                await self.graph.put(namespace, space, await self.vectors(space, rows))
            except MemlatticeError as exc:
                log.warning("could not embed %d memories of %s into %s now (%s); the"
                            " background sweep will", len(rows), namespace, space.key, exc)
                self.lagging.add((namespace, space))
                self._notify()
