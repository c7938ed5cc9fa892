"""Bad requests get a coded answer, never a 500 or INTERNAL (issue 14, items 7-10, 14).

Each case was a 500, an INTERNAL or an uncoded plain-text 400 before: request
bodies that are JSON but not objects, JSON nested ~1,000 deep, datetimes at
the edge of the range, search weights of 1e308, subscriptions by POST, and
every request error strawberry answered in plain text.
"""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import httpx
import pytest
from httpx_ws import WebSocketDisconnect, aconnect_ws
from httpx_ws.transport import ASGIWebSocketTransport

from memlattice.core.nesting import MAX_JSON_DEPTH, MAX_REQUEST_DEPTH
from tests.conftest import GraphQLClient
from tests.integration._support import LIST, SEARCH, WRITE, code, count_memories, mem

RECORDS = ("query($ns: String!, $at: DateTime) { records(namespace: $ns, asOf: $at)"
           " { __typename } }")
MIN_EDGE = "0001-01-01T00:00:00+14:00"   # ten hours before year 1, in UTC
MAX_EDGE = "9999-12-31T23:59:59-14:00"   # fourteen hours into year 10000, in UTC


def nested(levels: int, leaf: str = "1") -> str:
    """JSON text of `levels` nested lists (json.dumps itself recurses)."""
    return "[" * levels + leaf + "]" * levels


def body_with(value_json: str, **request: Any) -> bytes:
    """A request body with `"@"` replaced by raw JSON text."""
    return json.dumps(request).replace('"@"', value_json).encode()


async def post(http: httpx.AsyncClient, content: bytes | str,
               content_type: str = "application/json") -> httpx.Response:
    return await http.post("/graphql", content=content, headers={"content-type": content_type})


def refused(response: httpx.Response, status: int = 400, code_: str = "BAD_REQUEST"
            ) -> dict[str, Any]:
    """The one coded error of a refused request; no `data`, a request id."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert "data" not in body, body
    error: dict[str, Any] = body["errors"][0]
    assert error["extensions"]["code"] == code_, body
    assert error["extensions"]["requestId"] == response.headers["x-request-id"]
    return error


# Item 7: bodies that are JSON but not a GraphQL request object, and deep JSON.

@pytest.mark.parametrize("content", [b'"hello"', b"null", b"5", b"true", b"[1]",
                                     b'[{"query": "{ __typename }"}]', b"[]"])
async def test_json_that_is_not_a_request_object(app_client: httpx.AsyncClient,
                                                 content: bytes) -> None:
    refused(await post(app_client, content))


async def test_a_body_nested_too_deep_is_refused_before_parsing(
        app_client: httpx.AsyncClient) -> None:
    for extra in (nested(1000), nested(MAX_REQUEST_DEPTH + 1)):
        error = refused(await post(app_client, body_with(extra, query="{ __typename }", x="@")))
        assert error["extensions"]["limit"] == MAX_REQUEST_DEPTH


@pytest.mark.parametrize("field", ["metadata", "value", "provenance"])
async def test_json_scalars_deeper_than_the_limit(
        app_client: httpx.AsyncClient, namespace: str, graph_client: Any, field: str) -> None:
    deep_meta = '{"k": @}' if field == "metadata" else "@"
    for levels in (1000, MAX_JSON_DEPTH + 1):
        inner = nested(levels - (1 if field == "metadata" else 0))
        value = deep_meta.replace("@", inner)
        response = await post(app_client, body_with(
            value, query=WRITE, variables={"input": {**mem(namespace, "deep"), field: "@"}}))
        if levels > MAX_REQUEST_DEPTH:
            refused(response)
        else:
            assert response.status_code == 200
            error = response.json()["errors"][0]
            assert error["extensions"]["code"] == "VALIDATION", error
            assert f"{MAX_JSON_DEPTH} levels" in error["message"]
    assert await count_memories(graph_client, namespace) == 0


async def test_json_at_the_limit_is_stored(gql: GraphQLClient, app_client: httpx.AsyncClient,
                                           namespace: str) -> None:
    response = await post(app_client, body_with(
        nested(MAX_JSON_DEPTH), query=WRITE,
        variables={"input": {**mem(namespace, "just deep enough"), "value": "@"}}))
    body = response.json()
    assert not body.get("errors"), body
    assert json.dumps(body["data"]["writeMemory"]["value"]).count("[") == MAX_JSON_DEPTH


async def test_deep_json_in_a_document_literal(gql: GraphQLClient, namespace: str) -> None:
    for levels in (1000, MAX_REQUEST_DEPTH + 1, MAX_JSON_DEPTH + 1):
        document = ("mutation { writeMemory(input: {namespace: \"" + namespace + "\","
                    " content: \"x\", value: " + nested(levels) + "}) { id } }")
        error = await gql.error(document)
        expected = "BAD_REQUEST" if levels > MAX_REQUEST_DEPTH - 3 else "VALIDATION"
        assert code(error) == expected, (levels, error)


async def test_deep_selection_documents(gql: GraphQLClient) -> None:
    for levels in (1000, 300, MAX_REQUEST_DEPTH + 1):
        error = await gql.error("{" + " memory {" * levels + " id" + " }" * (levels + 1))
        assert code(error) == "BAD_REQUEST", (levels, error)
    # Brackets inside strings and comments are not nesting.
    data = await gql.ok('{ __type(name: "' + "{[" * 200 + '") { name } } # ' + "{" * 200)
    assert data == {"__type": None}


# Item 8: datetimes at the edge of the range.

@pytest.mark.parametrize("edge", [MIN_EDGE, MAX_EDGE, "9999-12-31T24:00:00Z"])
async def test_instants_outside_the_range_are_validation(
        gql: GraphQLClient, namespace: str, graph_client: Any, edge: str) -> None:
    cases: list[tuple[str, dict[str, Any]]] = [
        (WRITE, {"input": mem(namespace, "x", now=edge)}),
        (WRITE, {"input": mem(namespace, "x", expiresAt=edge)}),
        (LIST, {"filter": {"namespace": namespace, "createdAfter": edge}, "first": 2}),
        (LIST, {"filter": {"namespace": namespace, "asOf": edge}, "first": 2}),
        (SEARCH, {"input": {"filter": {"namespace": namespace}, "query": "x",
                            "mode": "LEXICAL", "now": edge}}),
        (RECORDS, {"ns": namespace, "at": edge}),
    ]
    for document, variables in cases:
        error = await gql.error(document, variables)
        assert code(error) == "VALIDATION", (variables, error)
        assert "supported range" in error["message"]
    literal = await gql.error('query { records(namespace: "' + namespace + '", asOf: "'
                              + edge + '") { __typename } }')
    assert code(literal) == "VALIDATION"
    assert await count_memories(graph_client, namespace) == 0


async def test_the_ends_of_the_range_work(gql: GraphQLClient, namespace: str) -> None:
    first = "0001-01-01T00:00:00Z"
    last = "9999-12-31T23:59:59.999999+00:00"
    old = (await gql.ok(WRITE, {"input": mem(namespace, "oldest", now=first)}))["writeMemory"]
    assert old["createdAt"].startswith("0001-01-01T00:00:00")
    lasting = (await gql.ok(WRITE, {"input": mem(namespace, "lasting", expiresAt=last)})
               )["writeMemory"]
    assert lasting["expiresAt"].startswith("9999-12-31T23:59:59.999999")
    window = {"namespace": namespace, "createdAfter": first, "createdBefore": last}
    page = (await gql.ok(LIST, {"filter": window, "first": 1}))["memories"]
    assert page["totalCount"] == 2
    # As of the last instant, `lasting` has expired; `oldest` has not.
    at_end = (await gql.ok(LIST, {"filter": {**window, "asOf": last}, "first": 5}))["memories"]
    assert at_end["totalCount"] == 1
    await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace}, "query": "oldest",
                                    "mode": "LEXICAL", "now": last}})
    await gql.ok(RECORDS, {"ns": namespace, "at": first})
    after = (await gql.ok(LIST, {"filter": window, "first": 1,
                                 "after": page["pageInfo"]["endCursor"]}))["memories"]
    assert [e["node"]["id"] for e in after["edges"]] == [old["id"]]


@pytest.mark.parametrize("stamp", [MIN_EDGE, MAX_EDGE, "not a time"])
async def test_cursors_naming_impossible_times(gql: GraphQLClient, namespace: str,
                                               stamp: str) -> None:
    cursor = base64.urlsafe_b64encode(json.dumps([stamp, "x"]).encode()).decode()
    error = await gql.error(LIST, {"filter": {"namespace": namespace}, "first": 2,
                                   "after": cursor})
    assert code(error) == "VALIDATION", error
    deep = base64.urlsafe_b64encode(nested(5000).encode()).decode()
    error = await gql.error(LIST, {"filter": {"namespace": namespace}, "first": 2,
                                   "after": deep})
    assert code(error) == "VALIDATION", error


async def test_instants_in_record_payloads(gql: GraphQLClient, namespace: str) -> None:
    document = ("mutation($ns: String!, $p: JSON!) { writeRecord(input: {namespace: $ns,"
                " type: EPISODIC, content: \"went\", payload: $p}) { record { recordType } } }")
    event = {"time": MIN_EDGE, "kind": "step", "summary": "went"}
    error = await gql.error(document, {"ns": namespace, "p": {"outcome": "success",
                                                              "timeline": [event]}})
    assert code(error) == "VALIDATION", error
    assert "supported range" in error["message"]


# Item 9: search knobs that overflowed to NaN.

@pytest.mark.parametrize("knobs", [
    {"scoring": "HYBRID", "weights": {"similarity": 1e308, "fulltext": 1e308,
                                      "recency": 1e308, "popularity": 1e308}},
    {"scoring": "HYBRID", "weights": {"fulltext": 1e308}},
    {"scoring": "RRF", "decayHalfLifeDays": 1e308, "weights": {"recency": 1e308}},
    {"decayHalfLifeDays": 1e-320},
    {"keyBoost": 1e308}, {"tagBoost": 1e308}, {"mmrLambda": 1e308},
    {"expansion": {"share": 1e308, "hopDiscount": 1e308}},
])
async def test_huge_search_knobs_are_validation(gql: GraphQLClient, namespace: str,
                                                knobs: dict[str, Any]) -> None:
    await gql.ok(WRITE, {"input": mem(namespace, "alpha beta", tags=["alpha"])})
    error = await gql.error(SEARCH, {"input": {"filter": {"namespace": namespace},
                                               "query": "alpha", "mode": "LEXICAL", **knobs}})
    assert code(error) == "VALIDATION", error


async def test_huge_namespace_weights_are_refused(gql: GraphQLClient, namespace: str) -> None:
    error = await gql.error(
        "mutation($ns: String!, $w: WeightsInput) { configureNamespace(namespace: $ns,"
        " input: {weights: $w}) { namespace } }",
        {"ns": namespace, "w": {"similarity": 1e308, "fulltext": 1e308}})
    assert code(error) == "VALIDATION", error


async def test_the_largest_weights_still_rank(gql: GraphQLClient, namespace: str) -> None:
    await gql.ok(WRITE, {"input": mem(namespace, "alpha beta")})
    found = (await gql.ok(SEARCH, {"input": {
        "filter": {"namespace": namespace}, "query": "alpha", "mode": "LEXICAL",
        "scoring": "HYBRID", "decayHalfLifeDays": 1e-8,
        "weights": {"similarity": 1000, "fulltext": 1000, "recency": 1000,
                    "popularity": 1000}}}))["search"]
    assert found and 0 <= found[0]["score"] <= 1


# Item 10: subscriptions need the WebSocket.

async def test_a_subscription_by_post_is_refused(app_client: httpx.AsyncClient,
                                                 namespace: str) -> None:
    document = "subscription($ns: String!) { memoryEvents(namespace: $ns) { kind } }"
    response = await app_client.post("/graphql", json={"query": document,
                                                       "variables": {"ns": namespace}})
    error = refused(response)
    assert "WebSocket" in error["message"]
    response = await app_client.get("/graphql", params={"query": document})
    assert "WebSocket" in refused(response)["message"]


# Item 14: every request error is coded.

async def test_request_errors_carry_codes(app_client: httpx.AsyncClient) -> None:
    refused(await post(app_client, b"{not json"))
    refused(await post(app_client, b'{"query": "{ __typename }"}', "text/plain"))
    refused(await post(app_client, b"query=%7B__typename%7D",
                       "application/x-www-form-urlencoded"))
    refused(await post(app_client, b'{"query": 5}'))
    refused(await post(app_client, b'{"query": "{ __typename }", "variables": [1]}'))
    refused(await post(app_client, b'{"query": "{ __typename }", "extensions": "x"}'))
    refused(await post(app_client, b'{"query": "{ __typename }", "operationName": 7}'))
    refused(await post(app_client, b'{"variables": {}}'))
    refused(await post(app_client, '{"query": "{ __typename }"}'.encode("utf-16")[:-1]))
    refused(await post(app_client, b'{"query": "\xff\xfe{ __typename }"}'))
    refused(await app_client.get("/graphql", params={"query": "{ __typename }",
                                                     "variables": "[1]"}))
    refused(await app_client.get("/graphql", params={"query": "{ __typename }",
                                                     "variables": nested(1000)}))
    refused(await app_client.get("/graphql", headers={"accept": "application/json"}))


async def test_a_mutation_by_get_is_405(app_client: httpx.AsyncClient) -> None:
    response = await app_client.get("/graphql", params={
        "query": 'mutation { deleteMemory(namespace: "a", id: "b") }'})
    refused(response, 405)
    assert response.headers["allow"] == "POST"


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
async def test_other_methods_are_405(app_client: httpx.AsyncClient, method: str) -> None:
    response = await app_client.request(method, "/graphql", json={"query": "{ __typename }"})
    refused(response, 405)
    assert response.headers["allow"] == "GET, POST"


async def test_two_operations_need_an_operation_name(gql: GraphQLClient,
                                                     app_client: httpx.AsyncClient) -> None:
    document = "query A { __typename } mutation B { __typename }"
    body = await gql.raw(document)
    assert body["data"] is None
    assert code(body["errors"][0]) == "BAD_REQUEST"
    assert body["errors"][0]["message"].startswith("Must provide operation name")
    named = (await app_client.post("/graphql", json={"query": document,
                                                     "operationName": "A"})).json()
    assert named == {"data": {"__typename": "Query"}}
    unknown = (await app_client.post("/graphql", json={"query": document,
                                                       "operationName": "C"})).json()
    assert code(unknown["errors"][0]) == "BAD_REQUEST", unknown


# The class: WebSocket messages that are not graphql-transport-ws messages.

@pytest.mark.parametrize("message", [
    '"hello"', "null", "[1]", "5", '{"type": 5}', nested(1000),
    '{"type": "subscribe", "id": "1", "payload": "x"}',
    '{"type": "subscribe", "id": ["1"], "payload": {"query": "{ __typename }"}}',
    '{"type": "subscribe", "id": "1", "payload": {"query": 5}}',
    ('{"type": "subscribe", "id": "1", "payload": {"query": "{ __typename }",'
     ' "variables": [1]}}'),
    '{"type": "complete", "id": {}}',
])
async def test_bad_websocket_messages_close_with_4400(
        session_app: tuple[Any, Any], admin_key: str, message: str) -> None:
    transport = ASGIWebSocketTransport(app=session_app[1])
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://test") as client,
        aconnect_ws("http://test/graphql", client, subprotocols=["graphql-transport-ws"]) as ws,
    ):
        await ws.send_json({"type": "connection_init",
                            "payload": {"authorization": f"Bearer {admin_key}"}})
        assert (await ws.receive_json(timeout=10))["type"] == "connection_ack"
        await ws.send_text(message)
        with pytest.raises(WebSocketDisconnect) as closed:
            await ws.receive_text(timeout=10)
    assert closed.value.code == 4400, closed.value


async def test_a_websocket_stays_usable_for_good_messages(
        session_app: tuple[Any, Any], admin_key: str) -> None:
    transport = ASGIWebSocketTransport(app=session_app[1])
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://test") as client,
        aconnect_ws("http://test/graphql", client, subprotocols=["graphql-transport-ws"]) as ws,
    ):
        await ws.send_json({"type": "connection_init",
                            "payload": {"authorization": f"Bearer {admin_key}"}})
        assert (await ws.receive_json(timeout=10))["type"] == "connection_ack"
        await ws.send_json({"type": "subscribe", "id": str(uuid.uuid4()),
                            "payload": {"query": "{ __typename }"}})
        reply = await ws.receive_json(timeout=10)
        assert reply["type"] == "next" and reply["payload"]["data"] == {"__typename": "Query"}
