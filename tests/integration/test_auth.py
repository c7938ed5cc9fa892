"""API keys end to end: the CLI lifecycle, UNAUTHENTICATED and FORBIDDEN, scope limits.

Everything runs against the session app in `keys` mode and the real graph;
keys are minted by the same code as `memlattice keys create`.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from typing import Any

import httpx
import pytest

from memlattice import cli
from memlattice.core.model import Scope, Sensitivity
from memlattice.core.settings import Settings
from tests.conftest import Neo4jServer
from tests.integration._apps import app_with
from tests.integration._keys import as_key, client_with, make_key
from tests.integration._support import (
    ADD_EDGE,
    DELETE,
    FORGET,
    GET,
    LIST,
    SEARCH,
    UPDATE,
    WRITE,
    code,
    count_memories,
    mem,
)

CONFIGURE = """mutation($ns: String!) {
  configureNamespace(namespace: $ns, input: {decayHalfLifeDays: 3}) { version } }"""


def run_cli(*argv: str) -> None:
    cli.main(list(argv))


async def test_key_lifecycle_through_the_cli(
    session_app: Any, graph_client: Any, namespace: str, neo4j_server: Neo4jServer,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("NEO4J_URI", neo4j_server.uri)
    monkeypatch.setenv("NEO4J_USER", neo4j_server.user)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_server.password)
    await asyncio.to_thread(run_cli, "keys", "create", "--name", "cli-agent", "--namespace",
                            namespace, "--max-scope", "agent", "--clearance", "medium",
                            "--read-write")
    out = capsys.readouterr().out
    secret = re.search(r"^(mlk_[0-9a-f]{12}_\S+)$", out, re.MULTILINE).group(1)  # type: ignore[union-attr]
    key_id = secret.split("_")[1]
    assert f"created key {key_id} (cli-agent)" in out

    # Hashed at rest: the graph holds the SHA-256 of the key and nothing of the secret.
    (record,) = await graph_client.read((
        "MATCH (k:ApiKey {id: $id}) RETURN properties(k) AS k", {"id": key_id}))
    stored = record["k"]
    assert stored["secretHash"] == hashlib.sha256(secret.encode()).hexdigest()
    secret_part = secret.split("_", 2)[2]
    assert not any(secret_part in str(v) for v in stored.values())
    assert stored["namespaces"] == [namespace] and stored["clearance"] == "medium"

    await asyncio.to_thread(run_cli, "keys", "list")
    listed = capsys.readouterr().out
    line = next(x for x in listed.splitlines() if x.startswith(key_id))
    assert "cli-agent" in line and "read-write" in line and "medium" in line
    assert secret_part not in listed

    async with as_key(session_app, secret) as gql:
        await gql.ok(WRITE, {"input": mem(namespace, "written with a CLI key")})
        await asyncio.to_thread(run_cli, "keys", "revoke", key_id)
        assert f"revoked key {key_id}" in capsys.readouterr().out
        # No cache: the very next request is refused.
        error = await gql.error(GET, {"ns": namespace, "id": "x"})
        assert code(error) == "UNAUTHENTICATED" and "revoked" in error["message"]
    await asyncio.to_thread(run_cli, "keys", "list")
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith(key_id))
    assert not line.rstrip().endswith(" -")  # the revocation time is listed


async def test_requests_without_a_valid_key_are_refused(
    session_app: Any, graph_client: Any, namespace: str,
) -> None:
    good = await make_key(graph_client, namespace)
    key_id = good.split("_")[1]
    other = await make_key(graph_client, namespace)
    presented: list[dict[str, str]] = [
        {},
        {"authorization": "Bearer"},
        {"authorization": "Bearer not-a-key"},
        {"authorization": f"Bearer mlk_{'0' * 12}_{'x' * 43}"},  # unknown id
        {"authorization": f"Bearer mlk_{key_id}_{other.split('_', 2)[2]}"},  # wrong secret
        {"authorization": f"Basic {good}"},
        {"x-api-key": good[:-1]},
    ]
    for headers in presented:
        async with client_with(session_app, headers) as gql:
            response = await gql.http.post("/graphql", json={
                "query": WRITE, "variables": {"input": mem(namespace, "must not land")}})
            assert response.status_code == 401, headers
            assert response.headers["www-authenticate"].startswith("Bearer")
            body = response.json()
            assert body["data"] is None
            assert [code(e) for e in body["errors"]] == ["UNAUTHENTICATED"]
    assert await count_memories(graph_client, namespace) == 0
    # Both headers carry a good key.
    for headers in ({"authorization": f"Bearer {good}"}, {"x-api-key": good}):
        async with client_with(session_app, headers) as gql:
            await gql.ok(WRITE, {"input": mem(namespace, f"landed with {sorted(headers)}")})
    assert await count_memories(graph_client, namespace) == 2


async def test_graphiql_page_needs_no_key_but_get_queries_do(session_app: Any) -> None:
    async with client_with(session_app) as gql:
        page = await gql.http.get("/graphql", headers={"accept": "text/html"})
        assert page.status_code == 200 and "graphiql" in page.text.lower()
        query = await gql.http.get("/graphql", params={"query": "{ __typename }"})
        assert query.status_code == 401


async def test_namespaces_outside_the_key_are_forbidden(
    session_app: Any, graph_client: Any, namespace: str,
) -> None:
    secret = await make_key(graph_client, f"{namespace}/team/*", f"{namespace}/solo")
    async with as_key(session_app, secret) as gql:
        for allowed in (f"{namespace}/team/a", f"{namespace}/team/a/b", f"{namespace}/solo"):
            await gql.ok(WRITE, {"input": mem(allowed, "inside")})
        for outside in (namespace, f"{namespace}/team", f"{namespace}/solo/sub",
                        f"{namespace}/teams/a", "elsewhere"):
            error = await gql.error(WRITE, {"input": mem(outside, "outside")})
            assert code(error) == "FORBIDDEN", outside
            error = await gql.error(LIST, {"filter": {"namespace": outside}, "first": 5})
            assert code(error) == "FORBIDDEN"
            error = await gql.error(SEARCH, {"input": {"filter": {"namespace": outside},
                                                       "query": "inside"}})
            assert code(error) == "FORBIDDEN"
        # Validation still comes first for a malformed namespace.
        assert code(await gql.error(GET, {"ns": "../x", "id": "1"})) == "VALIDATION"
    assert await count_memories(graph_client, namespace) == 0


async def test_read_only_keys_cannot_change_anything(
    gql: Any, session_app: Any, graph_client: Any, namespace: str,
) -> None:
    a = (await gql.ok(WRITE, {"input": mem(namespace, "alpha fact")}))["writeMemory"]
    b = (await gql.ok(WRITE, {"input": mem(namespace, "beta fact")}))["writeMemory"]
    reader = await make_key(graph_client, namespace, write=False)
    async with as_key(session_app, reader) as ro:
        assert (await ro.ok(GET, {"ns": namespace, "id": a["id"]}))["memory"]["version"] == 1
        attempts: list[tuple[str, dict[str, Any]]] = [
            (WRITE, {"input": mem(namespace, "new")}),
            (UPDATE, {"ns": namespace, "id": a["id"], "patch": {"summary": "x"}}),
            (FORGET, {"ns": namespace, "p": {"contains": "fact"}}),
            (DELETE, {"ns": namespace, "id": a["id"]}),
            (ADD_EDGE, {"input": {"namespace": namespace, "sourceId": a["id"],
                                  "targetId": b["id"], "type": "RELATED"}}),
            (CONFIGURE, {"ns": namespace}),
        ]
        for query, variables in attempts:
            assert code(await ro.error(query, variables)) == "FORBIDDEN", query
    assert await count_memories(graph_client, namespace) == 2
    records = await graph_client.read((
        ("MATCH (m:Memory) WHERE m.namespace = $ns RETURN m.version AS v, m.status AS s,"
        " COUNT { (m)--() } AS rels"), {"ns": namespace}))
    assert [(r["v"], r["s"], r["rels"]) for r in records] == [(1, "active", 0)] * 2


SCOPED_SEARCH = """
query($input: SearchInput!) { search(input: $input) { memory { id scope } } }
"""


async def test_scopes_above_the_keys_maximum(
    gql: Any, session_app: Any, graph_client: Any, namespace: str,
) -> None:
    chain = {"agentId": "ag", "userId": "u", "sessionId": "s", "taskId": "t"}
    ids = {}
    for scope in (None, "AGENT", "USER", "SESSION", "TASK"):
        fields = {**chain, "scope": scope} if scope else {}
        written = (await gql.ok(WRITE, {"input": mem(namespace, f"plan level {scope}",
                                                     **fields)}))["writeMemory"]
        ids[scope] = written["id"]
    secret = await make_key(graph_client, namespace, max_scope=Scope.SESSION)
    async with as_key(session_app, secret) as key:
        # Writes above the maximum (and namespace-wide ones) are refused.
        for scope in (None, "USER", "AGENT"):
            fields = {**chain, "scope": scope} if scope else {}
            error = await key.error(WRITE, {"input": mem(namespace, "too broad", **fields)})
            assert code(error) == "FORBIDDEN", scope
        await key.ok(WRITE, {"input": mem(namespace, "plan level ok", **chain, scope="SESSION")})
        # Reads see task and session memories only.
        listed = (await key.ok(LIST, {"filter": {"namespace": namespace}, "first": 50}))
        seen = {e["node"]["content"] for e in listed["memories"]["edges"]}
        assert seen == {"plan level TASK", "plan level SESSION", "plan level ok"}
        assert listed["memories"]["totalCount"] == 3
        for scope in (None, "USER", "AGENT"):
            error = await key.error(GET, {"ns": namespace, "id": ids[scope]})
            assert code(error) == "NOT_FOUND"
        # A search chain at SESSION would add user, agent and namespace-wide levels:
        # they are clipped, silently.
        hits = (await key.ok(SCOPED_SEARCH, {"input": {
            "filter": {"namespace": namespace}, "query": "plan level", "mode": "LEXICAL",
            "context": chain, "scope": "SESSION"}}))["search"]
        assert {h["memory"]["scope"] for h in hits} == {"SESSION"}
        # Asking outright for a level above the maximum is refused.
        for bad in ({"scopes": ["USER"]}, {"scope": "AGENT"}):
            error = await key.error(SCOPED_SEARCH, {"input": {
                "filter": {"namespace": namespace}, "query": "plan", "context": chain, **bad}})
            assert code(error) == "FORBIDDEN"
        error = await key.error(LIST, {"filter": {"namespace": namespace, "scope": "USER",
                                                  "userId": "u"}, "first": 5})
        assert code(error) == "FORBIDDEN"
    # The admin still sees all six.
    listed = await gql.ok(LIST, {"filter": {"namespace": namespace}, "first": 50})
    assert listed["memories"]["totalCount"] == 6


async def test_keyless_mode_is_loud_and_refused_in_production(
    settings: Settings, namespace: str, caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level("WARNING", logger="memlattice.server.app"):
        async with app_with(settings, auth_mode="keyless") as client:
            health = (await client.get("/healthz")).json()
            assert health["auth"] == "keyless" and "AUTH IS OFF" in health["warning"]
            response = await client.post("/graphql", json={
                "query": WRITE, "variables": {"input": mem(namespace, "no key needed")}})
            assert response.json()["data"]["writeMemory"]["sensitivity"] == "LOW"
    assert any("AUTH IS OFF" in r.getMessage() for r in caplog.records)
    async with app_with(settings, auth_mode="keys") as client:
        assert (await client.get("/healthz")).json()["auth"] == "keys"
        response = await client.post("/graphql", json={"query": "{ __typename }"})
        assert response.status_code == 401
    with pytest.raises(ValueError, match="keyless is for development"):
        Settings(environment="production", auth_mode="keyless",
                 neo4j={"password": "a-real-secret"})


async def test_the_health_check_reports_keys_mode(app_client: httpx.AsyncClient) -> None:
    assert (await app_client.get("/healthz")).json()["auth"] == "keys"


def test_clearance_values_match_the_graphql_enum() -> None:
    from memlattice.resolvers.schema import schema

    sdl = schema.as_str()
    block = sdl[sdl.index("enum Sensitivity"):]
    block = block[: block.index("}")]
    assert [s.name for s in Sensitivity] == re.findall(r"^\s+([A-Z]+)$", block, re.MULTILINE)
