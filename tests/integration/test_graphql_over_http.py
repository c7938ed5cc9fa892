"""GraphQL over HTTP as the spec describes it (issue 29, item 2).

graphql-http's own audit suite (`serverAudits`, from npm, tests/node) runs
against a live server with API keys on: no MUST or SHOULD may fail. Around it,
what the audits do not reach: a refused operation under
application/graphql-response+json is a 400 without `data` whatever refused
it (limits, operation selection, the key), an operation that ran keeps
`data` and 200, and application/json keeps its 200 and `data: null`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from memlattice.core.settings import LimitsSettings, Settings
from memlattice.server.app import create_app
from tests._live import serve_in_thread
from tests._node import node_json

MODERN = "application/graphql-response+json"
APOLLO_ACCEPT = "application/graphql-response+json,application/json;q=0.9"


@pytest.fixture(scope="module")
def live(settings: Settings) -> Iterator[str]:
    """The real app, keys required, depth limited to 3 (the audits' queries are shallow)."""
    app = create_app(settings.model_copy(update={
        "auth_mode": "keys", "limits": LimitsSettings(max_depth=3)}))
    with serve_in_thread(app) as url:
        yield url + "/graphql"


def post(url: str, body: dict[str, Any], accept: str | None, key: str | None) -> httpx.Response:
    headers = {"content-type": "application/json"}
    if accept:
        headers["accept"] = accept
    if key:
        headers["authorization"] = f"Bearer {key}"
    return httpx.post(url, json=body, headers=headers, timeout=60)


def test_graphql_http_audits_pass_every_must_and_should(live: str, admin_key: str) -> None:
    report = node_json("audit_server.mjs", live, admin_key, "--json")
    failed = [f"{a['id']} {a['name']}: {a['reason']}" for a in report["audits"]
              if not a["passed"] and not a["name"].startswith("MAY")]
    assert failed == []
    print("graphql-http audits:", report["counts"])
    assert report["counts"]["MUST"]["passed"] >= 13
    assert report["counts"]["SHOULD"]["passed"] >= 23


@pytest.mark.parametrize(("query", "code"), [
    ('{ memories(filter: {namespace: "x"}) { edges { node { id } } } }',
     "TOO_COMPLEX"),
    ("query A { __typename } query B { __typename }", "BAD_REQUEST"),
    ("{ __typename ", "BAD_REQUEST"),
    ("{ nosuchfield }", "VALIDATION"),
])
def test_an_operation_that_never_ran_is_a_400_without_data(
        live: str, admin_key: str, query: str, code: str) -> None:
    modern = post(live, {"query": query}, APOLLO_ACCEPT, admin_key)
    assert modern.status_code == 400, modern.text
    assert modern.headers["content-type"].startswith(MODERN)
    body = modern.json()
    assert "data" not in body and body["errors"][0]["extensions"]["code"] == code, body
    legacy = post(live, {"query": query}, None, admin_key)
    assert legacy.status_code == 200 and legacy.headers["content-type"] == "application/json"
    assert legacy.json()["data"] is None
    assert legacy.json()["errors"][0]["extensions"]["code"] == code


def test_an_operation_that_ran_keeps_data_and_200(live: str, admin_key: str) -> None:
    # The resolver refuses the namespace: a field error, with a path, after execution began.
    query = '{ memory(namespace: "../up", id: "x") { id } }'
    answer = post(live, {"query": query}, MODERN, admin_key)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith(MODERN)
    body = answer.json()
    assert "data" in body and body["errors"][0]["path"] == ["memory"], body
    assert body["errors"][0]["extensions"]["code"] == "VALIDATION"


def test_a_refused_key_and_a_malformed_body_speak_the_media_type(
        live: str, admin_key: str) -> None:
    unauthenticated = post(live, {"query": "{ __typename }"}, MODERN, None)
    assert unauthenticated.status_code == 401
    assert unauthenticated.headers["content-type"].startswith(MODERN)
    assert "data" not in unauthenticated.json()
    legacy = post(live, {"query": "{ __typename }"}, "application/json", None)
    assert legacy.status_code == 401 and legacy.json()["data"] is None
    malformed = httpx.post(live, content=b"{", timeout=60, headers={
        "content-type": "application/json", "accept": MODERN,
        "authorization": f"Bearer {admin_key}"})
    assert malformed.status_code == 400
    assert malformed.headers["content-type"].startswith(MODERN)
    assert malformed.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"


def test_an_unknown_operation_name_is_a_400(live: str, admin_key: str) -> None:
    body = {"query": "query A { __typename }", "operationName": "B"}
    answer = post(live, body, MODERN, admin_key)
    assert answer.status_code == 400 and "data" not in answer.json(), answer.text
    assert answer.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
