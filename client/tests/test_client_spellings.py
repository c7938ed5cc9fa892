"""The client sends the API's current names; the old keywords warn and are translated.

`search(embedding=, agent_id=, user_id=, session_id=, task_id=)` are the current
spellings (docs/api.md, "One vocabulary"); `vector=` and `context=` still work
for a release with a DeprecationWarning that points at the caller's line, and
what goes over the wire is the same either way. An `httpx.MockTransport` plays
the server, so these need none (tests/integration/test_vocabulary.py runs the
spellings against the real one).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from memlattice_client import AsyncMemlatticeClient, MemlatticeClient

EDGE = {"id": "e1", "type": "RELATED", "sourceId": "a", "targetId": "b",
        "createdAt": "2026-01-02T03:04:05Z", "metadata": {}}


def _sync(answer: dict[str, Any]) -> tuple[MemlatticeClient, list[dict[str, Any]]]:
    """A client whose server answers `answer` and records each request's payload."""
    sent: list[dict[str, Any]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json={"data": answer})

    return MemlatticeClient("http://memory.test", transport=httpx.MockTransport(handle)), sent


def _search_input(**options: Any) -> dict[str, Any]:
    client, sent = _sync({"search": []})
    with client:
        assert client.search("n", "alice", **options) == []
    [payload] = sent
    search_input: dict[str, Any] = payload["variables"]["input"]
    return search_input


def test_search_sends_embedding_and_caller_ids_beside_scope() -> None:
    sent = _search_input(embedding=[0.5, 0.5], user_id="u1", session_id="s1", scope="session",
                         filter={"tags_any": ["t"]})
    assert sent == {"filter": {"namespace": "n", "tagsAny": ["t"]}, "query": "alice",
                    "embedding": [0.5, 0.5], "userId": "u1", "sessionId": "s1",
                    "scope": "SESSION"}


def test_search_vector_keyword_warns_at_the_caller_and_sends_embedding() -> None:
    with pytest.warns(DeprecationWarning, match=r"vector=.*embedding=") as caught:
        sent = _search_input(vector=[0.5, 0.5])
    assert [w.filename for w in caught] == [__file__]
    assert sent == {"filter": {"namespace": "n"}, "query": "alice", "embedding": [0.5, 0.5]}


def test_search_context_keyword_warns_and_sends_the_ids_on_the_input() -> None:
    with pytest.warns(DeprecationWarning, match=r"context=.*user_id") as caught:
        sent = _search_input(context={"user_id": "u1", "sessionId": "s1"}, scope="session")
    assert [w.filename for w in caught] == [__file__]
    assert sent == {"filter": {"namespace": "n"}, "query": "alice", "userId": "u1",
                    "sessionId": "s1", "scope": "SESSION"}


@pytest.mark.parametrize("options", [
    {"vector": [1.0], "embedding": [1.0]},
    {"context": {"user_id": "u1"}, "user_id": "u2"},
    {"context": {"user_id": "u1"}, "user_id": "u1"},
    {"context": {"account": "u1"}},
])
def test_search_refuses_both_spellings_or_unknown_context_ids(options: dict[str, Any]) -> None:
    with pytest.deprecated_call(), pytest.raises(TypeError):
        _search_input(**options)


def test_async_search_warns_at_the_awaiting_line() -> None:
    sent: list[dict[str, Any]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json={"data": {"search": []}})

    async def search() -> None:
        async with AsyncMemlatticeClient("http://memory.test",
                                         transport=httpx.MockTransport(handle)) as client:
            await client.search("n", None, context={"task_id": "t1", "user_id": "u1",
                                                    "session_id": "s1"})

    with pytest.warns(DeprecationWarning) as caught:
        asyncio.run(search())
    assert [w.filename for w in caught] == [__file__]
    assert sent[0]["variables"]["input"] == {"filter": {"namespace": "n"}, "query": None,
                                             "taskId": "t1", "userId": "u1",
                                             "sessionId": "s1"}


def test_add_edge_passes_the_namespace_as_the_argument() -> None:
    client, sent = _sync({"addEdge": EDGE})
    with client:
        edge = client.add_edge("n", "a", "b", "related", metadata={"why": "x"})
    assert edge.id == "e1"
    [payload] = sent
    assert "addEdge(namespace: $ns, input: $input)" in payload["query"]
    assert payload["variables"] == {"ns": "n", "input": {
        "sourceId": "a", "targetId": "b", "type": "RELATED", "metadata": {"why": "x"}}}
