"""The contract every embedding provider fulfils, and the two checks they share.

Memlattice stores vectors in a Neo4j vector index with a fixed dimension and
compares them by cosine similarity. Two consequences shape this module:

* every vector leaves an `Embedder` L2-normalised, so cosine similarity equals
  the dot product and vectors from different code paths (client-supplied,
  cached, freshly computed) are directly comparable;
* a vector of the wrong length must be refused *before* it reaches the
  database, with an error that says what was expected, because Neo4j's own
  error for that case is far less helpful.

`Embedder.model` is a stable identity ("wordllama/l2_supercat/256",
"openai/text-embedding-3-small/1536"): caches key on it, so changing the
provider, the model or the dimension can never serve another model's vectors.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memlattice.core.errors import DimensionMismatch

if TYPE_CHECKING:
    from memlattice.core.settings import EmbeddingSettings

# What each provider's `Embedder.model` starts with (`model_identity`).
_PREFIXES = {"local": "wordllama", "openai": "openai"}


def model_identity(provider: str, model: str, dimension: int) -> str:
    """`Embedder.model` of `provider`'s `model` at `dimension`: what a memory the server
    embedded records as its `embeddingModel` ("wordllama/l2_supercat/256")."""
    return f"{_PREFIXES[provider]}/{model}/{dimension}"


def configured_identity(settings: EmbeddingSettings) -> str | None:
    """The identity of the embedder `settings` configure, without building it (None:
    provider `none`, which embeds nothing)."""
    if settings.provider == "none":
        return None
    return model_identity(settings.provider, settings.model, settings.dimension)


def identity_parts(identity: str) -> tuple[str, str, int] | None:
    """(provider, model, dimension) of an identity a provider of this server makes, or
    None for any other name (a client's vector: "client", or the name it gave)."""
    head, _, rest = identity.partition("/")
    model, _, size = rest.rpartition("/")
    provider = next((p for p, prefix in _PREFIXES.items() if prefix == head), None)
    if provider is None or not model or not size.isdigit():
        return None
    return provider, model, int(size)


class Embedder(ABC):
    """Turns texts into L2-normalised vectors of a fixed dimension.

    Subclasses set `model` and `dimension` in their constructor. The
    constructor must not do I/O: embedders are built while the app is wired
    together, and a slow model load or an unreachable endpoint should surface
    on first use (as `memlattice.core.errors.Unavailable`), not crash start-up.
    """

    model: str
    """Stable identity of the vector space; part of every cache key."""

    dimension: int
    """Length of every vector `embed` returns."""

    @abstractmethod
    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Return one unit-length vector per text, in the order given.

        An empty input returns an empty list without doing any work.
        """

    async def aclose(self) -> None:
        """Release held resources (HTTP connections, ...). Safe to call twice."""
        return

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, dimension={self.dimension})"


def l2_normalise(vec: Sequence[float]) -> list[float]:
    """Scale `vec` to unit Euclidean length; a zero vector stays zero.

    Zero is kept rather than rejected because it is what a provider honestly
    returns for a text with no known tokens (WordLlama does this for ""), and
    a zero vector simply scores 0 against everything.

    Raises `ValueError` when the vector contains NaN or infinity: normalising
    would spread the garbage over every component, and such a vector must
    never reach the index.
    """
    norm = math.hypot(*vec)
    if not math.isfinite(norm):
        raise ValueError("vector contains non-finite values")
    if norm == 0.0:
        return [0.0] * len(vec)
    return [float(x) / norm for x in vec]


def check_dimension(vec: Sequence[float], expected: int, *, what: str) -> None:
    """Raise `DimensionMismatch` unless `vec` has exactly `expected` components.

    `what` names the vector in the message ("embedding", "query vector", ...)
    so the person reading it knows which input to fix.
    """
    actual = len(vec)
    if actual != expected:
        raise DimensionMismatch(
            f"{what} has {actual} dimensions but the index expects {expected}",
            expected=expected,
            actual=actual,
        )


__all__ = ["Embedder", "check_dimension", "l2_normalise"]
