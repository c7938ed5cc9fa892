"""Recall through /graphql: visibility, filters, scoring parts, expansion, conflicts."""

from __future__ import annotations

from typing import Any

import pytest

from memlattice.search.rerank import RerankerRegistry
from tests.conftest import GraphQLClient
from tests.integration._support import WRITE_MANY, basis, code, mix

HIT = """
query($input: SearchInput!) {
  search(input: $input) {
    score similarityScore ftsScore recencyScore popularityScore graphScore boost
    rerankScore similarityRank ftsRank expanded
    path { type sourceId targetId }
    conflicts { id content }
    memory { id content scope sessionId userId agentId taskId tags }
  }
}
"""
LINK = """mutation($ns: String!, $inputs: [EdgeSpecInput!]!) {
  addEdges(namespace: $ns, inputs: $inputs) { id type sourceId targetId } }"""


async def write(gql: GraphQLClient, namespace: str, *memories: dict[str, Any]) -> list[str]:
    data = await gql.ok(WRITE_MANY, {"inputs": [{"namespace": namespace, **m}
                                                for m in memories]})
    return [m["id"] for m in data["writeMemories"]]


async def search(gql: GraphQLClient, namespace: str, **input: Any) -> list[dict[str, Any]]:
    data = await gql.ok(HIT, {"input": {"filter": {"namespace": namespace}, **input}})
    hits: list[dict[str, Any]] = data["search"]
    return hits


async def test_a_scope_sees_itself_and_every_broader_level_of_its_chain(
    gql: GraphQLClient, namespace: str
) -> None:
    chain = {"agentId": "a1", "userId": "u1", "sessionId": "s1", "taskId": "t1"}
    ids = dict(zip(
        ["task", "session", "user", "agent", "namespace", "other_session", "other_user",
         "other_agent"],
        await write(
            gql, namespace,
            {"content": "kettle task note", "scope": "TASK", **chain},
            {"content": "kettle session note", "scope": "SESSION", **chain},
            {"content": "kettle user note", "scope": "USER", **chain},
            {"content": "kettle agent note", "scope": "AGENT", **chain},
            {"content": "kettle namespace note"},
            {"content": "kettle other session", "scope": "SESSION", "sessionId": "s2",
             "userId": "u1", "agentId": "a1"},
            {"content": "kettle other user", "scope": "USER", "userId": "u2", "agentId": "a1"},
            {"content": "kettle other agent", "scope": "AGENT", "agentId": "a2"},
        ),
    ))

    async def visible(**input: Any) -> set[str]:
        hits = await search(gql, namespace, query="kettle", mode="LEXICAL", limit=50, **input)
        return {name for name, id in ids.items() if id in {h["memory"]["id"] for h in hits}}

    assert await visible(context=chain, scope="SESSION") == {
        "session", "user", "agent", "namespace"}
    assert await visible(context=chain, scope="USER") == {"user", "agent", "namespace"}
    assert await visible(context=chain) == {"task", "session", "user", "agent", "namespace"}
    assert await visible(context=chain, scopes=["TASK", "AGENT"]) == {"task", "agent"}
    assert await visible(context={"userId": "u1", "sessionId": "s2"}) == {
        "other_session", "user", "namespace"}
    # A session id means nothing outside its user: naming no user is naming none.
    assert await visible(context={"sessionId": "s2"}) == {"namespace"}
    # The same holds on the vector side, filtered inside the index.
    hits = await search(gql, namespace, vector=basis(3), mode="SEMANTIC", limit=50,
                        context={"userId": "u2", "agentId": "a1"}, scope="USER")
    assert {h["memory"]["id"] for h in hits} == {ids["other_user"], ids["agent"],
                                                 ids["namespace"]}


async def test_a_scope_without_its_id_is_refused(gql: GraphQLClient, namespace: str) -> None:
    body = await gql.raw(HIT, {"input": {"filter": {"namespace": namespace}, "query": "x",
                                         "context": {"userId": "u"}, "scope": "SESSION"}})
    assert code(body["errors"][0]) == "VALIDATION"


async def test_every_hit_explains_its_score(gql: GraphQLClient, namespace: str) -> None:
    await write(gql, namespace,
                {"content": "the blue kettle boils", "embedding": basis(1)},
                {"content": "a red teapot", "embedding": mix((1, 0.6), (2, 0.8))})
    hits = await search(gql, namespace, query="kettle", vector=basis(1), mode="HYBRID",
                        scoring="HYBRID", decayHalfLifeDays=30)
    top = hits[0]
    assert top["memory"]["content"] == "the blue kettle boils"
    assert top["similarityScore"] == pytest.approx(1.0, abs=1e-6)
    assert top["ftsScore"] > 0 and top["ftsRank"] == 1 and top["similarityRank"] == 1
    assert top["recencyScore"] == pytest.approx(1.0, abs=1e-3)
    assert top["boost"] == 1.0 and top["graphScore"] == 0.0 and not top["expanded"]
    second = hits[1]
    assert second["ftsScore"] is None and second["similarityScore"] < top["similarityScore"]


async def test_recency_decay_orders_equal_matches_by_age(gql: GraphQLClient, namespace: str) -> None:
    old, new = await write(
        gql, namespace,
        {"content": "standup notes", "embedding": basis(5), "now": "2026-01-01T00:00:00Z"},
        {"content": "standup notes", "embedding": basis(5), "now": "2026-03-01T00:00:00Z",
         "allowDuplicate": True},
    )
    hits = await search(gql, namespace, vector=basis(5), mode="SEMANTIC", scoring="HYBRID",
                        decayHalfLifeDays=30, now="2026-03-01T00:00:00Z",
                        weights={"similarity": 1, "fulltext": 0, "recency": 1, "popularity": 0})
    assert [h["memory"]["id"] for h in hits] == [new, old]
    assert hits[1]["recencyScore"] == pytest.approx(0.5 ** (59 / 30), rel=1e-3)


async def test_same_store_query_and_now_give_the_same_order(
    gql: GraphQLClient, namespace: str
) -> None:
    await write(gql, namespace, *[{"content": f"note {i % 3}", "embedding": basis(7)}
                                  for i in range(12)])
    args = {"vector": basis(7), "query": "note", "now": "2030-01-01T00:00:00Z", "limit": 12}
    first = [h["memory"]["id"] for h in await search(gql, namespace, **args)]
    second = [h["memory"]["id"] for h in await search(gql, namespace, **args)]
    assert first == second
    scores = [h["score"] for h in await search(gql, namespace, **args)]
    tied = [i for i in range(len(scores) - 1) if scores[i] == scores[i + 1]]
    assert all(first[i] < first[i + 1] for i in tied)  # ties broken by id


async def test_filters_tags_confidence_types_and_time(gql: GraphQLClient, namespace: str) -> None:
    ids = await write(
        gql, namespace,
        {"content": "alpha fact", "tags": ["x", "y"], "confidence": 0.9,
         "memoryType": "observation",  # "fact" is storeFact's own (typed) memoryType
         "now": "2026-01-10T00:00:00Z"},
        {"content": "alpha guess", "tags": ["x"], "confidence": 0.2, "memoryType": "note",
         "now": "2026-02-10T00:00:00Z"},
    )

    async def found(**flt: Any) -> list[str]:
        data = await gql.ok(HIT, {"input": {"filter": {"namespace": namespace, **flt},
                                            "query": "alpha", "mode": "LEXICAL"}})
        return [h["memory"]["id"] for h in data["search"]]

    assert await found(tagsAll=["x", "y"]) == [ids[0]]
    assert set(await found(tagsAny=["x"])) == set(ids)
    assert await found(minConfidence=0.5) == [ids[0]]
    assert await found(memoryTypes=["note"]) == [ids[1]]
    assert await found(createdAfter="2026-02-01T00:00:00Z") == [ids[1]]


async def test_key_and_tag_matches_get_a_small_boost(gql: GraphQLClient, namespace: str) -> None:
    plain, keyed = await write(
        gql, namespace,
        {"content": "teal", "embedding": basis(9)},
        {"content": "teal", "embedding": basis(9), "key": "favourite colour"},
    )
    hits = await search(gql, namespace, query="favourite colour", vector=basis(9),
                        mode="SEMANTIC", scoring="SIMILARITY")
    assert [h["memory"]["id"] for h in hits] == [keyed, plain]
    assert hits[0]["boost"] == pytest.approx(1.1)


async def test_expansion_brings_neighbours_with_their_path(
    gql: GraphQLClient, namespace: str
) -> None:
    question, answer, unrelated = await write(
        gql, namespace,
        {"content": "Caroline: where did you go on holiday?", "embedding": basis(11)},
        {"content": "Melanie: we camped by the lake", "embedding": basis(12)},
        {"content": "Melanie: I like pottery", "embedding": basis(13)},
    )
    await gql.ok(LINK, {"ns": namespace, "inputs": [
        {"sourceId": question, "targetId": answer, "type": "RELATED"}]})
    without = await search(gql, namespace, query="holiday", mode="LEXICAL")
    assert [h["memory"]["id"] for h in without] == [question]
    hits = await search(gql, namespace, query="holiday", mode="LEXICAL",
                        expansion={"maxExpand": 5, "types": ["RELATED"]})
    assert [h["memory"]["id"] for h in hits] == [question, answer]
    reached = hits[1]
    assert reached["expanded"] and reached["graphScore"] > 0
    assert reached["path"] == [{"type": "RELATED", "sourceId": question, "targetId": answer}]
    assert unrelated not in {h["memory"]["id"] for h in hits}
    # Direction is honoured: nothing points *into* the question.
    inbound = await search(gql, namespace, query="holiday", mode="LEXICAL",
                           expansion={"maxExpand": 5, "types": ["RELATED"], "direction": "IN"})
    assert [h["memory"]["id"] for h in inbound] == [question]


async def test_contradicting_memories_are_reported_as_conflicts(
    gql: GraphQLClient, namespace: str
) -> None:
    claim, denial = await write(gql, namespace, {"content": "the office is in Porto"},
                                {"content": "the office moved to Lisbon"})
    await gql.ok(LINK, {"ns": namespace, "inputs": [
        {"sourceId": denial, "targetId": claim, "type": "CONTRADICTS"}]})
    hits = await search(gql, namespace, query="Porto", mode="LEXICAL")
    # The move is also read as an update of the office's place (docs/knowledge.md), so
    # the newer state may come first; the claim is found with its conflict either way.
    claimed = next(h for h in hits if h["memory"]["id"] == claim)
    assert claimed["conflicts"] == [{"id": denial, "content": "the office moved to Lisbon"}]


async def test_min_score_and_limit_cut_the_list(gql: GraphQLClient, namespace: str) -> None:
    await write(gql, namespace, *[{"content": f"item {i}", "embedding": mix((1, 1.0), (2, i / 4))}
                                  for i in range(8)])
    hits = await search(gql, namespace, vector=basis(1), mode="SEMANTIC", scoring="SIMILARITY",
                        limit=3)
    assert len(hits) == 3
    threshold = hits[1]["score"]
    cut = await search(gql, namespace, vector=basis(1), mode="SEMANTIC", scoring="SIMILARITY",
                       minScore=threshold)
    assert all(h["score"] >= threshold for h in cut) and len(cut) == 2


async def test_mmr_trades_a_near_duplicate_for_something_new(
    gql: GraphQLClient, namespace: str
) -> None:
    first, twin, other = await write(
        gql, namespace,
        {"content": "a", "embedding": basis(20)},
        {"content": "a again", "embedding": mix((20, 1.0), (21, 0.05))},
        {"content": "b", "embedding": mix((20, 0.6), (22, 0.8))},
    )
    plain = await search(gql, namespace, vector=basis(20), mode="SEMANTIC", limit=2)
    assert [h["memory"]["id"] for h in plain] == [first, twin]
    diverse = await search(gql, namespace, vector=basis(20), mode="SEMANTIC", limit=2,
                           mmrLambda=0.3)
    assert [h["memory"]["id"] for h in diverse] == [first, other]


async def test_unknown_preset_and_reranker_are_validation(
    gql: GraphQLClient, namespace: str
) -> None:
    for extra in ({"preset": "nope"}, {"reranker": "nope"}, {"limit": 0},
                  {"expansion": {"depth": 9}}, {"weights": {"similarity": 0, "fulltext": 0,
                                                            "recency": 0, "popularity": 0}}):
        body = await gql.raw(HIT, {"input": {"filter": {"namespace": namespace},
                                             "query": "x", **extra}})
        assert code(body["errors"][0]) == "VALIDATION", extra


async def test_a_registered_python_reranker_reorders_the_head(
    settings: Any, namespace: str
) -> None:
    import httpx
    from asgi_lifespan import LifespanManager

    from memlattice.server.app import create_app

    async def by_length(query: str, docs: Any) -> list[float]:
        return [float(len(text)) for _, text in docs]

    registry = RerankerRegistry()
    registry.register("longest", by_length)
    app = create_app(settings, rerankers=registry)
    async with LifespanManager(app, startup_timeout=120) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            gql = GraphQLClient(http)
            await write(gql, namespace, {"content": "tea"}, {"content": "tea with a lot of milk"})
            hits = await search(gql, namespace, query="tea", mode="LEXICAL", reranker="longest")
    assert [h["memory"]["content"] for h in hits] == ["tea with a lot of milk", "tea"]
    assert hits[0]["rerankScore"] == len("tea with a lot of milk")
