"""Automatic persisted queries on the real app, as Apollo's link sends them (issue 29, item 6).

Hash first: the standard `PersistedQueryNotFound`; hash and text: it runs and
is remembered; hash alone (POST or a hashed GET): it runs again. Never a way
around anything: without a key it is a 401, a hash registered by one key is
unknown to another, a text that does not match its hash is refused, a
remembered document is held to the limits as its text is, and a hashed GET
still may not mutate.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

import httpx

from memlattice.core.settings import Settings
from memlattice.graph.keys import ApiKeyGraph
from memlattice.server.app import create_app, runtime_of
from memlattice.services.apikeys import KeySpec, create_key
from tests._live import serve_in_thread
from tests._node import node_json

ACCEPT = "application/graphql-response+json,application/json;q=0.9"


def persisted(query: str) -> dict[str, Any]:
    return {"persistedQuery": {"version": 1,
                               "sha256Hash": hashlib.sha256(query.encode()).hexdigest()}}


async def send(client: httpx.AsyncClient, key: str | None, *, query: str | None = None,
               extensions: dict[str, Any] | None = None, variables: dict[str, Any] | None = None,
               get: bool = False) -> httpx.Response:
    headers = {"accept": ACCEPT}
    if key:
        headers["authorization"] = f"Bearer {key}"
    body: dict[str, Any] = {"variables": variables or {}, "extensions": extensions}
    if query is not None:
        body["query"] = query
    if get:
        params = {name: json.dumps(value) if isinstance(value, dict) else value
                  for name, value in body.items()}
        return await client.get("/graphql", params=params, headers=headers)
    return await client.post("/graphql", json=body, headers=headers)


def anonymous(session_app: tuple[Any, Any]) -> httpx.AsyncClient:
    """A client on the session app (keys on) that sends no key of its own."""
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=session_app[1]),
                             base_url="http://test")


async def test_hash_first_then_text_then_hash_alone(
        session_app: tuple[Any, Any], admin_key: str) -> None:
    query = f"query Count($ns: String!) {{ memories(filter: {{namespace: $ns}}) {{ totalCount }} }} # {uuid.uuid4()}"
    variables = {"ns": f"apq-{uuid.uuid4().hex[:8]}"}
    async with anonymous(session_app) as client:
        missing = await send(client, admin_key, extensions=persisted(query), variables=variables)
        assert missing.status_code == 200, missing.text
        assert "no-cache" in missing.headers["cache-control"]
        body = missing.json()
        assert "data" not in body
        (error,) = body["errors"]
        assert error["message"] == "PersistedQueryNotFound"
        assert error["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"

        full = await send(client, admin_key, query=query, extensions=persisted(query),
                          variables=variables)
        assert full.json() == {"data": {"memories": {"totalCount": 0}}}, full.text
        again = await send(client, admin_key, extensions=persisted(query), variables=variables)
        assert again.json() == full.json()
        hashed_get = await send(client, admin_key, extensions=persisted(query),
                                variables=variables, get=True)
        assert hashed_get.status_code == 200 and hashed_get.json() == full.json()

        # Without a key: refused before the store is even asked, by POST or GET.
        for get in (False, True):
            refused = await send(client, None, extensions=persisted(query), variables=variables,
                                 get=get)
            assert refused.status_code == 401, refused.text


async def test_another_key_cannot_use_a_hash_it_did_not_register(
        session_app: tuple[Any, Any], admin_key: str) -> None:
    ns = f"apq-{uuid.uuid4().hex[:8]}"
    query = f'{{ memories(filter: {{namespace: "{ns}"}}) {{ totalCount }} }}'
    graph = ApiKeyGraph(runtime_of(session_app[0]).client)
    _, other = await create_key(graph, KeySpec(name="apq-other", namespaces=(ns,)))
    async with anonymous(session_app) as client:
        registered = await send(client, admin_key, query=query, extensions=persisted(query))
        assert registered.json()["data"]["memories"]["totalCount"] == 0
        unknown = await send(client, other, extensions=persisted(query))
        assert unknown.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"


async def test_a_text_must_match_its_hash(session_app: tuple[Any, Any], admin_key: str) -> None:
    async with anonymous(session_app) as client:
        wrong = await send(client, admin_key, query="{ __typename }",
                           extensions=persisted("{ something { else } }"))
        assert wrong.status_code == 400
        assert wrong.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
        # and it was not remembered under the hash it claimed
        after = await send(client, admin_key, extensions=persisted("{ something { else } }"))
        assert after.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"
        odd = await send(client, admin_key, query="{ __typename }",
                         extensions={"persistedQuery": {"version": 7, "sha256Hash": "0" * 64}})
        assert odd.status_code == 400


async def test_a_remembered_document_is_held_to_the_limits_and_the_method(
        session_app: tuple[Any, Any], admin_key: str) -> None:
    aliases = " ".join(f'a{i}: memories(filter: {{namespace: "x"}}) {{ totalCount }}'
                       for i in range(31))  # one more than MEMLATTICE_LIMIT_MAX_ALIASES
    too_many = "{ " + aliases + " }"
    write = ("mutation($input: MemoryInput!) { writeMemory(input: $input) { id } }")
    ns = f"apq-{uuid.uuid4().hex[:8]}"
    async with anonymous(session_app) as client:
        for attempt in ({"query": too_many}, {}):  # registering, then by hash alone
            refused = await send(client, admin_key, extensions=persisted(too_many), **attempt)
            assert refused.status_code == 400, refused.text
            assert refused.json()["errors"][0]["extensions"]["code"] == "TOO_COMPLEX"
        written = await send(client, admin_key, query=write, extensions=persisted(write),
                             variables={"input": {"namespace": ns, "content": "by hash"}})
        assert written.json()["data"]["writeMemory"]["id"], written.text
        by_get = await send(client, admin_key, extensions=persisted(write), get=True,
                            variables={"input": {"namespace": ns, "content": "by GET"}})
        assert by_get.status_code == 405, by_get.text


def test_apollo_clients_persisted_query_link_end_to_end(settings: Settings,
                                                       admin_key: str) -> None:
    """Apollo Client 4 and its PersistedQueryLink (tests/node), unchanged, on a live server:
    hashed GET, PersistedQueryNotFound, the text by POST, then the hash alone."""
    ns = f"apq-{uuid.uuid4().hex[:8]}"
    app = create_app(settings.model_copy(update={"auth_mode": "keys"}))
    with serve_in_thread(app) as url:
        report = node_json("apollo_persisted.mjs", url + "/graphql", admin_key, ns)
    results, requests = report["results"], report["requests"]
    assert results["query"] == {"data": {"memories": {
        "__typename": "MemoryConnection", "totalCount": 0}}}, report
    assert results["mutation"]["data"]["writeMemory"]["content"].startswith("written"), report
    assert results["again"]["data"]["memories"]["totalCount"] == 1, report
    sent = [(r["method"], r["withText"], r["status"]) for r in requests]
    assert sent == [("GET", False, 200), ("POST", True, 200),   # the query: miss, then text
                    ("POST", False, 200), ("POST", True, 200),  # the mutation: the same
                    ("GET", False, 200)], report                # the query again: hash only
    assert all(r["hash"] for r in requests)
