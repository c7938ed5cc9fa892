"""OpenAIEmbedder against a real OpenAI-compatible HTTP server on 127.0.0.1.

The server is a small Starlette app served by uvicorn in a background thread;
it records every request so the tests can check what actually went over the
wire (batch sizes, the `dimensions` parameter, the Authorization header).
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import socket
import struct
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import uvicorn
from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from memlattice.core.errors import DimensionMismatch, Unavailable, ValidationError
from memlattice.core.settings import EmbeddingSettings
from memlattice.embeddings import OpenAIEmbedder, check_dimension, l2_normalise, make_embedder

DIM = 8
API_KEY = "sk-test-key-0123456789"


def raw_vector(text: str, dim: int) -> list[float]:
    """Deterministic, deliberately not normalised (norm well above 1)."""
    out: list[float] = []
    counter = 0
    while len(out) < dim:
        block = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        out.extend(3.0 + v / 1000.0 for (v,) in struct.iter_unpack(">h", block))
        counter += 1
    return out[:dim]


@dataclass
class FakeEndpoint:
    """What the fake server does next, and what it has seen."""

    base_url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    fail_next: int = 0
    fail_status: int = 500
    force_dimension: int | None = None
    required_key: str | None = API_KEY
    delay_s: float = 0.0

    def reset(self) -> None:
        self.requests.clear()
        self.fail_next = 0
        self.fail_status = 500
        self.force_dimension = None
        self.required_key = API_KEY
        self.delay_s = 0.0


def build_app(state: FakeEndpoint) -> Starlette:
    def error(status: int, message: str, kind: str) -> JSONResponse:
        return JSONResponse({"error": {"message": message, "type": kind}}, status_code=status)

    async def embeddings(request: Request) -> JSONResponse:
        body = await request.json()
        authorization = request.headers.get("authorization", "")
        state.requests.append({"body": body, "authorization": authorization})
        if state.delay_s:
            await asyncio.sleep(state.delay_s)
        if state.required_key is not None and authorization != f"Bearer {state.required_key}":
            provided = authorization.removeprefix("Bearer ")
            # Real providers have echoed (parts of) the key back; ours echoes all of it.
            return error(401, f"Incorrect API key provided: {provided}", "invalid_request_error")
        if state.fail_next > 0:
            state.fail_next -= 1
            return error(state.fail_status, "the server had an error", "server_error")
        inputs = body["input"]
        if isinstance(inputs, str):
            inputs = [inputs]
        if "bad" in inputs:
            return error(400, "input 'bad' is not allowed", "invalid_request_error")
        dim = state.force_dimension or body.get("dimensions") or DIM
        data = [
            {"object": "embedding", "index": i, "embedding": raw_vector(text, dim)}
            for i, text in enumerate(inputs)
        ]
        data.reverse()  # the protocol orders by `index`, not by position
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)},
            }
        )

    return Starlette(routes=[Route("/v1/embeddings", embeddings, methods=["POST"])])


@pytest.fixture(scope="module")
def _server() -> Iterator[FakeEndpoint]:
    state = FakeEndpoint()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))  # a free port, held until uvicorn takes over
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        build_app(state), log_level="warning", lifespan="off", ws="none", access_log=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the fake embedding server did not start")
        time.sleep(0.01)
    state.base_url = f"http://127.0.0.1:{port}/v1"
    try:
        yield state
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@pytest.fixture
def endpoint(_server: FakeEndpoint) -> FakeEndpoint:
    _server.reset()
    return _server


@pytest.fixture
async def make(endpoint: FakeEndpoint) -> AsyncIterator[Callable[..., OpenAIEmbedder]]:
    """Build embedders pointed at the fake server; all are closed afterwards."""
    built: list[OpenAIEmbedder] = []

    def factory(**overrides: Any) -> OpenAIEmbedder:
        kwargs: dict[str, Any] = {
            "model": "text-embedding-3-small",
            "dimension": DIM,
            "api_key": API_KEY,
            "base_url": endpoint.base_url,
            "batch_size": 64,
            "max_retries": 3,
            "timeout_s": 5.0,
            "backoff_initial_s": 0.001,
            "backoff_max_s": 0.01,
        }
        kwargs.update(overrides)
        embedder = OpenAIEmbedder(**kwargs)
        built.append(embedder)
        return embedder

    yield factory
    for embedder in built:
        await embedder.aclose()


def _norm(vec: list[float]) -> float:
    return math.sqrt(sum(x * x for x in vec))


async def test_batches_orders_by_index_and_normalises(
    endpoint: FakeEndpoint, make: Callable[..., OpenAIEmbedder]
) -> None:
    texts = [f"memory number {i}" for i in range(5)]
    embedder = make(batch_size=2)
    assert embedder.model == f"openai/text-embedding-3-small/{DIM}"

    vectors = await embedder.embed(texts)

    assert [len(r["body"]["input"]) for r in endpoint.requests] == [2, 2, 1]  # ceil(5/2)
    assert [t for r in endpoint.requests for t in r["body"]["input"]] == texts
    for body in (r["body"] for r in endpoint.requests):
        assert body["dimensions"] == DIM  # text-embedding-3 accepts it
        assert body["encoding_format"] == "float"
        assert body["model"] == "text-embedding-3-small"
    assert all(r["authorization"] == f"Bearer {API_KEY}" for r in endpoint.requests)
    assert len(vectors) == len(texts)
    for text, vec in zip(texts, vectors, strict=True):
        assert len(vec) == DIM
        assert math.isclose(_norm(vec), 1.0, rel_tol=1e-12)
        assert vec == pytest.approx(l2_normalise(raw_vector(text, DIM)))


async def test_dimensions_parameter_only_for_models_that_support_it(
    endpoint: FakeEndpoint, make: Callable[..., OpenAIEmbedder]
) -> None:
    await make(model="nomic-embed-text").embed(["hello"])
    await make(model="text-embedding-ada-002").embed(["hello"])
    assert [("dimensions" in r["body"]) for r in endpoint.requests] == [False, False]


async def test_empty_input_sends_nothing(
    endpoint: FakeEndpoint, make: Callable[..., OpenAIEmbedder]
) -> None:
    assert await make().embed([]) == []
    assert endpoint.requests == []


async def test_retries_server_errors_then_succeeds(
    endpoint: FakeEndpoint, make: Callable[..., OpenAIEmbedder]
) -> None:
    endpoint.fail_next = 2
    [vec] = await make(max_retries=3).embed(["survives two failures"])
    assert len(endpoint.requests) == 3
    assert vec == pytest.approx(l2_normalise(raw_vector("survives two failures", DIM)))


async def test_persistent_server_error_is_unavailable_after_exactly_the_configured_attempts(
    endpoint: FakeEndpoint, make: Callable[..., OpenAIEmbedder]
) -> None:
    endpoint.fail_next = 1_000
    with pytest.raises(Unavailable, match=r"HTTP 500 \(3 attempts\)") as info:
        await make(max_retries=2).embed(["never works"])
    # Our loop retries, the openai client does not: 1 + max_retries, not more.
    assert len(endpoint.requests) == 3
    assert info.value.details["status"] == 500


async def test_persistent_rate_limit_is_unavailable(
    endpoint: FakeEndpoint, make: Callable[..., OpenAIEmbedder]
) -> None:
    endpoint.fail_next = 1_000
    endpoint.fail_status = 429
    with pytest.raises(Unavailable, match="rate-limited"):
        await make(max_retries=1).embed(["too fast"])
    assert len(endpoint.requests) == 2


async def test_wrong_dimension_from_endpoint_is_a_dimension_mismatch(
    endpoint: FakeEndpoint, make: Callable[..., OpenAIEmbedder]
) -> None:
    endpoint.force_dimension = 5
    expected = f"has 5 dimensions but the index expects {DIM}"
    with pytest.raises(DimensionMismatch, match=expected) as info:
        await make(model="nomic-embed-text").embed(["hello"])
    assert info.value.details == {"expected": DIM, "actual": 5}
    assert info.value.code == "DIMENSION_MISMATCH"


def test_shared_helpers() -> None:
    assert l2_normalise([3.0, 4.0]) == [0.6, 0.8]
    assert l2_normalise([0.0, 0.0, 0.0]) == [0.0, 0.0, 0.0]  # zero stays zero
    with pytest.raises(ValueError):
        l2_normalise([1.0, math.nan])
    check_dimension([0.0] * 4, 4, what="embedding")
    with pytest.raises(DimensionMismatch) as info:
        check_dimension([1.0, 2.0, 3.0], 256, what="embedding")
    assert str(info.value) == "embedding has 3 dimensions but the index expects 256"
    assert info.value.extensions() == {
        "code": "DIMENSION_MISMATCH",
        "expected": 256,
        "actual": 3,
    }


async def test_bad_request_is_a_validation_error_without_retries(
    endpoint: FakeEndpoint, make: Callable[..., OpenAIEmbedder]
) -> None:
    with pytest.raises(ValidationError, match="not allowed") as info:
        await make().embed(["fine", "bad"])
    assert not isinstance(info.value, DimensionMismatch)
    assert info.value.details["status"] == 400
    assert len(endpoint.requests) == 1


async def test_api_key_never_appears_in_errors_or_repr(
    endpoint: FakeEndpoint, make: Callable[..., OpenAIEmbedder]
) -> None:
    secret = "sk-wrong-but-secret-abcdef"
    embedder = make(api_key=secret)
    with pytest.raises(Unavailable, match="refused the credentials") as info:
        await embedder.embed(["hello"])
    assert endpoint.requests[0]["authorization"] == f"Bearer {secret}"  # the server saw it
    for text in (str(info.value), repr(info.value.details), repr(embedder)):
        assert secret not in text
    assert len(endpoint.requests) == 1  # 401 is not retried


async def test_timeout_is_retried_then_unavailable(
    endpoint: FakeEndpoint, make: Callable[..., OpenAIEmbedder]
) -> None:
    endpoint.delay_s = 0.5
    with pytest.raises(Unavailable, match=r"did not answer within 0.1s \(2 attempts\)"):
        await make(timeout_s=0.1, max_retries=1).embed(["slow"])


async def test_unreachable_endpoint_is_unavailable(make: Callable[..., OpenAIEmbedder]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Nothing listens on `port` any more.
    with pytest.raises(Unavailable, match=r"cannot reach .*127\.0\.0\.1:\d+/v1 \(2 attempts\)"):
        await make(base_url=f"http://127.0.0.1:{port}/v1", max_retries=1).embed(["x"])


async def test_factory_local_endpoint_needs_no_key_and_never_sends_the_env_key(
    endpoint: FakeEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    endpoint.required_key = None
    embedder = make_embedder(
        EmbeddingSettings(
            provider="openai",
            model="nomic-embed-text",
            dimension=DIM,
            base_url=endpoint.base_url,
            api_key=None,
        )
    )
    assert isinstance(embedder, OpenAIEmbedder)
    try:
        [vec] = await embedder.embed(["local"])
    finally:
        await embedder.aclose()
    assert len(vec) == DIM
    assert "sk-from-the-environment" not in endpoint.requests[0]["authorization"]


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"model": "text-embedding-3-small"}, "needs an API key"),
        (
            {"model": "text-embedding-3-small", "base_url": "https://embed.example.com/v1"},
            "needs an API key",
        ),
        ({"model": "text-embedding-3-small", "base_url": "ftp://x/v1", "api_key": "k"}, "http"),
        ({"api_key": "k"}, "MEMLATTICE_EMBEDDING_MODEL"),  # left at the WordLlama default
    ],
)
def test_factory_rejects_settings_that_cannot_work(
    overrides: dict[str, Any], match: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fields: dict[str, Any] = {
        "provider": "openai",
        "model": "l2_supercat",
        "base_url": None,
        "api_key": None,
        **overrides,
    }
    settings = EmbeddingSettings(**fields)
    with pytest.raises(ValidationError, match=match):
        make_embedder(settings)


def test_factory_passes_settings_through() -> None:
    embedder = make_embedder(
        EmbeddingSettings(
            provider="openai",
            model="text-embedding-3-large",
            dimension=1024,
            api_key=SecretStr("sk-abc"),
            batch_size=16,
            max_retries=2,
            timeout_s=7.5,
        )
    )
    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.model == "openai/text-embedding-3-large/1024"
    assert embedder.base_url == "https://api.openai.com/v1"
    assert (embedder.batch_size, embedder.max_retries, embedder.timeout_s) == (16, 2, 7.5)
    assert embedder.send_dimensions is True
    assert "sk-abc" not in repr(embedder)
