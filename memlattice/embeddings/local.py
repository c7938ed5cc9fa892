"""The default embedder: WordLlama, on the CPU, with no network and no torch.

Why WordLlama: its `l2_supercat` model is a static token-embedding table
(average-pooled), so it needs only numpy and `tokenizers`, embeds thousands of
short texts per second on one core, and its wheel ships the 256-dimension
weights and the tokenizer. A fresh install can therefore embed with no API key,
no GPU and no download, which is what a memory service should do by default.

The model is loaded with `disable_download=True` from the installed package
folder, so a configuration the wheel does not ship fails fast with an
actionable `Unavailable` instead of silently reaching for Hugging Face.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memlattice.core.errors import Unavailable
from memlattice.embeddings.base import Embedder, check_dimension, model_identity

if TYPE_CHECKING:
    from wordllama.inference import WordLlamaInference

DEFAULT_CONFIG = "l2_supercat"
DEFAULT_DIMENSION = 256
# WordLlama is trained Matryoshka-style: a prefix of the shipped 256-d vectors
# is itself a usable embedding at these sizes, so they work offline too.
TRUNCATED_DIMENSIONS = (64, 128)


class WordLlamaEmbedder(Embedder):
    """Embeds with a WordLlama model loaded lazily from local files.

    Nothing is imported or read in the constructor: importing `wordllama`
    pulls in `tokenizers`, `safetensors` and `requests`, and reading the
    weights takes a noticeable moment, neither of which a process that never
    embeds (a CLI command, a test) should pay for. The first `embed` call
    loads the model in a worker thread, guarded by a lock so concurrent first
    calls load it once.
    """

    def __init__(
        self,
        *,
        model: str = DEFAULT_CONFIG,
        dimension: int = DEFAULT_DIMENSION,
        cache_dir: Path | None = None,
    ) -> None:
        """`model` is a WordLlama configuration name, `dimension` one it offers.

        `cache_dir` defaults to the installed `wordllama` package folder, which
        holds the weights the wheel ships; point it at a folder laid out like
        `~/.cache/wordllama` (`weights/`, `tokenizers/`) to use other
        pre-downloaded weights.
        """
        self.config = model
        self.dimension = dimension
        self.model = model_identity("local", model, dimension)
        self._cache_dir = cache_dir
        self._inference: WordLlamaInference | None = None
        self._load_lock = threading.Lock()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        # Copy to a list now: WordLlama insists on `list`, and the caller may
        # mutate its sequence while the worker thread runs.
        batch = [str(t) for t in texts]
        return await asyncio.to_thread(self._embed_sync, batch)

    def _embed_sync(self, texts: list[str]) -> list[list[float]]:
        import numpy as np

        inference = self._load()
        raw = np.asarray(inference.embed(texts, norm=False), dtype=np.float64)
        # WordLlama's own `norm=True` divides by zero for texts without known
        # tokens (""), producing NaN; normalising here keeps those at zero.
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        unit = np.divide(raw, norms, out=np.zeros_like(raw), where=norms > 0)
        vectors: list[list[float]] = unit.tolist()
        for vec in vectors:
            check_dimension(vec, self.dimension, what=f"{self.model} embedding")
        return vectors

    def _load(self) -> WordLlamaInference:
        if self._inference is not None:
            return self._inference
        with self._load_lock:
            if self._inference is None:
                self._inference = self._load_uncached()
            return self._inference

    def _load_uncached(self) -> WordLlamaInference:
        try:
            import wordllama
            from wordllama import WordLlama
        except ImportError as exc:
            raise Unavailable(
                "the local embedder needs the 'wordllama' package: "
                "pip install 'wordllama==0.4.0.post1', or set "
                "MEMLATTICE_EMBEDDING_PROVIDER=openai (or none)",
                provider="local",
            ) from exc

        cache_dir = self._cache_dir or Path(wordllama.__file__).parent
        available = WordLlama.list_configs().get("wordllama", [])
        if self.config not in available:
            raise Unavailable(
                f"unknown WordLlama configuration {self.config!r}; "
                f"MEMLATTICE_EMBEDDING_MODEL must be one of {sorted(available)}",
                provider="local",
                model=self.model,
            )
        truncate = self.dimension in TRUNCATED_DIMENSIONS
        try:
            return WordLlama.load(
                config=self.config,
                cache_dir=cache_dir,
                disable_download=True,
                dim=DEFAULT_DIMENSION if truncate else self.dimension,
                trunc_dim=self.dimension if truncate else None,
            )
        except (OSError, ValueError) as exc:
            # FileNotFoundError (weights not shipped for this dimension) and
            # ValueError (dimension not offered by the configuration) both
            # mean the settings ask for something this install cannot do.
            raise Unavailable(
                f"cannot load WordLlama {self.config!r} at {self.dimension} dimensions "
                f"from {cache_dir} without downloading ({exc}). The wheel ships "
                f"{DEFAULT_CONFIG!r} at {DEFAULT_DIMENSION} dimensions: set "
                f"MEMLATTICE_EMBEDDING_MODEL={DEFAULT_CONFIG} and "
                f"MEMLATTICE_EMBEDDING_DIMENSION={DEFAULT_DIMENSION}, or put the weights "
                f"under {cache_dir}/weights/",
                provider="local",
                model=self.model,
            ) from exc


__all__ = ["WordLlamaEmbedder"]
