"""One embedder per vector space, built on demand from the server's provider.

A namespace may search with another model or dimension than the server's
default (`configureNamespace`); its embedder is the configured provider
(local WordLlama or the OpenAI-compatible endpoint) with that model and
dimension, wrapped in the same two-level cache as the default one.
"""

from __future__ import annotations

from memlattice.core.errors import MemlatticeError, ValidationError
from memlattice.core.settings import EmbeddingSettings
from memlattice.core.vector_spaces import VectorSpace
from memlattice.embeddings import CachedEmbedder, Embedder, EmbeddingCacheStore, make_embedder
from memlattice.embeddings.base import check_dimension


class EmbedderRegistry:
    def __init__(self, settings: EmbeddingSettings, default: Embedder | None,
                 store: EmbeddingCacheStore | None = None) -> None:
        self.settings = settings
        self.default = default
        self.store = store
        self.primary = VectorSpace(settings.model, settings.dimension)
        self._built: dict[VectorSpace, Embedder] = {}

    @property
    def can_embed(self) -> bool:
        """Whether side spaces can be built at all (provider `none` cannot)."""
        return self.settings.provider != "none"

    def get(self, space: VectorSpace | None) -> Embedder | None:
        """The embedder of `space` (None: the primary space's, which may be None)."""
        if space is None or space == self.primary:
            return self.default
        embedder = self._built.get(space)
        if embedder is None:
            if self.settings.provider == "none":
                raise ValidationError(
                    "this server has no embedding provider (MEMLATTICE_EMBEDDING_PROVIDER=none),"
                    " so it cannot embed a namespace with another model",
                    field="embeddingModel")
            inner = make_embedder(self.settings.model_copy(
                update={"model": space.model, "dimension": space.dimension}))
            assert inner is not None
            embedder = CachedEmbedder(inner, self.store) if self.store is not None else inner
            self._built[space] = embedder
        return embedder

    async def check(self, space: VectorSpace) -> None:
        """Embed one probe text, so a model the provider cannot serve is refused
        when it is configured rather than failing later in the background."""
        embedder = self.get(space)
        assert embedder is not None
        try:
            (vector,) = await embedder.embed(["memlattice probe"])
            check_dimension(vector, space.dimension, what=f"{space.model}'s vector")
        except MemlatticeError as exc:
            self._built.pop(space, None)
            raise ValidationError(
                f"embedding model {space.model!r} at {space.dimension} dimensions is not"
                f" available: {exc.message}", field="embeddingModel") from exc

    async def aclose(self) -> None:
        for embedder in self._built.values():
            await embedder.aclose()
        self._built.clear()
        if self.default is not None:
            await self.default.aclose()
