"""One vocabulary (docs/api.md): each current spelling works, each deprecated one still
works for a release and means the same, and giving both is refused, writing nothing.

- a search's query vector is `embedding` (deprecated: `vector`);
- who is asking is `agentId` / `userId` / `sessionId` / `taskId` on SearchInput
  (deprecated: `context: {...}`);
- addEdge takes `namespace` as an argument, as addEdges does (deprecated:
  `input.namespace`);
- the Python client's `search(embedding=, user_id=, ...)` (deprecated, with a
  DeprecationWarning: `vector=`, `context=`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from memlattice_client import AsyncMemlatticeClient
from tests.conftest import GraphQLClient
from tests.integration._support import (
    EDGES,
    SEARCH,
    WRITE_MANY,
    basis,
    code,
    count_relationships,
    mem,
)

ADD_EDGE_NOW = """
mutation($ns: String, $input: EdgeInput!) {
  addEdge(namespace: $ns, input: $input) { id type sourceId targetId metadata }
}
"""
ADD_EDGE_OLD = """
mutation($input: EdgeInput!) {
  addEdge(input: $input) { id type sourceId targetId metadata }
}
"""


async def _write(gql: GraphQLClient, *memories: dict[str, Any]) -> list[str]:
    written = (await gql.ok(WRITE_MANY, {"inputs": list(memories)}))["writeMemories"]
    return [m["id"] for m in written]


async def _hits(gql: GraphQLClient, input: dict[str, Any]) -> list[str]:
    return [h["memory"]["id"] for h in (await gql.ok(SEARCH, {"input": input}))["search"]]


# ---------------------------------------------------------------- embedding / vector


async def test_search_embedding_and_deprecated_vector_rank_alike(
    gql: GraphQLClient, namespace: str
) -> None:
    ids = await _write(gql, *(mem(namespace, f"axis {i}", embedding=basis(i)) for i in range(3)))
    base = {"filter": {"namespace": namespace}, "mode": "SEMANTIC", "scoring": "SIMILARITY"}
    current = await _hits(gql, {**base, "embedding": basis(1)})
    deprecated = await _hits(gql, {**base, "vector": basis(1)})
    assert current[0] == ids[1]
    assert deprecated == current


async def test_search_with_embedding_and_vector_is_refused(
    gql: GraphQLClient, namespace: str
) -> None:
    await _write(gql, mem(namespace, "axis", embedding=basis(1)))
    error = await gql.error(SEARCH, {"input": {
        "filter": {"namespace": namespace}, "mode": "SEMANTIC",
        "embedding": basis(1), "vector": basis(1)}})
    assert code(error) == "VALIDATION"
    assert error["extensions"]["fields"] == ["embedding", "vector"]


async def test_errors_name_the_query_embedding_as_embedding(
    gql: GraphQLClient, namespace: str
) -> None:
    error = await gql.error(SEARCH, {"input": {
        "filter": {"namespace": namespace}, "mode": "SEMANTIC"}})
    assert code(error) == "VALIDATION"
    assert "needs `embedding`" in error["message"] and "vector" not in error["message"]


# ---------------------------------------------------------------- caller ids / context


@pytest.fixture
async def scoped(gql: GraphQLClient, namespace: str) -> dict[str, str]:
    """One memory per bucket: user u1, user u2, session s1 of u1, and the namespace."""
    ids = await _write(
        gql,
        mem(namespace, "kestrel note of u1", scope="USER", userId="u1"),
        mem(namespace, "kestrel note of u2", scope="USER", userId="u2"),
        mem(namespace, "kestrel note of s1", scope="SESSION", userId="u1", sessionId="s1"),
        mem(namespace, "kestrel note for all"),
    )
    return dict(zip(("u1", "u2", "s1", "all"), ids, strict=True))


async def test_caller_ids_on_the_input_scope_the_search(
    gql: GraphQLClient, namespace: str, scoped: dict[str, str]
) -> None:
    base = {"filter": {"namespace": namespace}, "query": "kestrel", "mode": "LEXICAL"}
    assert set(await _hits(gql, base)) == set(scoped.values())
    user = await _hits(gql, {**base, "userId": "u1"})
    assert set(user) == {scoped["u1"], scoped["all"]}
    session = await _hits(gql, {**base, "userId": "u1", "sessionId": "s1", "scope": "SESSION"})
    assert set(session) == {scoped["s1"], scoped["u1"], scoped["all"]}
    exact = await _hits(gql, {**base, "userId": "u1", "sessionId": "s1", "scopes": ["SESSION"]})
    assert exact == [scoped["s1"]]


async def test_deprecated_context_scopes_the_search_alike(
    gql: GraphQLClient, namespace: str, scoped: dict[str, str]
) -> None:
    base = {"filter": {"namespace": namespace}, "query": "kestrel", "mode": "LEXICAL"}
    for ids, extra in (({"userId": "u1"}, {}),
                       ({"userId": "u1", "sessionId": "s1"}, {"scope": "SESSION"}),
                       ({"userId": "u2"}, {"scopes": ["USER"]})):
        current = await _hits(gql, {**base, **ids, **extra})
        deprecated = await _hits(gql, {**base, "context": ids, **extra})
        assert set(deprecated) == set(current) and len(current) < len(scoped), ids


async def test_caller_ids_in_both_places_are_refused(
    gql: GraphQLClient, namespace: str, scoped: dict[str, str]
) -> None:
    error = await gql.error(SEARCH, {"input": {
        "filter": {"namespace": namespace}, "query": "kestrel", "mode": "LEXICAL",
        "userId": "u1", "context": {"sessionId": "s1"}}})
    assert code(error) == "VALIDATION"
    assert error["extensions"]["fields"] == ["context", "userId"]


# ---------------------------------------------------------------- addEdge namespace


async def test_add_edge_takes_the_namespace_argument(gql: GraphQLClient, namespace: str) -> None:
    a, b = await _write(gql, mem(namespace, "a"), mem(namespace, "b"))
    edge = (await gql.ok(ADD_EDGE_NOW, {"ns": namespace, "input": {
        "sourceId": a, "targetId": b, "type": "SUPPORTS", "metadata": {"why": "now"}}}))["addEdge"]
    assert (edge["sourceId"], edge["targetId"], edge["type"]) == (a, b, "SUPPORTS")
    found = (await gql.ok(EDGES, {"ns": namespace, "id": a, "types": None,
                                  "direction": "OUT"}))["edges"]
    assert [e["id"] for e in found] == [edge["id"]]


async def test_add_edge_with_the_deprecated_input_namespace_still_works(
    gql: GraphQLClient, namespace: str
) -> None:
    a, b = await _write(gql, mem(namespace, "a"), mem(namespace, "b"))
    edge = (await gql.ok(ADD_EDGE_OLD, {"input": {
        "namespace": namespace, "sourceId": a, "targetId": b, "type": "RELATED"}}))["addEdge"]
    assert (edge["sourceId"], edge["targetId"], edge["type"]) == (a, b, "RELATED")
    again = (await gql.ok(ADD_EDGE_NOW, {"ns": namespace, "input": {
        "sourceId": a, "targetId": b, "type": "RELATED"}}))["addEdge"]
    assert again["id"] == edge["id"]  # the same relationship, whichever spelling made it


@pytest.mark.parametrize("where", ["both", "neither"])
async def test_add_edge_needs_its_namespace_exactly_once(
    gql: GraphQLClient, namespace: str, graph_client: Any, where: str
) -> None:
    a, b = await _write(gql, mem(namespace, "a"), mem(namespace, "b"))
    spec: dict[str, Any] = {"sourceId": a, "targetId": b, "type": "RELATED"}
    if where == "both":
        spec["namespace"] = namespace
    error = await gql.error(ADD_EDGE_NOW, {"ns": namespace if where == "both" else None,
                                           "input": spec})
    assert code(error) == "VALIDATION"
    assert await count_relationships(graph_client, namespace) == 0


async def test_add_edge_namespace_argument_fences_the_ends(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    """The argument is the namespace the edge is made in: ends elsewhere are not found."""
    other = namespace + "/other"
    a, b = await _write(gql, mem(other, "a"), mem(other, "b"))
    error = await gql.error(ADD_EDGE_NOW, {"ns": namespace, "input": {
        "sourceId": a, "targetId": b, "type": "RELATED"}})
    assert code(error) == "NOT_FOUND"
    assert await count_relationships(graph_client, other) == 0


# ---------------------------------------------------------------- notes to old callers


async def test_old_spellings_are_told_in_extensions_notes(
    gql: GraphQLClient, namespace: str
) -> None:
    a, b = await _write(gql, mem(namespace, "kestrel a"), mem(namespace, "kestrel b"))
    base = {"filter": {"namespace": namespace}, "query": "kestrel"}
    current = await gql.raw(SEARCH, {"input": {**base, "embedding": basis(1), "userId": "u"}})
    assert not current.get("errors") and "notes" not in current.get("extensions", {})
    old = await gql.raw(SEARCH, {"input": {**base, "vector": basis(1),
                                           "context": {"userId": "u"}}})
    assert not old.get("errors")
    notes = old["extensions"]["notes"]
    assert [n.split(" is deprecated")[0] for n in notes] == ["`vector`", "`context`"]
    edge = await gql.raw(ADD_EDGE_OLD, {"input": {
        "namespace": namespace, "sourceId": a, "targetId": b, "type": "RELATED"}})
    assert not edge.get("errors")
    assert "`input.namespace` of addEdge is deprecated" in edge["extensions"]["notes"][0]
    edge = await gql.raw(ADD_EDGE_NOW, {"ns": namespace, "input": {
        "sourceId": b, "targetId": a, "type": "RELATED"}})
    assert not edge.get("errors") and "notes" not in edge.get("extensions", {})


# ---------------------------------------------------------------- the Python client


@pytest.fixture
async def client(session_app: tuple[Any, Any],
                 admin_key: str) -> AsyncIterator[AsyncMemlatticeClient]:
    transport = httpx.ASGITransport(app=session_app[1])
    async with AsyncMemlatticeClient("http://test", transport=transport,
                                     api_key=admin_key) as client:
        yield client


async def test_client_search_takes_the_write_names(
    client: AsyncMemlatticeClient, namespace: str, scoped: dict[str, str]
) -> None:
    """`user_id=` on search says who is asking, as on write_memory and MCP's recall."""
    found = await client.search(namespace, "kestrel", mode="lexical", user_id="u1")
    assert {h.memory.id for h in found} == {scoped["u1"], scoped["all"]}
    found = await client.search(namespace, None, mode="semantic", embedding=basis(7),
                                user_id="u1", session_id="s1", scopes=["session"])
    assert [h.memory.id for h in found] == [scoped["s1"]]
    block = await client.recall_for_prompt("kestrel", 200, namespace=namespace, user_id="u2",
                                           mode="lexical")
    assert "of u2" in block and "of u1" not in block


async def test_client_search_deprecated_keywords_warn_and_still_work(
    client: AsyncMemlatticeClient, namespace: str, scoped: dict[str, str]
) -> None:
    current = await client.search(namespace, "kestrel", mode="lexical", user_id="u1",
                                  embedding=basis(7))
    with pytest.deprecated_call(match="context"):
        via_context = await client.search(namespace, "kestrel", mode="lexical",
                                          context={"user_id": "u1"}, embedding=basis(7))
    with pytest.deprecated_call(match="vector"):
        via_vector = await client.search(namespace, "kestrel", mode="lexical", user_id="u1",
                                         vector=basis(7))
    expected = [h.memory.id for h in current]
    assert set(expected) == {scoped["u1"], scoped["all"]}
    assert [h.memory.id for h in via_context] == expected
    assert [h.memory.id for h in via_vector] == expected


# ---------------------------------------------------------------- the schema says so


async def test_the_schema_marks_each_old_spelling_deprecated(gql: GraphQLClient) -> None:
    data = await gql.ok("""{
      search: __type(name: "SearchInput") { inputFields(includeDeprecated: true) {
        name isDeprecated deprecationReason } }
      edge: __type(name: "EdgeInput") { inputFields(includeDeprecated: true) {
        name isDeprecated deprecationReason } }
      mutation: __type(name: "Mutation") { fields { name args(includeDeprecated: true) {
        name type { kind } } } }
    }""")
    deprecated = {(t, f["name"]): f["deprecationReason"] for t in ("search", "edge")
                  for f in data[t]["inputFields"] if f["isDeprecated"]}
    assert set(deprecated) == {("search", "vector"), ("search", "context"),
                               ("edge", "namespace")}
    assert "embedding" in deprecated["search", "vector"]
    assert "userId" in deprecated["search", "context"]
    assert "addEdge" in deprecated["edge", "namespace"]
    [add_edge] = [f for f in data["mutation"]["fields"] if f["name"] == "addEdge"]
    assert [a["name"] for a in add_edge["args"]] == ["namespace", "input"]


def test_the_docs_teach_no_deprecated_spelling() -> None:
    """Every GraphQL block of README.md and docs/ uses the current names only."""
    from graphql import parse, validate
    from graphql.validation import NoDeprecatedCustomRule

    from memlattice.resolvers.schema import schema
    from tests.integration.test_docs import BLOCKS

    graphql_blocks = [b for b in BLOCKS if b.lang == "graphql"]
    assert graphql_blocks
    for block in graphql_blocks:
        problems = validate(schema._schema, parse(block.text), [NoDeprecatedCustomRule])
        assert not problems, f"{block.id}: {[p.message for p in problems]}"


def test_the_deprecation_check_of_the_docs_can_fail() -> None:
    from graphql import parse, validate
    from graphql.validation import NoDeprecatedCustomRule

    from memlattice.resolvers.schema import schema

    old = ('query { search(input: {filter: {namespace: "demo"}, vector: [1.0],'
           ' context: {userId: "u"}}) { score } }')
    problems = validate(schema._schema, parse(old), [NoDeprecatedCustomRule])
    assert len(problems) == 2
