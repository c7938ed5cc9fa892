"""The real WordLlama model, loaded from the wheel with the network switched off."""

from __future__ import annotations

import math

import pytest

from memlattice.core.errors import Unavailable
from memlattice.core.settings import EmbeddingSettings
from memlattice.embeddings import WordLlamaEmbedder, make_embedder


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    # Any attempt to reach Hugging Face would now fail instead of downloading.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_embeds_offline_with_unit_norm_and_configured_dimension() -> None:
    embedder = WordLlamaEmbedder(model="l2_supercat", dimension=256)
    assert embedder.model == "wordllama/l2_supercat/256"

    vectors = await embedder.embed(["The cat sat on the mat.", "Stock markets fell sharply."])

    assert len(vectors) == 2
    for vec in vectors:
        assert len(vec) == 256
        assert math.isclose(math.sqrt(_dot(vec, vec)), 1.0, rel_tol=1e-9)
    await embedder.aclose()


async def test_similar_sentences_score_higher_than_unrelated_ones() -> None:
    embedder = WordLlamaEmbedder()
    cat, kitten, finance = await embedder.embed(
        [
            "The cat is sleeping on the sofa.",
            "A kitten naps on the couch.",
            "Quarterly revenue grew by five percent.",
        ]
    )
    assert _dot(cat, kitten) > _dot(cat, finance)
    assert _dot(kitten, cat) > _dot(kitten, finance)


async def test_order_is_preserved_and_empty_input_is_free() -> None:
    embedder = WordLlamaEmbedder()
    assert await embedder.embed([]) == []
    a, b = await embedder.embed(["alpha", "omega"])
    b2, a2 = await embedder.embed(["omega", "alpha"])
    assert a == pytest.approx(a2)
    assert b == pytest.approx(b2)


async def test_text_without_tokens_gives_zero_vector_not_nan() -> None:
    [vec] = await WordLlamaEmbedder().embed([""])
    assert all(x == 0.0 for x in vec)


async def test_weights_the_wheel_does_not_ship_are_unavailable_not_downloaded() -> None:
    embedder = WordLlamaEmbedder(model="l2_supercat", dimension=1024)  # no I/O yet
    with pytest.raises(Unavailable, match="MEMLATTICE_EMBEDDING_DIMENSION=256"):
        await embedder.embed(["hello"])


async def test_unknown_configuration_is_unavailable_with_choices() -> None:
    with pytest.raises(Unavailable, match="l2_supercat"):
        await WordLlamaEmbedder(model="no_such_model").embed(["hello"])


def test_factory_builds_the_local_default_and_none() -> None:
    embedder = make_embedder(
        EmbeddingSettings(provider="local", model="l2_supercat", dimension=256)
    )
    assert isinstance(embedder, WordLlamaEmbedder)
    assert (embedder.model, embedder.dimension) == ("wordllama/l2_supercat/256", 256)
    assert make_embedder(EmbeddingSettings(provider="none")) is None
