"""Which media type an `Accept` header gets (memlattice.server.media_types)."""

from __future__ import annotations

import pytest

from memlattice.server.media_types import GRAPHQL_RESPONSE, JSON, negotiate

APOLLO_CLIENT_4 = "application/graphql-response+json,application/json;q=0.9"


@pytest.mark.parametrize(("accept", "expected"), [
    (None, JSON),
    ("", JSON),
    ("*/*", JSON),
    ("application/*", JSON),
    ("application/json", JSON),
    ("text/html", JSON),  # neither: the Accept is disregarded, not answered 406
    (GRAPHQL_RESPONSE, GRAPHQL_RESPONSE),
    (APOLLO_CLIENT_4, GRAPHQL_RESPONSE),
    ("application/json, application/graphql-response+json", GRAPHQL_RESPONSE),
    ("application/json, application/graphql-response+json;q=0.5", JSON),
    ("application/graphql-response+json;q=0, application/json", JSON),
    ("Application/GraphQL-Response+JSON; charset=utf-8", GRAPHQL_RESPONSE),
    ("application/json;q=0, */*", GRAPHQL_RESPONSE),
    ("application/graphql-response+json;q=oops, application/json", JSON),
])
def test_negotiate(accept: str | None, expected: str) -> None:
    assert negotiate(accept) == expected
