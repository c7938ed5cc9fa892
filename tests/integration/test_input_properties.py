"""Properties of the write mutations over hostile inputs, against the real app.

Hypothesis draws strings with control, format (bidi, zero-width) and
separator characters, extreme numbers (huge, tiny, negative, -0.0, NaN,
infinities), odd vectors, extreme datetimes and deeply nested JSON, and feeds
them to writeMemory, updateMemory, addEdge, forget and storeFact. Whatever
it draws, the answer is one of:

* a typed error whose code is not INTERNAL, and the graph unchanged (the
  namespace's memories, versions, relationships and audit entries); or
* a clean write, whose response is strict JSON (no NaN / Infinity).

Bodies are encoded by Python's lenient encoder, as a careless client would,
so NaN, Infinity and lone surrogates do reach the server.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.conftest import GraphQLClient
from tests.integration._knowledge import STORE_FACT
from tests.integration._support import (
    ADD_EDGE,
    DIM,
    FORGET,
    UPDATE,
    WRITE,
    WRITE_MANY,
    code,
    fingerprint,
    mem,
    seeded,
)

EXAMPLES = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

# ------------------------------------------------------------------ strategies

ODD_CHARS = st.sampled_from([
    " ", "\t", "\n", "\r", "\u0000", "\u0007", "\u007f", "\u0085", "\u00a0", "\u200b",
    "\u200d", "\u200e", "\u202a", "\u202e", "\u2066", "\u2069", "\u2028", "\u2029",
    "\ufeff", "\u0378", "\ufffe", "\ud800", "\udfff", "_", ".", "*", ":", "/", "\\",
    '"', "'", "a", "Z", "7", "é", "東", "🙂", "\ue000",
])
ODD_TEXT = st.one_of(
    st.lists(ODD_CHARS, max_size=8).map("".join),
    st.text(max_size=12),
    st.sampled_from(["", " ", "   ", "\t\n", "x", " x", "x ", "plain words"]),
)
EXTREME_FLOATS = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 1e-320, 5e-324, 1e-45, 1e38, 3.5e38, 1e39,
                     1e308, 1.7976931348623157e308, -1e308, math.nan, math.inf, -math.inf]),
    st.floats(allow_nan=True, allow_infinity=True),
)
EXTREME_INTS = st.sampled_from([0, -1, 2**31, 2**53 + 1, 2**63 - 1, -(2**63), 2**64, 10**30])


def nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


JSON_LEAF = st.one_of(st.none(), st.booleans(), EXTREME_FLOATS, EXTREME_INTS, ODD_TEXT)
JSON_VALUE = st.recursive(
    JSON_LEAF,
    lambda children: st.one_of(st.lists(children, max_size=3),
                               st.dictionaries(ODD_TEXT, children, max_size=3)),
    max_leaves=8,
)
# Deep JSON (item 7, the other branch adds a depth limit): any non-INTERNAL typed
# error, or a clean write, is accepted for it.
DEEP_JSON = st.builds(nested, st.sampled_from([50, 200, 300]), JSON_LEAF)
JSON_INPUT = st.one_of(JSON_VALUE, DEEP_JSON)
METADATA = st.dictionaries(ODD_TEXT, JSON_INPUT, max_size=3)

VECTORS = st.one_of(
    st.builds(lambda x: [x] * DIM, EXTREME_FLOATS),
    st.builds(lambda x, i: [0.0] * i + [x] + [0.0] * (DIM - i - 1), EXTREME_FLOATS,
              st.integers(0, DIM - 1)),
    st.lists(st.floats(-1, 1), min_size=DIM, max_size=DIM),
)

# Extreme and odd datetimes, as the strings a client sends: far offsets, before
# the epoch, leap seconds, impossible dates, out-of-range years.
ODD_DATETIMES = st.one_of(
    st.sampled_from([
        "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z", "0001-01-01T00:00:00-14:00",
        "9999-12-31T23:59:59+14:00", "1969-12-31T23:59:59.999999Z", "1900-02-28T12:00:00Z",
        "2024-02-29T00:00:00+05:45", "2023-02-29T00:00:00Z", "2024-12-31T23:59:60Z",
        "2024-01-01T00:00:00", "2024-01-01", "-000001-01-01T00:00:00Z",
        "+10000-01-01T00:00:00Z", "not a date", "",
    ]),
    # Away from the calendar's ends, so no offset can carry the instant past them.
    st.builds(
        lambda d, minutes: d.replace(tzinfo=timezone(timedelta(minutes=minutes))).isoformat(),
        st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
        st.integers(-23 * 60 - 59, 23 * 60 + 59)),
)
# Instants whose conversion to UTC leaves the calendar (year 0 or 10000): refused
# with VALIDATION (memlattice.core.times), never an OverflowError.
OVERFLOWING_DATETIMES = st.sampled_from([
    "0001-01-01T00:00:00+14:00", "0001-01-01T05:00:00+05:01", "9999-12-31T23:59:59-14:00",
    "9999-12-31T12:00:00-12:01",
])
DATETIMES = ODD_DATETIMES | OVERFLOWING_DATETIMES



def hostile(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """Up to two of `fields`, each drawn from its hostile strategy; often none, so
    clean writes are drawn too and the property covers both of its branches."""
    one = st.sampled_from(sorted(fields)).flatmap(lambda k: st.tuples(st.just(k), fields[k]))
    return st.lists(one, max_size=2).map(dict)


def plain_or(odd: st.SearchStrategy[Any], *plain: Any) -> st.SearchStrategy[Any]:
    """One of the plain values, or a hostile draw."""
    return st.one_of(st.sampled_from(plain), odd)


# ------------------------------------------------------------------ helpers


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(text: str) -> Any:
    """Parse as a strict parser (JavaScript's JSON.parse) would: no NaN or Infinity."""
    return json.loads(text, parse_constant=_no_constant)


async def send(gql: GraphQLClient, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    response = await gql.http.post(
        "/graphql", content=json.dumps({"query": query, "variables": variables}),
        headers={"content-type": "application/json", "x-memlattice-actor": gql.actor})
    body: dict[str, Any] = strict_json(response.text)
    return body


def storable(namespace: Any) -> bool:
    """Whether Neo4j could even be asked about this namespace (lone surrogates cannot)."""
    if not isinstance(namespace, str):
        return False
    try:
        namespace.encode()
    except UnicodeEncodeError:
        return False
    return True


async def check(gql: GraphQLClient, graph_client: Any, namespaces: list[str], query: str,
                variables: dict[str, Any]) -> dict[str, Any] | None:
    """Send; a refusal must be typed (not INTERNAL) and leave every namespace as it was.
    Returns the data of a clean write, None for a refusal."""
    watched = list(dict.fromkeys(ns for ns in namespaces if storable(ns)))
    before = [await fingerprint(graph_client, ns) for ns in watched]
    body = await send(gql, query, variables)
    errors = body.get("errors")
    if errors:
        event(f"refused: {code(errors[0])}")
        for error in errors:
            assert code(error) not in {"INTERNAL", "None"}, (error, variables)
        after = [await fingerprint(graph_client, ns) for ns in watched]
        assert after == before, (errors, variables)
        return None
    event("clean write")
    data: dict[str, Any] = body["data"]
    return data


@pytest.fixture
async def base(gql: GraphQLClient, namespace: str) -> list[str]:
    """Two memories to update, relate and forget among."""
    written = (await gql.ok(WRITE_MANY, {"inputs": [
        mem(namespace, "alpha note", tags=["kept"], key="k1"),
        mem(namespace, "beta note", tags=["kept"])]}))["writeMemories"]
    return [m["id"] for m in written]


# ------------------------------------------------------------------ properties

MEMORY_FIELDS = hostile({
    "key": ODD_TEXT, "tags": st.lists(ODD_TEXT, max_size=3), "agentId": ODD_TEXT,
    "sessionId": ODD_TEXT, "taskId": ODD_TEXT, "sourceType": ODD_TEXT,
    "metadata": METADATA, "value": JSON_INPUT, "provenance": JSON_INPUT,
    "confidence": EXTREME_FLOATS, "salience": EXTREME_FLOATS, "embedding": VECTORS,
    "expiresAt": DATETIMES, "now": DATETIMES, "content": ODD_TEXT,
    "namespace": ODD_TEXT.map(lambda s: "/" + s),  # a suffix of the test's namespace
})


@EXAMPLES
@given(fields=MEMORY_FIELDS)
async def test_write_memory_is_typed_or_clean(
    gql: GraphQLClient, graph_client: Any, namespace: str, fields: dict[str, Any],
) -> None:
    target = namespace + fields.pop("namespace", "")
    fields = {"content": "a plain note", "embedding": seeded(len(fields)), **fields}
    data = await check(gql, graph_client, [namespace, target], WRITE,
                       {"input": {"namespace": target, **fields}})
    if data is not None:
        assert data["writeMemory"]["namespace"] == target


PATCH = hostile({
    "key": ODD_TEXT, "content": ODD_TEXT, "summary": ODD_TEXT,
    "tags": st.lists(ODD_TEXT, max_size=3), "metadata": METADATA, "value": JSON_INPUT,
    "confidence": EXTREME_FLOATS, "salience": EXTREME_FLOATS, "embedding": VECTORS,
    "expiresAt": DATETIMES,
})


@EXAMPLES
@given(patch=PATCH)
async def test_update_memory_is_typed_or_clean(
    gql: GraphQLClient, graph_client: Any, namespace: str, base: list[str],
    patch: dict[str, Any],
) -> None:
    before = (await graph_client.read(("MATCH (m:Memory {id: $id}) RETURN m.version AS v",
                                       {"id": base[0]})))[0]["v"]
    data = await check(gql, graph_client, [namespace], UPDATE,
                       {"ns": namespace, "id": base[0], "patch": patch})
    if data is not None:
        assert patch, "an empty patch must be refused"
        assert data["updateMemory"]["version"] == before + 1


@EXAMPLES
@given(type=st.sampled_from(["RELATED", "SUPPORTS", "SUPERSEDES", "CONTRADICTS"]),
       reverse=st.booleans(), metadata=st.one_of(st.none(), METADATA, JSON_INPUT))
async def test_add_edge_is_typed_or_clean(
    gql: GraphQLClient, graph_client: Any, namespace: str, base: list[str], type: str,
    reverse: bool, metadata: Any,
) -> None:
    source, target = base[::-1] if reverse else base
    data = await check(gql, graph_client, [namespace], ADD_EDGE, {"input": {
        "namespace": namespace, "sourceId": source, "targetId": target, "type": type,
        "metadata": metadata}})
    if data is not None:
        assert data["addEdge"]["type"] == type
    # Never a SUPERSEDES cycle, whatever was accepted.
    cycles = await graph_client.read((
        ("CYPHER 25 MATCH (m:Memory {namespace: $ns})"
         " WHERE EXISTS { (m)-[:SUPERSEDES]->+(m) } RETURN count(m) AS n"), {"ns": namespace}))
    assert cycles[0]["n"] == 0


PREDICATE = hostile({
    "contains": plain_or(ODD_TEXT, "alpha", "NOTE", "zzz"), "key": plain_or(ODD_TEXT, "k1"),
    "tag": plain_or(ODD_TEXT, "kept"), "tags": st.lists(plain_or(ODD_TEXT, "kept"), max_size=3),
    "query": plain_or(ODD_TEXT, "beta", "alpha note"), "id": ODD_TEXT,
})


@EXAMPLES
@given(predicate=PREDICATE)
async def test_forget_is_typed_or_exact(
    gql: GraphQLClient, graph_client: Any, namespace: str, base: list[str],
    predicate: dict[str, Any],
) -> None:
    before = await fingerprint(graph_client, namespace)
    data = await check(gql, graph_client, [namespace], FORGET, {"ns": namespace,
                                                                "p": predicate})
    if data is not None:
        forgotten = data["forget"]["count"]
        after = await fingerprint(graph_client, namespace)
        # Exactly the memories it names were tombstoned, each audited once.
        # (and kept as a revision: HAS_REVISION, one relationship each).
        assert after == {**before, "active": before["active"] - forgotten,
                         "versions": before["versions"] + forgotten,
                         "relationships": before["relationships"] + forgotten,
                         "audits": before["audits"] + forgotten}
        assert set(data["forget"]["ids"]) <= set(base)


FACT_FIELDS = hostile({
    "confidence": EXTREME_FLOATS, "metadata": METADATA, "provenance": JSON_INPUT,
    "tags": st.lists(ODD_TEXT, max_size=2), "taskId": ODD_TEXT, "embedding": VECTORS,
    "validUntil": DATETIMES,
    "evidence": st.lists(st.fixed_dictionaries({"kind": ODD_TEXT, "ref": ODD_TEXT}),
                         max_size=2),
    "kind": ODD_TEXT, "claim": ODD_TEXT,
})


@EXAMPLES
@given(fields=FACT_FIELDS)
async def test_store_fact_is_typed_or_clean(
    gql: GraphQLClient, graph_client: Any, namespace: str, fields: dict[str, Any],
) -> None:
    fields = {"kind": "policy", "claim": "Deploys need review.",
              "embedding": seeded(len(fields) + 1), **fields}
    data = await check(gql, graph_client, [namespace], STORE_FACT, {"input": {
        "namespace": namespace, **fields}})
    if data is not None:
        assert data["storeFact"]["fact"]["memory"]["namespace"] == namespace

