"""search: semantic, lexical and hybrid candidates; namespace fences; hostile query text."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memlattice.core.auth import Principal, Scope, Sensitivity, Tenant
from memlattice.core.model import MemoryFilter
from memlattice.core.vector_spaces import VectorSpace
from memlattice.graph import recall_query
from memlattice.search.index_shares import IndexShares
from memlattice.server.app import runtime_of
from tests.conftest import GraphQLClient
from tests.integration._support import FORGET, SEARCH, WRITE_MANY, basis, mem, mix


class WholeIndex(IndexShares):
    """Every namespace counted as the whole vector index, so that similarity
    searches take the smallest first pool (memlattice.search.pool) in a test database
    that many namespaces share."""

    def share(self, tenant: Tenant, space: VectorSpace | None,
              scope_keys: Sequence[str] | None = None) -> float | None:
        return 1.0


@pytest.fixture
def smallest_first_pool(session_app: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    service = runtime_of(session_app[0]).service
    monkeypatch.setattr(service, "shares", WholeIndex(service.shares.graph))


async def search(gql: GraphQLClient, namespace: str, **fields: Any) -> list[dict[str, Any]]:
    flt = fields.pop("filter", {})
    hits: list[dict[str, Any]] = (await gql.ok(SEARCH, {"input": {
        "filter": {"namespace": namespace, **flt}, **fields}}))["search"]
    return hits


def ids(hits: list[dict[str, Any]]) -> list[str]:
    return [h["memory"]["id"] for h in hits]


async def corpus(gql: GraphQLClient, namespace: str) -> dict[str, str]:
    """Four memories with known vectors and words."""
    specs = {
        "exact": mem(namespace, "zebra stripes are unique", embedding=basis(0)),
        "near": mem(namespace, "horses gallop in fields", embedding=mix((0, 1.0), (1, 0.4))),
        "far": mem(namespace, "quantum computing with qubits", embedding=basis(2)),
        "words": mem(namespace, "a zebra and a lion share the savanna", embedding=basis(3)),
    }
    written = (await gql.ok(WRITE_MANY, {"inputs": list(specs.values())}))["writeMemories"]
    return {name: m["id"] for name, m in zip(specs, written)}


async def test_semantic_ranks_by_vector_similarity(gql: GraphQLClient, namespace: str) -> None:
    c = await corpus(gql, namespace)
    hits = await search(gql, namespace, vector=basis(0), mode="SEMANTIC")
    assert ids(hits)[:2] == [c["exact"], c["near"]]
    assert set(ids(hits)) == set(c.values())
    top = hits[0]
    assert top["similarityScore"] == pytest.approx(1.0, abs=1e-4)
    assert top["ftsScore"] is None
    sims = [h["similarityScore"] for h in hits]
    assert all(0.0 <= s <= 1.0 + 1e-6 for s in sims)
    assert sims == sorted(sims, reverse=True)
    assert hits[0]["score"] >= hits[1]["score"] >= hits[-1]["score"]


async def test_lexical_finds_words_only(gql: GraphQLClient, namespace: str) -> None:
    c = await corpus(gql, namespace)
    hits = await search(gql, namespace, query="zebra", mode="LEXICAL")
    assert set(ids(hits)) == {c["exact"], c["words"]}
    assert all(h["ftsScore"] is not None and h["ftsScore"] > 0 for h in hits)
    assert all(h["similarityScore"] is None for h in hits)
    # A vector is ignored in lexical mode.
    hits = await search(gql, namespace, query="qubits", vector=basis(0), mode="LEXICAL")
    assert ids(hits) == [c["far"]]
    assert await search(gql, namespace, query="nonexistentword", mode="LEXICAL") == []


async def test_lexical_is_case_insensitive_and_any_word(gql: GraphQLClient,
                                                        namespace: str) -> None:
    c = await corpus(gql, namespace)
    hits = await search(gql, namespace, query="ZEBRA Qubits", mode="LEXICAL")
    assert set(ids(hits)) == {c["exact"], c["words"], c["far"]}


async def test_hybrid_fuses_both_lists(gql: GraphQLClient, namespace: str) -> None:
    c = await corpus(gql, namespace)
    hits = await search(gql, namespace, query="zebra", vector=basis(0), mode="HYBRID")
    assert ids(hits)[0] == c["exact"]  # first in both lists
    top = hits[0]
    assert top["similarityScore"] is not None and top["ftsScore"] is not None
    by_id = {h["memory"]["id"]: h for h in hits}
    # Only the vector side found it; fusion scores it on both signals, and it
    # holds no word of the query.
    assert by_id[c["far"]]["ftsScore"] == 0.0
    assert by_id[c["words"]]["ftsScore"] is not None
    # Default mode is hybrid.
    default = await search(gql, namespace, query="zebra", vector=basis(0))
    assert ids(default) == ids(hits)


async def test_limit_caps_results(gql: GraphQLClient, namespace: str) -> None:
    await corpus(gql, namespace)
    assert len(await search(gql, namespace, vector=basis(0), mode="SEMANTIC", limit=2)) == 2
    assert len(await search(gql, namespace, vector=basis(0), mode="SEMANTIC", limit=1)) == 1
    assert len(await search(gql, namespace, vector=basis(0), mode="SEMANTIC", limit=200)) == 4


async def test_other_namespaces_never_appear(gql: GraphQLClient, namespace: str) -> None:
    mine = await corpus(gql, namespace)
    for other in (namespace + "/child", namespace + "x", "other/" + namespace):
        await corpus(gql, other)
    for fields in ({"vector": basis(0), "mode": "SEMANTIC"},
                   {"query": "zebra qubits horses lion", "mode": "LEXICAL"},
                   {"query": "zebra", "vector": basis(0), "mode": "HYBRID"},
                   {"query": "zebra stripes"}):
        hits = await search(gql, namespace, limit=50, **fields)
        assert set(ids(hits)) <= set(mine.values()), fields
        assert all(h["memory"]["namespace"] == namespace for h in hits)
    assert await search(gql, namespace + "/nothing-here", vector=basis(0), mode="SEMANTIC") == []


HOSTILE = [
    "foo AND (bar", "*:*", "content:zebra", '"unbalanced', "zebra~2", "zebra^10",
    "[a TO z]", "{x TO y}", "/regex.*/", "\\", "&& || !", "key:* OR tags:*", "zebra)",
    "NOT zebra", "-zebra", "+zebra -lion", "zeb?a", "title:(a OR b)", "'; DROP", "$(type)",
    "`backtick`", "ゼブラ zebra", "z" * 500, " ".join(["zebra"] * 200),
]


async def test_lucene_syntax_in_query_text_never_errors(
    gql: GraphQLClient, namespace: str
) -> None:
    await corpus(gql, namespace)
    for query in HOSTILE:
        hits = await search(gql, namespace, query=query, vector=basis(0), mode="HYBRID")
        assert all(h["memory"]["namespace"] == namespace for h in hits), query
        body = await gql.raw(SEARCH, {"input": {"filter": {"namespace": namespace},
                                                "query": query, "mode": "LEXICAL"}})
        if body.get("errors"):
            # Only text without any word may be refused, and only as VALIDATION.
            assert body["errors"][0]["extensions"]["code"] == "VALIDATION", (query, body)
            assert not any(ch.isalnum() for ch in query), query
        else:
            assert all(h["memory"]["namespace"] == namespace
                       for h in body["data"]["search"]), query


async def test_lucene_operators_are_not_interpreted(gql: GraphQLClient, namespace: str) -> None:
    c = await corpus(gql, namespace)
    zebras = {c["exact"], c["words"]}
    # As Lucene these would exclude zebras or match everything; as words they find zebras.
    assert set(ids(await search(gql, namespace, query="NOT zebra", mode="LEXICAL"))) == zebras
    assert set(ids(await search(gql, namespace, query="-zebra", mode="LEXICAL"))) == zebras
    assert set(ids(await search(gql, namespace, query="content:zebra", mode="LEXICAL"))) == (
        zebras)
    # A field name is just a word: "key" occurs in no memory.
    assert ids(await search(gql, namespace, query="key:qubits", mode="LEXICAL")) == [c["far"]]
    # Wildcards are literal, so "zeb*" is the word "zeb", which no memory has.
    assert await search(gql, namespace, query="zeb*", mode="LEXICAL") == []


async def test_scope_filter(gql: GraphQLClient, namespace: str) -> None:
    written = (await gql.ok(WRITE_MANY, {"inputs": [
        mem(namespace, "penguin in session one", scope="SESSION", sessionId="s1",
            embedding=basis(0)),
        mem(namespace, "penguin in session two", scope="SESSION", sessionId="s2",
            embedding=basis(0)),
        mem(namespace, "penguin for the user", scope="USER", userId="u1", embedding=basis(0)),
        mem(namespace, "penguin for everyone", embedding=basis(0)),
    ]}))["writeMemories"]
    s1, s2, u1, everyone = (m["id"] for m in written)
    for fields in ({"vector": basis(0), "mode": "SEMANTIC"},
                   {"query": "penguin", "mode": "LEXICAL"},
                   {"query": "penguin", "vector": basis(0)}):
        hits = await search(gql, namespace, filter={"scope": "SESSION", "sessionId": "s1"},
                            **fields)
        assert ids(hits) == [s1], fields
        hits = await search(gql, namespace, filter={"scope": "USER", "userId": "u1"}, **fields)
        assert ids(hits) == [u1], fields
        hits = await search(gql, namespace, filter={"sessionId": "s2"}, **fields)
        assert ids(hits) == [s2], fields
        hits = await search(gql, namespace, **fields)
        assert set(ids(hits)) == {s1, s2, u1, everyone}, fields


async def test_other_filters_apply_to_search(gql: GraphQLClient, namespace: str) -> None:
    written = (await gql.ok(WRITE_MANY, {"inputs": [
        mem(namespace, "otter tagged red", tags=["red"], key="k1", embedding=basis(0),
            metadata={"lang": "en"}),
        mem(namespace, "otter tagged blue", tags=["blue"], key="k2", embedding=basis(0),
            metadata={"lang": "pt"}, sourceType="doc"),
    ]}))["writeMemories"]
    red, blue = written[0]["id"], written[1]["id"]
    for fields in ({"vector": basis(0), "mode": "SEMANTIC"},
                   {"query": "otter", "mode": "LEXICAL"}):
        assert ids(await search(gql, namespace, filter={"tagsAny": ["red"]}, **fields)) == [red]
        assert ids(await search(gql, namespace, filter={"key": "k2"}, **fields)) == [blue]
        assert ids(await search(gql, namespace, filter={"metadata": {"lang": "pt"}},
                                **fields)) == [blue]
        assert ids(await search(gql, namespace, filter={"sourceType": "doc"},
                                **fields)) == [blue]
        assert await search(gql, namespace, filter={"statuses": ["FORGOTTEN"]}, **fields) == []


async def test_search_now_is_the_expiry_clock(gql: GraphQLClient, namespace: str) -> None:
    expires = datetime.now(UTC) + timedelta(hours=1)
    written = (await gql.ok(WRITE_MANY, {"inputs": [
        mem(namespace, "walrus ephemeral", expiresAt=expires.isoformat(), embedding=basis(0)),
        mem(namespace, "walrus forever", embedding=basis(0)),
    ]}))["writeMemories"]
    ephemeral, forever = written[0]["id"], written[1]["id"]
    later = (expires + timedelta(minutes=1)).isoformat()
    for fields in ({"vector": basis(0), "mode": "SEMANTIC"},
                   {"query": "walrus", "mode": "LEXICAL"}):
        assert set(ids(await search(gql, namespace, **fields))) == {ephemeral, forever}
        assert ids(await search(gql, namespace, now=later, **fields)) == [forever]


async def test_filtered_semantic_search_finds_a_match_beyond_the_candidate_pool(
    gql: GraphQLClient, namespace: str
) -> None:
    crowd = [mem(namespace, f"crowd {i}", embedding=mix((0, 1.0), (10 + i, 0.05)))
             for i in range(55)]
    rare = mem(namespace, "the one with the tag", tags=["rare"], embedding=basis(1))
    written = (await gql.ok(WRITE_MANY, {"inputs": [*crowd, rare]}))["writeMemories"]
    hits = await search(gql, namespace, vector=basis(0), mode="SEMANTIC",
                        filter={"tagsAny": ["rare"]})
    assert ids(hits) == [written[-1]["id"]]


async def test_lexical_search_is_not_crowded_out_by_other_namespaces(
    gql: GraphQLClient, namespace: str
) -> None:
    await gql.ok(WRITE_MANY, {"inputs": [mem(namespace + "/noisy", "walrus walrus",
                                             embedding=basis(i)) for i in range(45)]})
    mine = (await gql.ok(WRITE_MANY, {"inputs": [mem(
        namespace, "a long note that mentions many things, the weather, lunch, trains, "
        "and finally a walrus near the end of a long sentence", embedding=basis(0))]}))[
        "writeMemories"][0]
    hits = await search(gql, namespace, query="walrus", mode="LEXICAL", candidates=2)
    assert ids(hits) == [mine["id"]]


@pytest.mark.usefixtures("smallest_first_pool")
async def test_similarity_search_widens_its_pool_when_confidence_reorders(
        gql: GraphQLClient, namespace: str) -> None:
    """Similarity-ranked searches ask the index for a small pool first; memories
    outside it must still win when the ones inside score lower (confidence).
    The answer equals the one from an explicit wide pool."""
    # 30 memories ever less similar to axis 0; the 25 most similar have low confidence.
    inputs = [mem(namespace, f"memory {i}", embedding=mix((0, 1.0), (1 + i, 0.1 + 0.05 * i)),
                  confidence=0.05 if i < 25 else 1.0) for i in range(30)]
    written = (await gql.ok(WRITE_MANY, {"inputs": inputs}))["writeMemories"]
    confident = {m["id"] for m in written[25:]}
    query = {"vector": basis(0), "mode": "SEMANTIC", "scoring": "SIMILARITY", "limit": 5}
    narrow = await search(gql, namespace, **query)
    wide = await search(gql, namespace, candidates=200, **query)
    assert set(ids(narrow)) == confident
    assert ids(narrow) == ids(wide)
    assert [h["score"] for h in narrow] == [h["score"] for h in wide]
    # Without the reordering the small pool is enough and gives the same answer too.
    plain = await search(gql, namespace, vector=mix((0, 1.0), (30, 0.5)), mode="SEMANTIC",
                         scoring="SIMILARITY", limit=3, filter={"minConfidence": 0.5})
    assert set(ids(plain)) <= confident and len(plain) == 3


@pytest.mark.usefixtures("smallest_first_pool")
async def test_similarity_search_is_not_crowded_out_by_inactive_memories(
        gql: GraphQLClient, namespace: str) -> None:
    """The small first pool filters status after the index (graph.recall_query):
    when forgotten memories fill it, the search must still return the nearest
    active ones, in the order an explicit wide pool gives, and asking for the
    forgotten ones must still find them."""
    inputs = [mem(namespace, f"memory {i}", embedding=mix((0, 1.0), (1 + i, 0.1 + 0.05 * i)),
                  tags=["old"] if i < 25 else []) for i in range(30)]
    written = (await gql.ok(WRITE_MANY, {"inputs": inputs}))["writeMemories"]
    forgotten = (await gql.ok(FORGET, {"ns": namespace, "p": {"tag": "old"}}))["forget"]
    assert forgotten["count"] == 25
    query = {"vector": basis(0), "mode": "SEMANTIC", "scoring": "SIMILARITY", "limit": 5}
    narrow = await search(gql, namespace, **query)
    wide = await search(gql, namespace, candidates=200, **query)
    assert ids(narrow) == [m["id"] for m in written[25:]]
    assert ids(narrow) == ids(wide)
    gone = await search(gql, namespace, filter={"statuses": ["FORGOTTEN"]}, **query)
    assert ids(gone) == [m["id"] for m in written[:5]]


def _operators(plan: Any) -> list[Any]:
    return [plan, *(op for child in plan.get("children", ()) for op in _operators(child))]


async def test_a_restricted_search_holds_no_copy_of_its_pool_per_scanned_memory(
        gql: GraphQLClient, graph_client: Any, namespace: str) -> None:
    """A key with a clearance filter plans an exact scan behind the vector index
    (graph.recall_query). Neo4j's planner carried the whole approximate pool into
    that scan, one copy per memory of the namespace, before checking whether the
    scan was needed at all: ~580 MB a search at 2000 memories, which exhausted
    Neo4j's transaction memory under a few concurrent searches ("Neo4j is busy").
    Measured in bytes, by PROFILE: no operator may hold more than a few pools."""
    await gql.ok(WRITE_MANY, {"inputs": [
        mem(namespace, f"kettle note {i}", embedding=mix((0, 1.0), (1 + i, 0.2)))
        for i in range(120)]})
    reader = Principal(key_id="k", name="reader", namespaces=None, max_scope=Scope.AGENT,
                       clearance=Sensitivity.LOW, can_write=False)
    text, params = recall_query.search(
        MemoryFilter(namespace=namespace), tenant=reader.tenant(namespace, write=False),
        now=datetime.now(UTC), vector=basis(0), lucene="kettle", candidates=50)
    assert "AS exact" in text  # the restricted plan has its exact scan
    async with graph_client.driver.session() as session:
        result = await session.run("PROFILE " + text, params)
        [record] = [r async for r in result]
        profile = (await result.consume()).profile
    assert len(record["semantic"]) == 50 and record["lexical"]
    pool = max(int(op["args"].get("Memory") or 0) for op in _operators(profile)
               if op["operatorType"].startswith("EagerAggregation"))
    held = max((int(op["args"].get("Memory") or 0), op["operatorType"])
               for op in _operators(profile))
    assert held[0] <= 4 * pool, held  # was 120 pools, in a Distinct
