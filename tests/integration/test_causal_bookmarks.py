"""Causal bookmarks across two real service processes (`x-memlattice-bookmark`).

Two servers (`tests.integration._server`) share the suite's Neo4j and nothing
else. A client writes through one and reads through the other, carrying the
bookmark the write's response named. The suite's Neo4j is one server, where
every read already sees every commit, so a read seeing the write proves
little on its own; what proves that the header reaches the transactions of
the request is that a bookmark Neo4j cannot use makes the request fail, on
either process and for reads and writes alike, and writes nothing. The
replication delay those bookmarks cover exists only on a real cluster.
"""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import httpx
import pytest

from memlattice.core import bookmarks
from memlattice_client import BadBookmarkError, MemlatticeClient, NotFoundError
from tests.integration._support import GET, LIST, WRITE, mem, seeded

HEADER = bookmarks.HEADER
# Well-formed for the service, refused by Neo4j (not a bookmark it ever issued).
UNUSABLE = bookmarks.encode(["FB:not-a-bookmark-neo4j-issued"])


@pytest.fixture
def servers(two_processes: tuple[str, str]) -> tuple[str, str]:
    """Two service processes on the same Neo4j (the session's, tests/integration/conftest.py):
    their base URLs."""
    return two_processes


@pytest.fixture
def ns() -> str:
    return f"test/{uuid.uuid4().hex[:12]}"


def post(base: str, query: str, variables: dict[str, Any],
         bookmark: str | None = None) -> httpx.Response:
    headers = {HEADER: bookmark} if bookmark is not None else {}
    return httpx.post(base + "/graphql", json={"query": query, "variables": variables},
                      headers=headers, timeout=120)


def listed(base: str, namespace: str) -> list[str]:
    """The memories of `namespace`, read through `base` (no bookmark)."""
    answer = post(base, LIST, {"filter": {"namespace": namespace}, "first": 10}).json()
    assert not answer.get("errors"), answer
    return [e["node"]["content"] for e in answer["data"]["memories"]["edges"]]


def test_a_write_through_one_process_is_read_through_the_other(
        servers: tuple[str, str], ns: str) -> None:
    a, b = servers
    wrote = post(a, WRITE, {"input": mem(ns, "written through a")})
    assert not wrote.json().get("errors"), wrote.json()
    token = wrote.headers.get(HEADER)
    assert token, "the write's response carried no bookmark"
    assert bookmarks.decode([token]), "the bookmark names no Neo4j bookmark"
    memory_id = wrote.json()["data"]["writeMemory"]["id"]

    read = post(b, GET, {"ns": ns, "id": memory_id}, bookmark=token)
    assert not read.json().get("errors"), read.json()
    assert read.json()["data"]["memory"]["content"] == "written through a"
    # The read's answer carries the chain on: a bookmark Neo4j accepts again.
    after_read = read.headers.get(HEADER)
    assert after_read and bookmarks.decode([after_read])
    again = post(a, GET, {"ns": ns, "id": memory_id}, bookmark=after_read)
    assert again.json()["data"]["memory"]["id"] == memory_id


def test_each_write_moves_the_bookmark_on(servers: tuple[str, str], ns: str) -> None:
    a, b = servers
    first = post(a, WRITE, {"input": mem(ns, "one")}).headers[HEADER]
    second = post(b, WRITE, {"input": mem(ns, "two")}, bookmark=first).headers[HEADER]
    assert bookmarks.decode([second]) != bookmarks.decode([first])


@pytest.mark.parametrize("through", [0, 1])
def test_a_bookmark_neo4j_refuses_fails_the_request_and_writes_nothing(
        servers: tuple[str, str], ns: str, through: int) -> None:
    """The header reaches the request's transactions, on either process."""
    base = servers[through]
    wrote = post(base, WRITE, {"input": mem(ns, "must not be written")}, bookmark=UNUSABLE)
    errors = wrote.json().get("errors")
    assert errors and {e["extensions"]["code"] for e in errors} == {"BAD_BOOKMARK"}, errors
    assert wrote.json().get("data") in (None, {"writeMemory": None})
    read = post(base, LIST, {"filter": {"namespace": ns}, "first": 10}, bookmark=UNUSABLE)
    assert read.json()["errors"][0]["extensions"]["code"] == "BAD_BOOKMARK"
    assert listed(servers[1 - through], ns) == []
    assert listed(base, ns) == []


@pytest.mark.parametrize("value", [
    "not a token",
    base64.urlsafe_b64encode(json.dumps({"bookmarks": 1}).encode()).decode(),
    ",".join([bookmarks.encode(["FB:x"])] * 1050),
])
def test_a_header_the_service_cannot_read_is_a_coded_400(
        servers: tuple[str, str], ns: str, value: str) -> None:
    a, _ = servers
    refused = post(a, WRITE, {"input": mem(ns, "never")}, bookmark=value)
    assert refused.status_code == 400
    error = refused.json()["errors"][0]
    assert error["extensions"]["code"] == "BAD_BOOKMARK"
    assert HEADER in error["message"] and error["extensions"]["requestId"]
    assert "data" not in refused.json()
    assert listed(a, ns) == []


class Balancer(httpx.BaseTransport):
    """A load balancer in front of the two processes: each request goes to the
    other one than the request before; it notes the bookmark each request sent."""

    def __init__(self, bases: tuple[str, str]) -> None:
        self.bases = bases
        self.turn = 0
        self.sent: list[str | None] = []
        self.answered: list[str | None] = []
        self.http = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        target = httpx.URL(self.bases[self.turn % 2])
        self.turn += 1
        request.url = request.url.copy_with(host=target.host, port=target.port)
        self.sent.append(request.headers.get(HEADER))
        response = self.http.handle_request(request)
        self.answered.append(response.headers.get(HEADER))
        return response

    def close(self) -> None:
        self.http.close()


def test_the_python_client_carries_the_bookmark_from_replica_to_replica(
        servers: tuple[str, str], ns: str) -> None:
    balancer = Balancer(servers)
    with MemlatticeClient("http://balanced", transport=balancer) as client:
        assert client.bookmark is None
        for n in range(3):
            written = client.write_memory(ns, f"note {n}", embedding=seeded(n))
            assert client.memory(ns, written.id).content == f"note {n}"  # the other process
    assert balancer.sent[0] is None
    # Every later request sent exactly what the one before was answered.
    assert balancer.sent[1:] == balancer.answered[:-1]
    assert all(balancer.answered)
    assert client.bookmark == balancer.answered[-1]


def test_a_bookmark_hands_over_to_another_client(servers: tuple[str, str], ns: str) -> None:
    a, b = servers
    with MemlatticeClient(a) as writer:
        written = writer.write_memory(ns, "handed over", embedding=seeded(7))
        handed = writer.bookmark
    assert handed
    with MemlatticeClient(b, bookmark=handed) as reader:
        assert reader.memory(ns, written.id).content == "handed over"


def test_opting_out_sends_no_bookmark(servers: tuple[str, str], ns: str) -> None:
    balancer = Balancer(servers)
    with MemlatticeClient("http://balanced", transport=balancer, causal=False) as client:
        client.write_memory(ns, "uncaused", embedding=seeded(3))
        with pytest.raises(NotFoundError):
            client.memory(ns, "no-such-id")
        assert client.bookmark is None
    assert balancer.sent == [None, None]
    assert balancer.answered[0]  # the server still offers one


def test_the_client_forgets_a_refused_bookmark(servers: tuple[str, str], ns: str) -> None:
    a, _ = servers
    with MemlatticeClient(a, bookmark=UNUSABLE) as client:
        with pytest.raises(BadBookmarkError):
            client.write_memory(ns, "refused", embedding=seeded(1))
        assert client.bookmark is None
        client.write_memory(ns, "accepted", embedding=seeded(2))
        assert client.bookmark
    assert listed(a, ns) == ["accepted"]


async def test_with_keys_the_key_check_waits_for_the_bookmark_too(
        app_client: httpx.AsyncClient, ns: str) -> None:
    """The session app (keys mode, in this process): the key lookup is the request's
    first transaction, so a bookmark Neo4j refuses stops the request there, coded,
    and one it accepts lets the request through with the chain carried on."""
    refused = await app_client.post("/graphql", headers={HEADER: UNUSABLE}, json={
        "query": WRITE, "variables": {"input": mem(ns, "never")}})
    assert refused.json()["errors"][0]["extensions"]["code"] == "BAD_BOOKMARK"
    wrote = await app_client.post("/graphql", json={
        "query": WRITE, "variables": {"input": mem(ns, "once")}})
    token = wrote.headers[HEADER]
    read = await app_client.post("/graphql", headers={HEADER: token}, json={
        "query": LIST, "variables": {"filter": {"namespace": ns}, "first": 10}})
    assert [e["node"]["content"] for e in read.json()["data"]["memories"]["edges"]] == [
        "once"]
    assert bookmarks.decode([read.headers[HEADER]])
