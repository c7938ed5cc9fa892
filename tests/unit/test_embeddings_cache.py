"""CachedEmbedder: each distinct (model, text) is embedded once, results keep input order."""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Mapping, Sequence

import pytest

from memlattice.embeddings import (
    CachedEmbedder,
    Embedder,
    EmbeddingCacheStore,
    l2_normalise,
    text_digest,
)


class HashEmbedder(Embedder):
    """A real (if meaningless) embedder: deterministic vectors from the text and
    model name, with a log of every call so tests can count inner work."""

    def __init__(self, model: str = "hash/v1/16", dimension: int = 16) -> None:
        self.model = model
        self.dimension = dimension
        self.calls: list[list[str]] = []
        self.closed = False

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [self._vector(t) for t in texts]

    def _vector(self, text: str) -> list[float]:
        digest = hashlib.sha512(f"{self.model}\0{text}".encode()).digest()
        values = [float(v) for (v,) in struct.iter_unpack(">b", digest)][: self.dimension]
        return l2_normalise(values)

    async def aclose(self) -> None:
        self.closed = True

    @property
    def embedded(self) -> list[str]:
        return [t for call in self.calls for t in call]


class DictStore:
    """Test double for the storage only (the Neo4j store is tested with Neo4j)."""

    def __init__(self) -> None:
        self.data: dict[tuple[str, str], list[float]] = {}
        self.gets: list[tuple[str, list[str]]] = []
        self.puts: list[tuple[str, dict[str, list[float]]]] = []

    async def get_many(self, model: str, digests: Sequence[str]) -> dict[str, list[float]]:
        self.gets.append((model, list(digests)))
        return {d: list(self.data[(model, d)]) for d in digests if (model, d) in self.data}

    async def put_many(self, model: str, items: Mapping[str, list[float]]) -> None:
        self.puts.append((model, dict(items)))
        for digest, vec in items.items():
            self.data[(model, digest)] = list(vec)


def test_text_digest_is_sha256_of_utf8() -> None:
    assert text_digest("") == hashlib.sha256(b"").hexdigest()
    assert text_digest("café") == hashlib.sha256("café".encode()).hexdigest()
    assert text_digest("a") != text_digest("a ")  # no normalisation: never change results


def test_dict_store_satisfies_the_protocol() -> None:
    assert isinstance(DictStore(), EmbeddingCacheStore)


async def test_same_text_is_embedded_once_per_model() -> None:
    inner, store = HashEmbedder(), DictStore()
    cached = CachedEmbedder(inner, store)
    assert (cached.model, cached.dimension) == (inner.model, inner.dimension)

    first = await cached.embed(["alpha", "beta"])
    second = await cached.embed(["beta", "alpha", "gamma"])

    assert inner.calls == [["alpha", "beta"], ["gamma"]]
    assert second[:2] == [first[1], first[0]]
    assert first == await inner.embed(["alpha", "beta"])  # the cache never changes results


async def test_duplicates_within_a_call_are_embedded_once_and_order_is_kept() -> None:
    inner, store = HashEmbedder(), DictStore()
    texts = ["b", "a", "b", "c", "a", "b"]

    vectors = await CachedEmbedder(inner, store).embed(texts)

    assert inner.calls == [["b", "a", "c"]]  # one inner call, first-seen order
    assert len(store.gets) == 1 and len(store.puts) == 1  # one round trip each way
    assert vectors == [inner._vector(t) for t in texts]


async def test_store_is_shared_across_instances_and_restarts() -> None:
    store = DictStore()
    inner1 = HashEmbedder()
    await CachedEmbedder(inner1, store).embed(["persisted"])

    inner2 = HashEmbedder()  # same model identity, e.g. after a restart
    [vec] = await CachedEmbedder(inner2, store).embed(["persisted"])

    assert inner2.calls == []
    assert vec == inner1._vector("persisted")


async def test_lru_answers_without_the_store() -> None:
    inner, store = HashEmbedder(), DictStore()
    cached = CachedEmbedder(inner, store)
    await cached.embed(["hot"])
    await cached.embed(["hot"])
    await cached.embed(["hot"])
    assert len(store.gets) == 1  # only the first call went past the LRU
    assert inner.calls == [["hot"]]


async def test_lru_is_bounded_and_evicts_least_recently_used() -> None:
    inner, store = HashEmbedder(), DictStore()
    cached = CachedEmbedder(inner, store, max_entries=2)
    await cached.embed(["a", "b"])
    await cached.embed(["a"])  # a is now more recent than b
    await cached.embed(["c"])  # evicts b
    store.gets.clear()

    await cached.embed(["a", "c"])
    assert store.gets == []
    await cached.embed(["b"])
    assert store.gets == [(inner.model, [text_digest("b")])]
    assert inner.calls == [["a", "b"], ["c"]]  # b came back from the store, not the model


async def test_without_a_store_the_lru_alone_caches() -> None:
    inner = HashEmbedder()
    cached = CachedEmbedder(inner)
    await cached.embed(["x", "x"])
    await cached.embed(["x"])
    assert inner.calls == [["x"]]


async def test_a_different_model_identity_misses() -> None:
    store = DictStore()
    small = HashEmbedder(model="hash/small/16")
    other = HashEmbedder(model="hash/other/16")
    await CachedEmbedder(small, store).embed(["shared text"])

    [vec] = await CachedEmbedder(other, store).embed(["shared text"])

    assert other.calls == [["shared text"]]
    assert vec == other._vector("shared text") != small._vector("shared text")
    digest = text_digest("shared text")
    assert set(store.data) == {("hash/small/16", digest), ("hash/other/16", digest)}
    assert [model for model, _ in store.gets] == ["hash/small/16", "hash/other/16"]


async def test_stored_vector_of_wrong_length_is_recomputed() -> None:
    inner, store = HashEmbedder(), DictStore()
    store.data[(inner.model, text_digest("stale"))] = [1.0, 0.0, 0.0]

    [vec] = await CachedEmbedder(inner, store).embed(["stale"])

    assert inner.calls == [["stale"]]
    assert len(vec) == inner.dimension
    assert store.data[(inner.model, text_digest("stale"))] == vec


async def test_returned_vectors_are_copies() -> None:
    inner = HashEmbedder()
    cached = CachedEmbedder(inner, DictStore())
    [vec] = await cached.embed(["mutable"])
    vec[0] = math.nan
    [again] = await cached.embed(["mutable"])
    assert again == inner._vector("mutable")


async def test_empty_input_does_no_work_and_aclose_closes_inner() -> None:
    inner, store = HashEmbedder(), DictStore()
    cached = CachedEmbedder(inner, store)
    assert await cached.embed([]) == []
    assert inner.calls == [] and store.gets == []
    await cached.aclose()
    assert inner.closed


def test_negative_lru_size_is_refused() -> None:
    with pytest.raises(ValueError):
        CachedEmbedder(HashEmbedder(), max_entries=-1)
