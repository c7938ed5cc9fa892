"""Text embedding for Memlattice: providers, a cache, and the factory that picks one.

The server embeds a memory's text itself whenever a client sends no vector.
`make_embedder` turns `EmbeddingSettings` into the configured provider:

    provider  embedder                       needs
    local     WordLlamaEmbedder (default)    nothing: weights ship in the wheel
    openai    OpenAIEmbedder                 an OpenAI-compatible endpoint (+ key)
    none      None                           clients always send vectors

Wrapping the result in `CachedEmbedder` (with the Neo4j-backed store from
`graph/`) is left to the app factory, which owns the database connection.
Provider modules import their heavy dependencies lazily, so importing this
package costs nothing until something is embedded.
"""

from __future__ import annotations

from typing import assert_never

from memlattice.core.errors import ValidationError
from memlattice.core.settings import EmbeddingSettings
from memlattice.embeddings.base import Embedder, check_dimension, l2_normalise
from memlattice.embeddings.cache import (
    DEFAULT_LRU_ENTRIES,
    CachedEmbedder,
    EmbeddingCacheStore,
    text_digest,
)
from memlattice.embeddings.local import WordLlamaEmbedder
from memlattice.embeddings.openai_provider import OpenAIEmbedder

_LOCAL_DEFAULT_MODEL = EmbeddingSettings.model_fields["model"].default


def make_embedder(settings: EmbeddingSettings) -> Embedder | None:
    """Build the embedder `settings` describe, or None for provider "none".

    No I/O happens here (models load and connections open on first use), so
    a misconfiguration that needs the network is reported by the first
    `embed` call as `Unavailable`; one that can be seen from the settings
    alone is reported now, as `ValidationError`, so the server refuses to
    start rather than failing on the first write.
    """
    if settings.provider == "none":
        return None
    if settings.provider == "local":
        return WordLlamaEmbedder(model=settings.model, dimension=settings.dimension)
    if settings.provider == "openai":
        if settings.model == _LOCAL_DEFAULT_MODEL:
            raise ValidationError(
                f"MEMLATTICE_EMBEDDING_MODEL is {settings.model!r}, the local WordLlama "
                "default; with MEMLATTICE_EMBEDDING_PROVIDER=openai set it to the "
                "endpoint's model id, e.g. text-embedding-3-small",
                provider="openai",
            )
        return OpenAIEmbedder.from_settings(settings)
    # A new `provider` literal without a branch here is a type error.
    assert_never(settings.provider)


__all__ = [
    "DEFAULT_LRU_ENTRIES",
    "CachedEmbedder",
    "Embedder",
    "EmbeddingCacheStore",
    "OpenAIEmbedder",
    "WordLlamaEmbedder",
    "check_dimension",
    "l2_normalise",
    "make_embedder",
    "text_digest",
]
