"""configureNamespace: per-namespace search defaults; the latest wins."""

from __future__ import annotations

from tests.conftest import GraphQLClient
from tests.integration._support import WRITE_MANY, basis, code

CONFIGURE = """mutation($ns: String!, $input: NamespaceConfigInput!) {
  configureNamespace(namespace: $ns, input: $input) {
    namespace version backend scoring decayHalfLifeDays rrfK updatedBy
    weights { similarity fulltext recency popularity } } }"""
GET = """query($ns: String!) { namespaceConfig(namespace: $ns) { version backend scoring } }"""
SEARCH = """query($input: SearchInput!) {
  search(input: $input) { similarityScore ftsScore memory { id } } }"""


async def test_latest_configuration_wins_and_is_versioned(
    gql: GraphQLClient, namespace: str, admin_actor: str
) -> None:
    assert (await gql.ok(GET, {"ns": namespace}))["namespaceConfig"] is None
    first = (await gql.ok(CONFIGURE, {"ns": namespace, "input": {
        "backend": "LEXICAL", "scoring": "HYBRID", "decayHalfLifeDays": 14,
        "weights": {"similarity": 0.2, "fulltext": 0.8, "recency": 0, "popularity": 0}}}))
    config = first["configureNamespace"]
    assert config["version"] == 1 and config["backend"] == "LEXICAL"
    assert config["weights"]["fulltext"] == 0.8 and config["updatedBy"] == admin_actor
    second = await gql.ok(CONFIGURE, {"ns": namespace, "input": {"backend": "SEMANTIC"}})
    assert second["configureNamespace"]["version"] == 2
    assert second["configureNamespace"]["scoring"] is None  # replaced, not merged
    assert (await gql.ok(GET, {"ns": namespace}))["namespaceConfig"] == {
        "version": 2, "backend": "SEMANTIC", "scoring": None}


async def test_search_uses_the_namespace_backend_unless_told_otherwise(
    gql: GraphQLClient, namespace: str
) -> None:
    await gql.ok(WRITE_MANY, {"inputs": [
        {"namespace": namespace, "content": "zebra crossing", "embedding": basis(1)}]})
    await gql.ok(CONFIGURE, {"ns": namespace, "input": {"backend": "LEXICAL"}})
    base = {"filter": {"namespace": namespace}, "query": "zebra", "vector": basis(1)}
    lexical = (await gql.ok(SEARCH, {"input": base}))["search"][0]
    assert lexical["ftsScore"] is not None and lexical["similarityScore"] is None
    explicit = (await gql.ok(SEARCH, {"input": {**base, "mode": "SEMANTIC"}}))["search"][0]
    assert explicit["similarityScore"] is not None and explicit["ftsScore"] is None


async def test_bad_configuration_is_validation(gql: GraphQLClient, namespace: str) -> None:
    for bad in ({"decayHalfLifeDays": -1}, {"rrfK": 0},
                {"weights": {"similarity": 0, "fulltext": 0, "recency": 0, "popularity": 0}}):
        error = await gql.error(CONFIGURE, {"ns": namespace, "input": bad})
        assert code(error) == "VALIDATION", bad
    error = await gql.error(CONFIGURE, {"ns": "../x", "input": {}})
    assert code(error) == "VALIDATION"
