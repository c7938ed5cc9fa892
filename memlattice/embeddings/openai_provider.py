"""Embeddings from any OpenAI-compatible `/v1/embeddings` endpoint.

OpenAI itself, Azure-style proxies, Ollama, vLLM, LM Studio, llama.cpp and
text-embeddings-inference all speak this protocol, so one client covers every
hosted or self-hosted model a deployment may prefer over the local default.

Design choices, and why:

* The `openai` package is imported lazily, so `import memlattice.embeddings`
  stays cheap and a missing package becomes an install hint, not a crash.
* Retries are ours, not the client's (`max_retries=0` on `AsyncOpenAI`): the
  backoff must be configurable (tests use milliseconds, production seconds),
  and retrying in two layers would multiply the attempts.
* `encoding_format="float"` is always sent. The `openai` client otherwise asks
  for base64 and decodes it itself, which many compatible servers do not
  implement.
* `dimensions` is sent only to models that accept it (`text-embedding-3*`);
  older OpenAI models and most self-hosted servers reject the parameter.
* Every vector is checked against the configured dimension, because the Neo4j
  vector index has one fixed dimension and a silently different model would
  corrupt search.
* Error messages name the endpoint (without credentials) and never contain
  the API key, even when a server echoes it back.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import SecretStr

from memlattice.core.errors import MemlatticeError, Unavailable, ValidationError
from memlattice.embeddings.base import Embedder, check_dimension, l2_normalise, model_identity
from memlattice.embeddings.openai_endpoint import (
    OPENAI_BASE_URL,
    display_url,
    is_local_endpoint,
    is_retryable,
    require_openai,
    retry_after_s,
    supports_dimensions_parameter,
)

if TYPE_CHECKING:
    import openai

    from memlattice.core.settings import EmbeddingSettings

# Sent when a keyless local server is used: the `openai` client refuses to
# start without some key, and a placeholder keeps it from picking up
# OPENAI_API_KEY from the environment and sending it to a third party.
_PLACEHOLDER_KEY = "memlattice-no-key"
_MAX_SERVER_MESSAGE = 300


class OpenAIEmbedder(Embedder):
    """Embeds through an OpenAI-compatible HTTP endpoint, in batches, with retries.

    Batches are sent one after another rather than concurrently: a burst of
    parallel requests is the quickest way into a provider's rate limit, and
    the callers (writes of a few memories) rarely need more than one batch.
    """

    def __init__(
        self,
        *,
        model: str,
        dimension: int,
        api_key: SecretStr | str | None = None,
        base_url: str | None = None,
        batch_size: int = 64,
        max_retries: int = 5,
        timeout_s: float = 30.0,
        backoff_initial_s: float = 0.5,
        backoff_max_s: float = 8.0,
        send_dimensions: bool | None = None,
    ) -> None:
        """Configure the embedder; no connection is made until `embed`.

        `max_retries` counts retries after the first attempt, so an endpoint
        is tried at most `max_retries + 1` times per batch, each attempt
        bounded by `timeout_s`. Backoff doubles from `backoff_initial_s` up
        to `backoff_max_s`, with jitter so that many clients recovering from
        the same outage do not retry in lockstep. `send_dimensions=None`
        decides from the model name (see `supports_dimensions_parameter`).

        Raises `ValidationError` when the configuration cannot work (no API
        key for a remote endpoint, a non-HTTP URL, non-positive sizes), and
        `Unavailable` when the `openai` package is not installed.
        """
        if not model:
            raise ValidationError("the embedding model id must not be empty", provider="openai")
        if dimension < 1:
            raise ValidationError("the embedding dimension must be positive", provider="openai")
        if batch_size < 1:
            raise ValidationError("the embedding batch size must be positive", provider="openai")
        if max_retries < 0:
            raise ValidationError("max_retries must not be negative", provider="openai")
        if timeout_s <= 0 or backoff_initial_s < 0 or backoff_max_s < backoff_initial_s:
            raise ValidationError(
                "need timeout_s > 0 and 0 <= backoff_initial_s <= backoff_max_s",
                provider="openai",
            )
        url = (base_url or OPENAI_BASE_URL).rstrip("/")
        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
            raise ValidationError(
                f"MEMLATTICE_EMBEDDING_BASE_URL must be an http(s) URL such as "
                f"{OPENAI_BASE_URL}, got {display_url(url)!r}",
                provider="openai",
            )
        key = api_key.get_secret_value() if isinstance(api_key, SecretStr) else api_key
        if not key and not is_local_endpoint(url):
            raise ValidationError(
                f"the embedding endpoint {display_url(url)} needs an API key: set "
                "MEMLATTICE_EMBEDDING_API_KEY (any placeholder works for a server "
                "that ignores keys)",
                provider="openai",
            )
        require_openai()

        self.model_id = model
        self.dimension = dimension
        self.model = model_identity("openai", model, dimension)
        self.base_url = url
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.backoff_initial_s = backoff_initial_s
        self.backoff_max_s = backoff_max_s
        self.send_dimensions = (
            supports_dimensions_parameter(model) if send_dimensions is None else send_dimensions
        )
        self._api_key = SecretStr(key or _PLACEHOLDER_KEY)
        self._has_real_key = bool(key)
        self._client: openai.AsyncOpenAI | None = None

    @classmethod
    def from_settings(cls, settings: EmbeddingSettings, **overrides: Any) -> OpenAIEmbedder:
        """Build from `EmbeddingSettings`; `overrides` (e.g. backoff) win."""
        kwargs: dict[str, Any] = {
            "model": settings.model,
            "dimension": settings.dimension,
            "api_key": settings.api_key,
            "base_url": settings.base_url,
            "batch_size": settings.batch_size,
            "max_retries": settings.max_retries,
            "timeout_s": settings.timeout_s,
        }
        kwargs.update(overrides)
        return cls(**kwargs)

    def __repr__(self) -> str:
        # Spelled out so that no future attribute can leak the key into logs.
        return (
            f"OpenAIEmbedder(model={self.model!r}, dimension={self.dimension}, "
            f"base_url={display_url(self.base_url)!r})"
        )

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        batch_all = list(texts)
        vectors: list[list[float]] = []
        for start in range(0, len(batch_all), self.batch_size):
            vectors.extend(await self._embed_batch(batch_all[start : start + self.batch_size]))
        return vectors

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    # -- internals ---------------------------------------------------------------

    def _get_client(self) -> openai.AsyncOpenAI:
        if self._client is None:
            import openai

            self._client = openai.AsyncOpenAI(
                api_key=self._api_key.get_secret_value(),
                base_url=self.base_url,
                timeout=self.timeout_s,
                max_retries=0,
            )
        return self._client

    async def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        response = await self._create_with_retries(batch)
        return self._vectors_from(response.data, len(batch))

    async def _create_with_retries(
        self, batch: list[str]
    ) -> openai.types.CreateEmbeddingResponse:
        import openai

        client = self._get_client()
        extra: dict[str, Any] = {"dimensions": self.dimension} if self.send_dimensions else {}
        attempt = 0
        while True:
            failure: openai.APIError
            retry_after: float | None = None
            try:
                return await client.embeddings.create(
                    input=batch,
                    model=self.model_id,
                    encoding_format="float",
                    **extra,
                )
            except openai.APIConnectionError as exc:  # includes APITimeoutError
                failure = exc
            except openai.APIStatusError as exc:
                if not is_retryable(exc.status_code):
                    raise self._translate_status(exc) from exc
                failure = exc
                retry_after = retry_after_s(exc.response.headers)
            except openai.OpenAIError as exc:
                # A malformed response body and the like: retrying would get
                # the same answer, so report the endpoint as broken.
                raise Unavailable(
                    f"the embedding endpoint {display_url(self.base_url)} returned an "
                    f"unusable response: {self._scrub(str(exc))}",
                    provider="openai",
                ) from exc
            if attempt >= self.max_retries:
                raise self._give_up(failure, attempts=attempt + 1) from failure
            await asyncio.sleep(self._backoff_s(attempt, retry_after))
            attempt += 1

    def _backoff_s(self, attempt: int, retry_after: float | None) -> float:
        ceiling: float = min(self.backoff_max_s, self.backoff_initial_s * (2**attempt))
        # "Equal jitter": never zero (so we do back off), never in lockstep.
        delay = ceiling * (0.5 + random.random() / 2)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.backoff_max_s))
        return delay

    def _vectors_from(self, data: Sequence[Any], expected: int) -> list[list[float]]:
        where = display_url(self.base_url)
        if len(data) != expected:
            raise Unavailable(
                f"the embedding endpoint {where} returned {len(data)} embeddings "
                f"for {expected} inputs",
                provider="openai",
            )
        by_index: dict[int, list[float]] = {}
        for item in data:
            index = getattr(item, "index", None)
            vec = getattr(item, "embedding", None)
            if not isinstance(index, int) or not 0 <= index < expected or index in by_index:
                raise Unavailable(
                    f"the embedding endpoint {where} returned an invalid or duplicate "
                    f"index {index!r}",
                    provider="openai",
                )
            if not isinstance(vec, list):
                raise Unavailable(
                    f"the embedding endpoint {where} returned a non-list embedding; "
                    "does it honour encoding_format=float?",
                    provider="openai",
                )
            check_dimension(
                vec,
                self.dimension,
                what=f"the embedding returned by {where} for model {self.model_id!r}",
            )
            try:
                by_index[index] = l2_normalise(vec)
            except (TypeError, ValueError) as exc:
                raise Unavailable(
                    f"the embedding endpoint {where} returned a vector with "
                    f"non-numeric or non-finite values",
                    provider="openai",
                ) from exc
        return [by_index[i] for i in range(expected)]

    def _translate_status(self, exc: openai.APIStatusError) -> MemlatticeError:
        status = exc.status_code
        where = display_url(self.base_url)
        detail = self._server_message(exc)
        if status in (401, 403):
            hint = (
                "check MEMLATTICE_EMBEDDING_API_KEY"
                if self._has_real_key
                else "set MEMLATTICE_EMBEDDING_API_KEY"
            )
            return Unavailable(
                f"the embedding endpoint {where} refused the credentials "
                f"(HTTP {status}): {detail}; {hint}",
                provider="openai",
                status=status,
            )
        if status == 404:
            return Unavailable(
                f"the embedding endpoint {where} answered HTTP 404 for model "
                f"{self.model_id!r}: {detail}; check MEMLATTICE_EMBEDDING_MODEL and that "
                "MEMLATTICE_EMBEDDING_BASE_URL is the API root (usually ending in /v1)",
                provider="openai",
                status=status,
            )
        if 400 <= status < 500:
            return ValidationError(
                f"the embedding endpoint {where} rejected the input (HTTP {status}): {detail}",
                provider="openai",
                status=status,
            )
        return self._give_up(exc, attempts=1)

    def _give_up(self, exc: openai.APIError, *, attempts: int) -> Unavailable:
        import openai

        where = display_url(self.base_url)
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if isinstance(exc, openai.APITimeoutError):
            return Unavailable(
                f"the embedding endpoint {where} did not answer within "
                f"{self.timeout_s:g}s ({tries})",
                provider="openai",
            )
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            what = "rate-limited the request" if status == 429 else f"failed with HTTP {status}"
            return Unavailable(
                f"the embedding endpoint {where} {what} ({tries}): {self._server_message(exc)}",
                provider="openai",
                status=status,
            )
        return Unavailable(
            f"cannot reach the embedding endpoint {where} ({tries}): {self._scrub(exc.message)}",
            provider="openai",
        )

    def _server_message(self, exc: openai.APIStatusError) -> str:
        body = exc.body
        message: object = exc.message
        if isinstance(body, Mapping) and isinstance(body.get("message"), str):
            message = body["message"]
        text = self._scrub(str(message))
        if len(text) > _MAX_SERVER_MESSAGE:
            text = text[: _MAX_SERVER_MESSAGE - 1] + "…"
        return text

    def _scrub(self, text: str) -> str:
        """Remove the API key from text a server (or library) produced."""
        key = self._api_key.get_secret_value()
        if self._has_real_key and key:
            text = text.replace(key, "***")
        return text


__all__ = [
    "OPENAI_BASE_URL",
    "OpenAIEmbedder",
    "display_url",
    "is_local_endpoint",
    "supports_dimensions_parameter",
]
