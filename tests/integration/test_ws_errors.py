"""Refused operations over graphql-transport-ws, driven by the graphql-ws npm client (issue 29, item 3).

A document with a syntax error, several operations without `operationName`,
nesting past the limit, a validation failure, a variable that does not
coerce or a cost over the limit gets the protocol's `error` message with the
code HTTP gives the same document (never a bare `complete`, never a closed
socket), and the socket goes on serving: afterwards a subscription resumed
from a cursor still gets what it missed, in order, through the same client.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from memlattice.core.nesting import MAX_REQUEST_DEPTH
from memlattice.core.settings import LimitsSettings, Settings
from memlattice.server.app import create_app
from tests._live import serve_in_thread
from tests._node import node_json

DEEP = "{ " + "a { " * MAX_REQUEST_DEPTH + "b" + " }" * (MAX_REQUEST_DEPTH + 1)
REFUSED: list[tuple[str, dict[str, Any], str | None, str]] = [
    ("{ __typename ", {}, None, "BAD_REQUEST"),
    ("query A { __typename } query B { __typename }", {}, None, "BAD_REQUEST"),
    (DEEP, {}, None, "BAD_REQUEST"),
    ("{ nosuchfield }", {}, None, "VALIDATION"),
    ("query($n: Int!) { memories(filter: {namespace: \"x\"}, first: $n) { totalCount } }",
     {"n": "many"}, None, "VALIDATION"),
    ('{ memories(filter: {namespace: "x"}) { edges { node { id } } } }', {}, None,
     "TOO_COMPLEX"),
    ("subscription { memoryEvents(namespace: \"x\") { nosuch } }", {}, None, "VALIDATION"),
    ("subscription { memoryEvents(namespace: \"x\") { memory { id } } }", {}, None,
     "TOO_COMPLEX"),
]
EVENTS = """subscription($ns: String!, $after: String) {
  memoryEvents(namespace: $ns, after: $after) { seq cursor kind memoryId } }"""
WRITE = "mutation($input: MemoryInput!) { writeMemory(input: $input) { id } }"


@pytest.fixture(scope="module")
def live(settings: Settings) -> Iterator[str]:
    """The real app with keys, its depth limit at 2 so a small document crosses it."""
    app = create_app(settings.model_copy(update={
        "auth_mode": "keys", "limits": LimitsSettings(max_depth=2)}))
    with serve_in_thread(app) as url:
        yield url


def operations(live: str, key: str, ops: list[dict[str, Any]]) -> dict[str, Any]:
    url = live.replace("http://", "ws://") + "/graphql"
    result: dict[str, Any] = node_json("ws_operations.mjs", url, key, json.dumps(ops))
    return result


def http_code(live: str, key: str, query: str, variables: dict[str, Any]) -> str:
    body = httpx.post(live + "/graphql", json={"query": query, "variables": variables},
                      headers={"authorization": f"Bearer {key}"}, timeout=60).json()
    code: str = body["errors"][0]["extensions"]["code"]
    return code


def write(live: str, key: str, ns: str, content: str) -> str:
    body = httpx.post(live + "/graphql", timeout=60, headers={"authorization": f"Bearer {key}"},
                      json={"query": WRITE, "variables": {
                          "input": {"namespace": ns, "content": content}}}).json()
    memory_id: str = body["data"]["writeMemory"]["id"]
    return memory_id


def test_refusals_are_error_messages_with_the_http_codes_and_the_socket_goes_on(
        live: str, admin_key: str) -> None:
    ns = f"wserr-{uuid.uuid4().hex[:8]}"
    (hello,) = operations(live, admin_key, [{"query": EVENTS, "variables": {"ns": ns},
                                             "take": 1}])["results"][0]["next"]
    cursor = hello["data"]["memoryEvents"]["cursor"]
    missed = [write(live, admin_key, ns, f"while away {i}") for i in range(2)]

    ops = [{"query": query, "variables": variables, "operationName": name}
           for query, variables, name, _ in REFUSED]
    ops.append({"query": EVENTS, "variables": {"ns": ns, "after": cursor}, "take": 3})
    report = operations(live, admin_key, ops)
    *refused, resumed = report["results"]

    for (query, variables, _, code), outcome in zip(REFUSED, refused, strict=True):
        assert outcome["closed"] is None and not outcome["completed"], (query, outcome)
        assert outcome["next"] == [], (query, outcome)
        assert [e["extensions"]["code"] for e in outcome["error"]] == [code], (query, outcome)
        if not query.startswith("subscription"):
            assert http_code(live, admin_key, query, variables) == code, query

    kinds = [n["data"]["memoryEvents"]["kind"] for n in resumed["next"]]
    assert kinds == ["SUBSCRIBED", "WRITTEN", "WRITTEN"], resumed
    written = resumed["next"][1:]
    assert [n["data"]["memoryEvents"]["memoryId"] for n in written] == missed
    seqs = [n["data"]["memoryEvents"]["seq"] for n in written]
    assert seqs == sorted(seqs) and seqs[1] == seqs[0] + 1
    # The server never closed the socket (the client's own close at the end is 1000).
    assert report["closed"] is None or report["closed"]["code"] == 1000, report["closed"]
