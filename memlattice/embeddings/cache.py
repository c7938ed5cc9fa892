"""Never embed the same text twice with the same model.

Agents re-send the same facts, queries repeat, and a re-import writes texts
the service has already seen. Embedding is the slowest (and, with a hosted
provider, the only billed) step of a write, so `CachedEmbedder` puts two
layers in front of any `Embedder`:

1. a bounded in-process LRU, for the hot set (repeated queries), and
2. a persistent `EmbeddingCacheStore` (implemented in Neo4j under `graph/`),
   so restarts and other replicas benefit too.

Keys are `(model identity, sha256(text))`. The model identity
(`Embedder.model`, e.g. "wordllama/l2_supercat/256") is part of every key, so
changing provider, model or dimension starts a fresh vector space instead of
mixing incompatible vectors. Hashing the text keeps keys small and fixed-size
and keeps the store from becoming a second copy of every memory's content.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from memlattice.embeddings.base import Embedder

DEFAULT_LRU_ENTRIES = 10_000


def text_digest(text: str) -> str:
    """The cache key of `text`: the hex SHA-256 of its UTF-8 bytes.

    The text is hashed exactly as given (no trimming or case folding): two
    texts that differ only in whitespace may legitimately embed differently,
    and a cache must never change results.
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@runtime_checkable
class EmbeddingCacheStore(Protocol):
    """Persistent storage for vectors, keyed by model identity and text digest.

    Both methods are batched because the store is a database round trip:
    one query per `embed` call, never one per text.
    """

    async def get_many(self, model: str, digests: Sequence[str]) -> dict[str, list[float]]:
        """Vectors stored for `model` under any of `digests`; misses are absent."""
        ...

    async def put_many(self, model: str, items: Mapping[str, list[float]]) -> None:
        """Store `items` (digest -> vector) for `model`; overwriting is allowed."""
        ...


class CachedEmbedder(Embedder):
    """An `Embedder` that consults an LRU and a store before its inner embedder.

    Store errors propagate rather than being swallowed: the store is the same
    database the caller is about to write to, so hiding its failure would
    only move the error one step later and make it harder to read.

    Two concurrent calls that miss on the same text may both embed it; the
    second `put_many` overwrites the first with an identical vector, which is
    cheaper than coordinating in-flight requests.
    """

    def __init__(
        self,
        inner: Embedder,
        store: EmbeddingCacheStore | None = None,
        *,
        max_entries: int = DEFAULT_LRU_ENTRIES,
    ) -> None:
        """Wrap `inner`. `store=None` keeps only the LRU; `max_entries=0`
        disables the LRU (every lookup goes to the store)."""
        if max_entries < 0:
            raise ValueError("max_entries must not be negative")
        self.inner = inner
        self.store = store
        self.model = inner.model
        self.dimension = inner.dimension
        self.max_entries = max_entries
        self._lru: OrderedDict[tuple[str, str], list[float]] = OrderedDict()

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, lru={len(self._lru)}/{self.max_entries})"

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        model = self.inner.model
        digests = [text_digest(t) for t in texts]
        # First text for each digest, in first-seen order: the inner embedder
        # sees each distinct text once, in a deterministic order.
        unique: dict[str, str] = {}
        for digest, text in zip(digests, texts, strict=True):
            unique.setdefault(digest, text)

        found: dict[str, list[float]] = {}
        for digest in unique:
            hit = self._lru_get(model, digest)
            if hit is not None:
                found[digest] = hit

        missing = [d for d in unique if d not in found]
        if missing and self.store is not None:
            stored = await self.store.get_many(model, missing)
            for digest in missing:
                vec = stored.get(digest)
                # A stored vector of the wrong length (an old bug, a manual
                # edit) is treated as a miss and overwritten below.
                if vec is not None and len(vec) == self.dimension:
                    found[digest] = list(vec)
                    self._lru_put(model, digest, found[digest])
            missing = [d for d in missing if d not in found]

        if missing:
            vectors = await self.inner.embed([unique[d] for d in missing])
            if len(vectors) != len(missing):
                raise RuntimeError(
                    f"{self.inner!r} returned {len(vectors)} vectors for {len(missing)} texts"
                )
            fresh = dict(zip(missing, vectors, strict=True))
            if self.store is not None:
                await self.store.put_many(model, fresh)
            for digest, vec in fresh.items():
                found[digest] = vec
                self._lru_put(model, digest, vec)

        # Copies: callers may mutate what they get without corrupting the LRU.
        return [list(found[d]) for d in digests]

    async def aclose(self) -> None:
        await self.inner.aclose()

    def clear_lru(self) -> None:
        """Forget the in-process entries (the store is untouched)."""
        self._lru.clear()

    def _lru_get(self, model: str, digest: str) -> list[float] | None:
        key = (model, digest)
        vec = self._lru.get(key)
        if vec is not None:
            self._lru.move_to_end(key)
        return vec

    def _lru_put(self, model: str, digest: str, vec: list[float]) -> None:
        if self.max_entries == 0:
            return
        key = (model, digest)
        self._lru[key] = list(vec)
        self._lru.move_to_end(key)
        while len(self._lru) > self.max_entries:
            self._lru.popitem(last=False)


__all__ = ["DEFAULT_LRU_ENTRIES", "CachedEmbedder", "EmbeddingCacheStore", "text_digest"]
