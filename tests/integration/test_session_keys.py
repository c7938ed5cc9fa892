"""A stored session carries its extractive keys (graph.session_keys): entities,
keyphrases and time span, derived in the write's transaction and re-derived
when turns are appended."""

from __future__ import annotations

from typing import Any

from tests.conftest import GraphQLClient
from tests.integration._support import seeded

INGEST = """mutation($input: ConversationInput!) {
  ingestConversation(input: $input) { created session {
    id entities keyphrases startedAt endedAt eventStart eventEnd } } }"""
SESSION = """query($ns: String!, $id: String!) { session(namespace: $ns, id: $id) {
  id entities keyphrases startedAt endedAt eventStart eventEnd } }"""
STORED = """MATCH (s:Session {namespace: $ns, id: $id})
RETURN s.entities AS entities, s.keyphrases AS keyphrases,
       [(s)-[c:COVERS]->(e:Entity) | [e.key, c.turns, e.namespace]] AS covers"""


def day(text: str) -> str:
    return f"{text}T00:00:00+00:00"


def turn(speaker: str, content: str, at: str, n: int) -> dict[str, Any]:
    return {"speaker": speaker, "content": content, "at": at, "embedding": seeded(n)}


async def ingest(gql: GraphQLClient, namespace: str, *turns: dict[str, Any],
                 session: str = "s-1") -> dict[str, Any]:
    data = await gql.ok(INGEST, {"input": {"namespace": namespace, "sessionId": session,
                                           "messages": list(turns)}})
    done: dict[str, Any] = data["ingestConversation"]
    return done


async def test_a_session_gets_its_entities_keyphrases_and_time_span(
        gql: GraphQLClient, graph_client: Any, namespace: str) -> None:
    done = await ingest(
        gql, namespace,
        turn("Caroline", "I visited the adoption agency yesterday.", "2023-05-08T10:00:00Z", 1),
        turn("Melanie", "Good luck! My pottery class with Jon starts soon.",
             "2023-05-08T10:01:00Z", 2),
        turn("Caroline", "The adoption agency in Boston was kind.", "2023-05-08T10:02:00Z", 3),
    )
    keys = done["session"]
    assert keys["id"] == "s-1"
    # Caroline spoke two turns; the rest are each about one turn; ties by key.
    assert keys["entities"] == ["caroline", "boston", "jon", "melanie"]
    assert keys["keyphrases"][0] == "adoption agency"
    assert "pottery class" in keys["keyphrases"]
    assert not {"caroline", "melanie"} & set(keys["keyphrases"])  # speakers are no phrases
    assert (keys["startedAt"], keys["endedAt"]) == ("2023-05-08T10:00:00+00:00",
                                                    "2023-05-08T10:02:00+00:00")
    assert (keys["eventStart"], keys["eventEnd"]) == (day("2023-05-07"), day("2023-05-08"))
    (row,) = await graph_client.read((STORED, {"ns": namespace, "id": "s-1"}))
    assert row["entities"] == keys["entities"] and row["keyphrases"] == keys["keyphrases"]
    # Read back as stored, by the session's id.
    read = await gql.ok(SESSION, {"ns": namespace, "id": "s-1"})
    assert read["session"] == keys
    assert (await gql.ok(SESSION, {"ns": namespace, "id": "s-2"}))["session"] is None
    assert sorted(row["covers"]) == [["boston", 1, namespace], ["caroline", 2, namespace],
                                     ["jon", 1, namespace], ["melanie", 1, namespace]]


async def test_appending_turns_re_derives_the_keys_and_resending_changes_nothing(
        gql: GraphQLClient, graph_client: Any, namespace: str) -> None:
    first = turn("Caroline", "I went camping last week.", "2023-05-08T10:00:00Z", 1)
    await ingest(gql, namespace, first)
    later = await ingest(gql, namespace, turn(
        "Melanie", "We moved to Denver in 2021.", "2023-06-01T09:00:00Z", 2))
    keys = later["session"]
    assert later["created"] == 1
    assert keys["entities"] == ["caroline", "denver", "melanie"]
    assert (keys["startedAt"], keys["endedAt"]) == ("2023-05-08T10:00:00+00:00",
                                                    "2023-06-01T09:00:00+00:00")
    # The union of the turns' event times: the week before 8 May 2023 and 2021.
    assert (keys["eventStart"], keys["eventEnd"]) == (day("2021-01-01"), day("2023-05-08"))
    again = await ingest(gql, namespace, first)
    assert again["created"] == 0 and again["session"] == keys
    (row,) = await graph_client.read((STORED, {"ns": namespace, "id": "s-1"}))
    assert len(row["covers"]) == 3


async def test_sessions_of_one_id_in_two_namespaces_keep_apart(
        gql: GraphQLClient, graph_client: Any, namespace: str) -> None:
    other = namespace + "-other"
    await ingest(gql, namespace, turn("Caroline", "Paris was lovely.", "2023-05-08T10:00:00Z", 1))
    theirs = await ingest(gql, other, turn("Bob", "Rome was hot.", "2023-05-08T10:00:00Z", 2))
    assert theirs["session"]["entities"] == ["bob", "rome"]
    mine = (await gql.ok(SESSION, {"ns": namespace, "id": "s-1"}))["session"]
    assert sorted(mine["entities"]) == ["caroline", "paris"]
    (row,) = await graph_client.read((STORED, {"ns": namespace, "id": "s-1"}))
    assert sorted(row["entities"]) == ["caroline", "paris"]
    assert {c[2] for c in row["covers"]} == {namespace}


async def test_updating_a_turns_content_re_derives_its_sessions_keys(
        gql: GraphQLClient, graph_client: Any, namespace: str) -> None:
    done = await gql.ok("""mutation($input: ConversationInput!) {
      ingestConversation(input: $input) { memories { id } } }""", {"input": {
        "namespace": namespace, "sessionId": "s-1", "messages": [
            turn("Caroline", "Paris was lovely yesterday.", "2023-05-08T10:00:00Z", 1),
            turn("Melanie", "Glad to hear it.", "2023-05-08T10:01:00Z", 2)]}})
    first = done["ingestConversation"]["memories"][0]["id"]
    await gql.ok("""mutation($ns: String!, $id: ID!, $patch: MemoryPatchInput!) {
      updateMemory(namespace: $ns, id: $id, patch: $patch) { id } }""", {
        "ns": namespace, "id": first, "patch": {"content": "Caroline: Rome was hot in 2021."}})
    (row,) = await graph_client.read((
        "MATCH (s:Session {namespace: $ns, id: 's-1'}) RETURN s.entities AS entities,"
        " s.eventStart AS start, [(s)-[:COVERS]->(e) | e.key] AS covered", {"ns": namespace}))
    assert row["entities"] == ["caroline", "melanie", "rome"]
    assert sorted(row["covered"]) == ["caroline", "melanie", "rome"]
    assert row["start"].year == 2021


async def test_a_caller_who_may_not_see_every_turn_is_not_shown_the_sessions_keys(
        gql: GraphQLClient, graph_client: Any, session_app: Any, namespace: str) -> None:
    from memlattice.core.model import Sensitivity
    from tests.integration._keys import as_key, make_key

    # The admin writes a HIGH turn naming Zoltan; a LOW key later appends to the session.
    await gql.ok(INGEST, {"input": {
        "namespace": namespace, "sessionId": "s-1", "sensitivity": "HIGH", "messages": [
            turn("Caroline", "Zoltan runs the secret orchard project.",
                 "2023-05-08T10:00:00Z", 1)]}})
    secret = await make_key(graph_client, namespace, clearance=Sensitivity.LOW)
    async with as_key(session_app, secret) as low:
        done = (await low.ok(INGEST, {"input": {
            "namespace": namespace, "sessionId": "s-1", "messages": [
                turn("Melanie", "I baked bread today.", "2023-05-08T11:00:00Z", 2)]}})
                )["ingestConversation"]
        read = await low.ok(SESSION, {"ns": namespace, "id": "s-1"})
    assert done["created"] == 1
    assert done["session"] is None  # derived from a turn it may not see
    assert read["session"] is None
    # Stored all the same, for recall, and shown to a caller who may see every turn.
    again = await ingest(gql, namespace, turn(
        "Melanie", "I baked bread today.", "2023-05-08T11:00:00Z", 2))
    assert again["session"]["entities"] == ["caroline", "melanie", "zoltan"]


async def test_forgetting_a_turn_re_derives_its_sessions_keys(
        gql: GraphQLClient, graph_client: Any, namespace: str) -> None:
    await ingest(
        gql, namespace,
        turn("Caroline", "Our garden party in Paris was lovely in 2021.",
             "2023-05-08T10:00:00Z", 1),
        turn("Melanie", "I baked bread yesterday.", "2023-05-08T10:01:00Z", 2))
    forgot = (await gql.ok("""mutation($ns: String!, $p: ForgetPredicateInput!) {
      forget(namespace: $ns, predicate: $p) { ids } }""", {
        "ns": namespace, "p": {"contains": "garden party"}}))["forget"]
    assert len(forgot["ids"]) == 1
    (row,) = await graph_client.read((
        "MATCH (s:Session {namespace: $ns, id: 's-1'}) RETURN s.entities AS entities,"
        " s.keyphrases AS phrases, s.eventStart AS start, s.startedAt AS started,"
        " [(s)-[:COVERS]->(e) | e.key] AS covered", {"ns": namespace}))
    assert row["entities"] == ["melanie"] and row["covered"] == ["melanie"]
    assert row["phrases"] == ["baked bread"]
    assert (row["start"].day, row["started"].minute) == (7, 1)


INGESTED_IDS = """mutation($input: ConversationInput!) {
  ingestConversation(input: $input) { memories { id } } }"""
DELETE = "mutation($ns: String!, $id: ID!) { deleteMemory(namespace: $ns, id: $id) }"
CHAIN = """MATCH (:Session {namespace: $ns, id: $id})<-[:IN_SESSION]-(m:Memory)
OPTIONAL MATCH (m)-[:NEXT]->(n:Memory)
RETURN m.id AS id, n.id AS next"""


async def test_deleting_a_turn_re_derives_its_sessions_keys_and_joins_its_neighbours(
        gql: GraphQLClient, graph_client: Any, namespace: str) -> None:
    data = await gql.ok(INGESTED_IDS, {"input": {"namespace": namespace, "sessionId": "s-1",
                                                 "messages": [
        turn("Caroline", "Paris was lovely.", "2023-05-08T10:00:00Z", 1),
        turn("Melanie", "Rome was hot in the pottery class.", "2023-05-08T10:01:00Z", 2),
        turn("Caroline", "Lisbon next time.", "2023-05-08T10:02:00Z", 3)]}})
    first, middle, last = (m["id"] for m in data["ingestConversation"]["memories"])
    assert await gql.ok(DELETE, {"ns": namespace, "id": middle}) == {"deleteMemory": True}
    keys = (await gql.ok(SESSION, {"ns": namespace, "id": "s-1"}))["session"]
    assert keys["entities"] == ["caroline", "lisbon", "paris"]
    assert "pottery class" not in keys["keyphrases"]
    assert keys["endedAt"] == "2023-05-08T10:02:00+00:00"
    chain = {r["id"]: r["next"] for r in await graph_client.read(
        (CHAIN, {"ns": namespace, "id": "s-1"}))}
    assert chain == {first: last, last: None}
    # A continuation joins after the one last turn: the chain stays one.
    more = await ingest(gql, namespace, turn("Melanie", "Porto it is.", "2023-05-08T10:03:00Z", 4))
    assert more["created"] == 1
    chain = {r["id"]: r["next"] for r in await graph_client.read(
        (CHAIN, {"ns": namespace, "id": "s-1"}))}
    assert chain[first] == last and chain[last] is not None
    assert sum(1 for nxt in chain.values() if nxt is None) == 1


async def test_a_speakers_prefix_is_no_keyphrase_whatever_spelling_named_them_first(
        gql: GraphQLClient, namespace: str) -> None:
    # "Alice" is an entity (with that name) before "alice" speaks.
    await gql.ok("""mutation($i: MemoryInput!) { writeMemory(input: $i) { id } }""",
                 {"i": {"namespace": namespace, "content": "Alice moved to Lisbon in 2023"}})
    done = await ingest(gql, namespace, turn("alice", "Where should I live next year?",
                                             "2023-05-08T10:00:00Z", 1))
    assert "alice" not in done["session"]["keyphrases"]
    assert "alice" in done["session"]["entities"]
