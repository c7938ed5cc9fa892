"""ingestConversation: turns as memories, the session's structure, idempotence,
and recall that reads the turns around a match."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import GraphQLClient
from tests.integration._support import seeded

INGEST = """mutation($input: ConversationInput!) {
  ingestConversation(input: $input) {
    sessionId created memories { id content scope sessionId userId createdAt metadata }
  } }"""
SEARCH = """query($input: SearchInput!) { search(input: $input) {
  score ftsScore memory { id content } } }"""

TURNS = [
    ("Caroline", "Have you been anywhere nice lately?", "2023-05-07T10:00:00Z"),
    ("Melanie", "Yes! We went camping by the lake last weekend.", "2023-05-07T10:00:05Z"),
    ("Caroline", "That sounds lovely, who went with you?", "2023-05-07T10:00:10Z"),
    ("Melanie", "My kids and my husband. We roasted marshmallows.", "2023-05-07T10:00:15Z"),
]


def session(namespace: str, turns: list[tuple[str, str, str]] = TURNS,
            session_id: str = "s-1") -> dict[str, Any]:
    return {"namespace": namespace, "sessionId": session_id, "userId": "u-1", "messages": [
        {"speaker": who, "content": text, "at": at, "embedding": seeded(i + 100)}
        for i, (who, text, at) in enumerate(turns)]}


async def structure(graph_client: Any, namespace: str) -> dict[str, Any]:
    (record,) = await graph_client.read(("""
        RETURN COUNT { (:Memory {namespace: $ns}) } AS memories,
               COUNT { (:Memory {namespace: $ns})-[:NEXT]->(:Memory) } AS next,
               COUNT { (:Memory {namespace: $ns})-[:IN_SESSION]->(:Session) } AS inSession,
               COUNT { (s:Session {namespace: $ns}) } AS sessions,
               COUNT { (:Memory {namespace: $ns})-[:SPOKEN_BY]->(:Entity) } AS spoken,
               COLLECT { MATCH (e:Entity {namespace: $ns}) RETURN e.name ORDER BY e.name }
                 AS speakers,
               COUNT { (a:AuditEntry) WHERE a.memoryId IN COLLECT {
                 MATCH (x:Memory {namespace: $ns}) RETURN x.id } } AS audits""",
        {"ns": namespace}))
    return dict(record)


async def test_a_session_becomes_turns_a_session_node_next_and_speakers(
    gql: GraphQLClient, graph_client: Any, namespace: str,
) -> None:
    done = (await gql.ok(INGEST, {"input": session(namespace)}))["ingestConversation"]
    assert done["created"] == 4 and done["sessionId"] == "s-1"
    first = done["memories"][0]
    assert first["content"] == "Caroline: Have you been anywhere nice lately?"
    assert (first["scope"], first["sessionId"], first["userId"]) == ("SESSION", "s-1", "u-1")
    assert first["createdAt"].startswith("2023-05-07T10:00:00")
    assert first["metadata"] == {"speaker": "Caroline"}
    assert await structure(graph_client, namespace) == {
        "memories": 4, "next": 3, "inSession": 4, "sessions": 1, "spoken": 4,
        "speakers": ["Caroline", "Melanie"], "audits": 4}
    order = await graph_client.read(("""
        MATCH p = (a:Memory {namespace: $ns})-[:NEXT*]->(b) WHERE NOT ()-[:NEXT]->(a)
          AND NOT (b)-[:NEXT]->() RETURN [n IN nodes(p) | n.id] AS ids""", {"ns": namespace}))
    assert order[0]["ids"] == [m["id"] for m in done["memories"]]


async def test_sending_a_session_again_changes_nothing(
    gql: GraphQLClient, graph_client: Any, namespace: str,
) -> None:
    first = (await gql.ok(INGEST, {"input": session(namespace)}))["ingestConversation"]
    before = await structure(graph_client, namespace)
    again = (await gql.ok(INGEST, {"input": session(namespace)}))["ingestConversation"]
    assert again["created"] == 0
    assert [m["id"] for m in again["memories"]] == [m["id"] for m in first["memories"]]
    assert await structure(graph_client, namespace) == before


async def test_a_continuation_joins_the_chain_after_its_last_turn(
    gql: GraphQLClient, graph_client: Any, namespace: str,
) -> None:
    await gql.ok(INGEST, {"input": session(namespace, TURNS[:2])})
    more = (await gql.ok(INGEST, {"input": session(namespace, TURNS[1:])}))
    assert more["ingestConversation"]["created"] == 2
    counts = await structure(graph_client, namespace)
    assert (counts["memories"], counts["next"], counts["sessions"]) == (4, 3, 1)


async def test_bad_sessions_are_refused_and_write_nothing(
    gql: GraphQLClient, graph_client: Any, namespace: str,
) -> None:
    for bad in ({**session(namespace), "messages": []},
                {**session(namespace), "sessionId": " "},
                {**session(namespace), "messages": [{"speaker": "A", "content": "  "}]},
                {**session(namespace), "messages": [{"content": "same"}, {"content": "same"}]}):
        error = await gql.error(INGEST, {"input": bad})
        assert error["extensions"]["code"] == "VALIDATION", error
    assert (await structure(graph_client, namespace))["memories"] == 0


async def test_a_turn_is_found_by_the_words_around_it(
    gql: GraphQLClient, namespace: str,
) -> None:
    done = (await gql.ok(INGEST, {"input": session(namespace)}))["ingestConversation"]
    ids = [m["id"] for m in done["memories"]]
    # "who went camping" names no word of the answer turn; the turns around it do.
    hits = (await gql.ok(SEARCH, {"input": {
        "filter": {"namespace": namespace}, "query": "who went camping with Melanie",
        "mode": "LEXICAL"}}))["search"]
    assert ids[3] in [h["memory"]["id"] for h in hits]
    plain = (await gql.ok(SEARCH, {"input": {
        "filter": {"namespace": namespace}, "query": "who went camping with Melanie",
        "mode": "LEXICAL", "contextHops": 0}}))["search"]
    by_id = {h["memory"]["id"]: h["ftsScore"] for h in plain}
    with_context = {h["memory"]["id"]: h["ftsScore"] for h in hits}
    assert with_context[ids[3]] > by_id.get(ids[3], 0.0)


async def test_a_reply_that_says_nothing_is_not_lifted_by_its_neighbour(
    gql: GraphQLClient, namespace: str,
) -> None:
    """Context lifts a turn as much as the turn itself says (its idf mass against
    the session's average): "Haha, totally!" beside the matching turn stays below
    a turn that holds one of the query's words itself."""
    said = [
        ("Melanie", "Haha, totally!"),
        ("Caroline", "The kiln at the studio broke again, so my bowls are stuck for a week."),
        ("Melanie", "Haha, that figures."),
        ("Caroline", "I finally signed up for the pottery class at the community centre."),
        ("Melanie", "Haha, totally!"),
        ("Caroline", "Anyway, how are the kids doing this spring?"),
        ("Melanie", "They adore the puppy we adopted from the shelter in March."),
        ("Caroline", "Haha, totally! That puppy is adorable."),
        ("Melanie", "My sister says her pottery teacher is the best in town."),
        ("Caroline", "Send me a photo of the bowls when they come out of the kiln."),
    ]
    turns = [(who, text, f"2023-05-07T10:00:{i:02}Z") for i, (who, text) in enumerate(said)]
    done = (await gql.ok(INGEST, {"input": session(namespace, turns)}))["ingestConversation"]
    ids = [m["id"] for m in done["memories"]]
    hits = (await gql.ok(SEARCH, {"input": {
        "filter": {"namespace": namespace}, "query": "the pottery class",
        "mode": "LEXICAL", "scoring": "SIMILARITY"}}))["search"]
    order = [h["memory"]["id"] for h in hits]
    assert order[0] == ids[3]
    # The filler right after the match, and the one before it, below the sister's teacher.
    assert order.index(ids[8]) < order.index(ids[4])
    assert order.index(ids[8]) < order.index(ids[2])


async def test_a_forgotten_turn_lends_no_words_but_the_turns_beyond_it_still_do(
    gql: GraphQLClient, namespace: str,
) -> None:
    done = (await gql.ok(INGEST, {"input": session(namespace)}))["ingestConversation"]
    ids = [m["id"] for m in done["memories"]]
    forgot = (await gql.ok("""mutation($ns: String!, $p: ForgetPredicateInput!) {
      forget(namespace: $ns, predicate: $p) { ids } }""", {
        "ns": namespace, "p": {"contains": "who went with you"}}))["forget"]
    assert forgot["ids"] == [ids[2]]

    async def fts(query: str, hops: int) -> dict[str, float]:
        hits = (await gql.ok(SEARCH, {"input": {
            "filter": {"namespace": namespace}, "query": query, "mode": "LEXICAL",
            "contextHops": hops}}))["search"]
        return {h["memory"]["id"]: h["ftsScore"] for h in hits}

    # The camping turn names "camping"; "marshmallows" is two turns later, past the
    # forgotten one, and still counts as its context.
    assert (await fts("camping marshmallows", 2))[ids[1]] > (
        await fts("camping marshmallows", 0))[ids[1]]
    # The forgotten turn's own words lend nothing to the turns around it.
    assert (await fts("camping lovely", 2))[ids[1]] == pytest.approx(
        (await fts("camping lovely", 0))[ids[1]])


async def test_a_search_without_its_semantic_signal_says_so(settings: Any, namespace: str
                                                            ) -> None:
    from tests.integration._apps import app_with

    none = settings.embedding.model_copy(update={"provider": "none"})
    async with app_with(settings, embedding=none) as client:
        async def search(**fields: Any) -> dict[str, Any]:
            response = await client.post("/graphql", json={"query": SEARCH, "variables": {
                "input": {"filter": {"namespace": namespace}, "query": "camping", **fields}}})
            body: dict[str, Any] = response.json()
            assert not body.get("errors"), body
            return body

        await client.post("/graphql", json={"query": INGEST, "variables": {
            "input": session(namespace)}})
        blind = await search()
        assert blind["data"]["search"]
        assert "semantic signal is missing" in blind["extensions"]["notes"][0]
        assert "notes" not in (await search(embedding=seeded(1))).get("extensions", {})
        assert "notes" not in (await search(mode="LEXICAL")).get("extensions", {})
