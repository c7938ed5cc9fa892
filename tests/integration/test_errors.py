"""A catalogue of bad inputs: each gives its stable code, leaks nothing, writes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import GraphQLClient
from tests.integration._support import (
    DIM,
    FORGET,
    GET,
    LIST,
    SEARCH,
    WRITE,
    WRITE_MANY,
    code,
    count_memories,
    mem,
)

LEAKS = ("Traceback", 'File "', "neo4j.", "Neo.ClientError", "Neo.DatabaseError",
         "ConstraintValidationFailed", "pydantic", "site-packages", "CYPHER")


def assert_clean(error: dict[str, Any]) -> None:
    text = json.dumps(error)
    for leak in LEAKS:
        assert leak not in text, (leak, error)
    assert error["message"]


BAD_NAMESPACES = ["/abs/x", "\\abs", "C:/x", "a/../b", "..", "a/./b", "a//b", "a/", "/",
                  "", "a\\b", "a/\tb", "x" * 513]


@pytest.mark.parametrize("bad", BAD_NAMESPACES)
async def test_bad_namespace_on_write(
    gql: GraphQLClient, graph_client: Any, bad: str
) -> None:
    error = await gql.error(WRITE, {"input": mem(bad, "content")})
    assert code(error) == "VALIDATION"
    assert_clean(error)
    if bad:
        assert await count_memories(graph_client, bad) == 0


@pytest.mark.parametrize("bad", ["/abs", "a/../b", "a//b", ""])
async def test_bad_namespace_on_reads_and_other_mutations(gql: GraphQLClient, bad: str) -> None:
    operations: list[tuple[str, dict[str, Any]]] = [
        (GET, {"ns": bad, "id": "x"}),
        (LIST, {"filter": {"namespace": bad}, "first": 5}),
        (SEARCH, {"input": {"filter": {"namespace": bad}, "query": "x", "mode": "LEXICAL"}}),
        (FORGET, {"ns": bad, "p": {"id": "x"}}),
        ("mutation($ns: String!) { deleteMemory(namespace: $ns, id: \"x\") }", {"ns": bad}),
        ("query($ns: String!) { auditTrail(namespace: $ns, id: \"x\") { id } }", {"ns": bad}),
        ("query($ns: String!) { edges(namespace: $ns, id: \"x\") { id } }", {"ns": bad}),
        ("mutation($ns: String!) { deleteEdge(namespace: $ns, id: \"x\") }", {"ns": bad}),
    ]
    for query, variables in operations:
        error = await gql.error(query, variables)
        assert code(error) == "VALIDATION", (query, error)
        assert_clean(error)


INVALID_WRITES: list[tuple[str, dict[str, Any], str]] = [
    ("blank content", {"content": "   \n\t"}, "VALIDATION"),
    ("empty content", {"content": ""}, "VALIDATION"),
    ("content too long", {"content": "x" * 100_001}, "VALIDATION"),
    ("confidence above 1", {"confidence": 1.5}, "VALIDATION"),
    ("confidence below 0", {"confidence": -0.01}, "VALIDATION"),
    ("salience above 1", {"salience": 2.0}, "VALIDATION"),
    ("session scope without sessionId", {"scope": "SESSION", "userId": "u"}, "VALIDATION"),
    ("task scope without taskId", {"scope": "TASK"}, "VALIDATION"),
    ("user scope with empty userId", {"scope": "USER", "userId": ""}, "VALIDATION"),
    ("too many tags", {"tags": [f"t{i}" for i in range(65)]}, "VALIDATION"),
    ("blank tag", {"tags": ["ok", "  "]}, "VALIDATION"),
    ("tag too long", {"tags": ["x" * 257]}, "VALIDATION"),
    ("empty metadata key", {"metadata": {"": 1}}, "VALIDATION"),
    ("metadata not an object", {"metadata": [1, 2]}, "VALIDATION"),
    ("key too long", {"key": "k" * 1025}, "VALIDATION"),
    ("empty id", {"id": ""}, "VALIDATION"),
    ("id too long", {"id": "i" * 129}, "VALIDATION"),
    ("bad memoryType", {"memoryType": "Not A Type"}, "VALIDATION"),
    ("short embedding", {"embedding": [0.1] * (DIM - 1)}, "DIMENSION_MISMATCH"),
    ("empty embedding", {"embedding": []}, "VALIDATION"),
]


@pytest.mark.parametrize("fields,expected", [(f, e) for _, f, e in INVALID_WRITES],
                         ids=[name for name, _, _ in INVALID_WRITES])
async def test_invalid_write_gives_code_and_writes_nothing(
    gql: GraphQLClient, namespace: str, graph_client: Any, fields: dict[str, Any], expected: str
) -> None:
    bad = {**mem(namespace, "valid content"), **fields}
    error = await gql.error(WRITE, {"input": bad})
    assert code(error) == expected, error
    assert_clean(error)
    assert await count_memories(graph_client, namespace) == 0
    error = await gql.error(WRITE_MANY, {"inputs": [mem(namespace, "fine"), bad]})
    assert code(error) == expected, error
    assert await count_memories(graph_client, namespace) == 0


async def test_validation_error_names_the_field(gql: GraphQLClient, namespace: str) -> None:
    error = await gql.error(WRITE, {"input": mem(namespace, "x", confidence=1.5)})
    assert "confidence" in error["message"]
    assert "confidence" in error["extensions"]["fields"]
    error = await gql.error(WRITE, {"input": mem(namespace, "x", scope="SESSION")})
    assert "sessionId" in error["message"]


async def test_syntax_error_is_bad_request(gql: GraphQLClient) -> None:
    for text in ("query { memory(namespace: \"a\", id: \"b\") { id ", "{{", "mutation {"):
        error = await gql.error(text)
        assert code(error) == "BAD_REQUEST", error
        assert_clean(error)


async def test_document_errors_are_validation(gql: GraphQLClient, namespace: str) -> None:
    documents = [
        "query($ns: String!) { memory(namespace: $ns, id: \"x\") { id nope } }",
        "query($ns: String!) { memory(namespace: $ns) { id } }",
        "query($ns: String!) { nothingHere(namespace: $ns) }",
        "query($ns: String!) { memory(namespace: $ns, id: \"x\", extra: 1) { id } }",
        "query($ns: Int!) { memory(namespace: $ns, id: \"x\") { id } }",
        "mutation($ns: String!) { forget(namespace: $ns, predicate: {bogus: 1}) { count } }",
        "query { memory(namespace: \"a\", id: \"x\") }",
    ]
    for document in documents:
        body = await gql.raw(document, {"ns": namespace})
        assert body.get("errors"), (document, body)
        assert code(body["errors"][0]) == "VALIDATION", (document, body)
        assert_clean(body["errors"][0])


async def test_out_of_range_int_literal_is_validation(
    gql: GraphQLClient, namespace: str
) -> None:
    error = await gql.error(
        "query($ns: String!) { memories(filter: {namespace: $ns}, first: 2147483648)"
        " { totalCount } }", {"ns": namespace})
    assert code(error) == "VALIDATION"


@pytest.mark.parametrize("limit", [0, -1, 201])
async def test_search_limit_out_of_range(gql: GraphQLClient, namespace: str, limit: int) -> None:
    error = await gql.error(SEARCH, {"input": {"filter": {"namespace": namespace},
                                               "query": "words", "limit": limit}})
    assert code(error) == "VALIDATION"
    assert_clean(error)


@pytest.mark.parametrize("query", ["", "   ", "*:*", "?!", "()[]{}", "--- +++ ~~~"])
async def test_lexical_search_without_words(
    gql: GraphQLClient, namespace: str, query: str
) -> None:
    error = await gql.error(SEARCH, {"input": {"filter": {"namespace": namespace},
                                               "query": query, "mode": "LEXICAL"}})
    assert code(error) == "VALIDATION"
    assert_clean(error)


async def test_search_needs_something_to_look_for(gql: GraphQLClient, namespace: str) -> None:
    for extra in ({}, {"mode": "SEMANTIC"}, {"mode": "HYBRID"}):
        error = await gql.error(SEARCH, {"input": {"filter": {"namespace": namespace}, **extra}})
        assert code(error) == "VALIDATION", extra
    error = await gql.error(SEARCH, {"input": {"filter": {"namespace": namespace},
                                               "vector": [1.0, 0.0], "mode": "SEMANTIC"}})
    assert code(error) == "DIMENSION_MISMATCH"
    assert error["extensions"]["expected"] == DIM
    error = await gql.error(SEARCH, {"input": {"filter": {"namespace": namespace},
                                               "query": "x", "preset": "no-such-preset"}})
    assert code(error) == "VALIDATION"


async def test_bad_filters_are_validation(gql: GraphQLClient, namespace: str) -> None:
    for flt in ({"statuses": []}, {"metadata": [1]}, {"metadata": "x"},
                {"scope": "USER"}, {"minConfidence": 3.0}):
        error = await gql.error(LIST, {"filter": {"namespace": namespace, **flt}, "first": 5})
        assert code(error) == "VALIDATION", flt
        assert_clean(error)


async def test_zero_query_vector_is_a_clean_error(gql: GraphQLClient, namespace: str) -> None:
    await gql.ok(WRITE, {"input": mem(namespace, "something")})
    body = await gql.raw(SEARCH, {"input": {"filter": {"namespace": namespace},
                                            "vector": [0.0] * DIM, "mode": "SEMANTIC"}})
    if body.get("errors"):
        assert code(body["errors"][0]) == "VALIDATION"
        assert_clean(body["errors"][0])


async def test_malformed_http_bodies_do_not_leak(app_client: Any) -> None:
    for content in (b"not json", b"{\"query\": 5}", b"[]"):
        response = await app_client.post("/graphql", content=content,
                                          headers={"content-type": "application/json"})
        assert response.status_code in (200, 400), response.text
        assert "Traceback" not in response.text


BAD_VARIABLES: list[tuple[str, str, dict[str, Any]]] = [
    # (case, document, variables); the string "{ns}" stands for the test's namespace
    ("missing required variable", WRITE, {}),
    ("null for a non-null field", WRITE, {"input": {"namespace": "{ns}", "content": None}}),
    ("missing required input field", WRITE, {"input": {"namespace": "{ns}"}}),
    ("string for a Float", WRITE, {"input": {"namespace": "{ns}", "content": "x",
                                             "confidence": "high"}}),
    ("number in a [String!]", WRITE, {"input": {"namespace": "{ns}", "content": "x",
                                                "tags": [1, 2]}}),
    ("unknown input field", WRITE, {"input": {"namespace": "{ns}", "content": "x",
                                              "colour": "red"}}),
    ("unknown enum value", WRITE, {"input": {"namespace": "{ns}", "content": "x",
                                             "scope": "GALAXY", "agentId": "a"}}),
    ("malformed DateTime now", WRITE, {"input": {"namespace": "{ns}", "content": "x",
                                                 "now": "not-a-date"}}),
    ("malformed DateTime expiresAt", WRITE, {"input": {"namespace": "{ns}", "content": "x",
                                                       "expiresAt": "yesterday"}}),
    ("malformed DateTime createdAfter", LIST, {"filter": {"namespace": "{ns}",
                                                          "createdAfter": "soon"}, "first": 5}),
    ("Int out of 32-bit range", LIST, {"filter": {"namespace": "{ns}"}, "first": 2 ** 31}),
    ("float for an Int", LIST, {"filter": {"namespace": "{ns}"}, "first": 2.5}),
]


def _fill(value: Any, namespace: str) -> Any:
    if isinstance(value, dict):
        return {k: _fill(v, namespace) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, namespace) for v in value]
    return namespace if value == "{ns}" else value


@pytest.mark.parametrize("document,variables", [(d, v) for _, d, v in BAD_VARIABLES],
                         ids=[case for case, _, _ in BAD_VARIABLES])
async def test_bad_variables_are_validation(
    gql: GraphQLClient, namespace: str, graph_client: Any, document: str,
    variables: dict[str, Any],
) -> None:
    error = await gql.error(document, _fill(variables, namespace))
    assert await count_memories(graph_client, namespace) == 0
    assert_clean(error)
    assert code(error) == "VALIDATION", error
