"""Confirming an update never makes recall worse than leaving it a candidate: the
superseded state still leads a present question to its successor, and a past
question still gets the state that held then (docs/knowledge.md)."""

from __future__ import annotations

from typing import Any

from memlattice.core.messages import MessageInput
from memlattice.core.messages import turn_id as derive
from memlattice.core.model import Sensitivity
from tests.conftest import GraphQLClient
from tests.integration._keys import as_key, make_key
from tests.integration.test_knowledge_updates import CONFIRM, INGEST, SEARCH, WRITE, links

SESSIONS = [
    ("s1", [("bergen", "mara", "I live in Bergen, right by the harbour.", "2025-01-12T18:00:00Z"),
            ("f1", "jonas", "Nice! How is the weather up there?", "2025-01-12T18:01:00Z"),
            ("f2", "mara", "Rainy, as always.", "2025-01-12T18:02:00Z")]),
    ("s2", [("port", "jonas", "Reminder: the exporter listens on port 9100.",
             "2025-06-03T08:59:00Z"),
            ("tromso", "mara", "We finally settled into our flat in Tromsø last month!",
             "2025-06-03T09:00:00Z"),
            ("f3", "jonas", "Congratulations, send pictures.", "2025-06-03T09:01:00Z"),
            ("music", "mara", "The live music up here is great, we go every Friday.",
             "2025-06-03T09:05:00Z")]),
]
PRESENT = "Where does Mara live?"
PAST = "Where did Mara live before?"


async def ingest(gql: GraphQLClient, namespace: str) -> tuple[str, str]:
    for session, turns in SESSIONS:
        await gql.ok(INGEST, {"input": {"namespace": namespace, "sessionId": session,
                                        "messages": [{"id": id, "speaker": who, "content": text,
                                                      "at": at}
                                                     for id, who, text, at in turns]}})
    return (derive(namespace, "s1", MessageInput(content="x", id="bergen")),
            derive(namespace, "s2", MessageInput(content="x", id="tromso")))


async def search(gql: GraphQLClient, namespace: str, query: str,
                 **filter: Any) -> list[dict[str, Any]]:
    hits = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace, **filter},
                                            "query": query}}))["search"]
    return list(hits)


def ids(hits: list[dict[str, Any]]) -> list[str]:
    return [h["memory"]["id"] for h in hits]


async def test_confirming_a_move_keeps_the_present_and_the_past_answers(
    gql: GraphQLClient, namespace: str,
) -> None:
    bergen, tromso = await ingest(gql, namespace)
    (link,) = await links(gql, namespace)
    assert (link["newer"]["id"], link["older"]["id"]) == (tromso, bergen)
    # As a candidate: the new home first for the present (it takes the place of
    # Bergen, which the question's words find best), the old one for the past.
    present = ids(await search(gql, namespace, PRESENT))
    assert present[:2] == [tromso, bergen]
    assert ids(await search(gql, namespace, PAST))[0] == bergen

    await gql.ok(CONFIRM, {"ns": namespace, "id": link["id"]})

    # The present: Tromsø takes the place the superseded Bergen held; Bergen itself
    # is not shown unless the statuses ask for superseded memories.
    now = await search(gql, namespace, PRESENT)
    assert ids(now)[0] == tromso and bergen not in ids(now)
    assert ids(now)[:2] == [x for x in present if x != bergen][:2]
    both = await search(gql, namespace, PRESENT, statuses=["ACTIVE", "SUPERSEDED"])
    assert ids(both)[:2] == [tromso, bergen]
    old = both[1]
    assert old["outdatedBy"] == {"id": tromso} and old["update"]["status"] == "CONFIRMED"

    # The past: the state that held then comes first, superseded as it is.
    before = await search(gql, namespace, PAST)
    assert ids(before)[0] == bergen and tromso in ids(before)
    assert before[0]["outdatedBy"] == {"id": tromso}
    before = await search(gql, namespace, PAST, statuses=["ACTIVE", "SUPERSEDED"])
    assert ids(before)[0] == bergen
    # An explicit statuses filter is respected: no superseded memory.
    active = await search(gql, namespace, PAST, statuses=["ACTIVE"])
    assert bergen not in ids(active) and tromso in ids(active)

    # As of a time between the two, Bergen held (and was not superseded yet).
    then = await search(gql, namespace, PRESENT, asOf="2025-03-01T00:00:00Z")
    assert ids(then)[0] == bergen and then[0]["outdatedBy"] is None


async def test_a_key_that_may_not_see_the_successor_is_not_led_to_it(
    gql: GraphQLClient, graph_client: Any, session_app: Any, namespace: str,
) -> None:
    # A low key sees the superseded Bergen but not the Tromsø that replaced it: no
    # question leads it to Tromsø or marks Bergen outdated by it, and Bergen stays
    # out unless the statuses ask for superseded memories, as before the link.
    async def write(content: str, now: str, **extra: Any) -> str:
        data = await gql.ok(WRITE, {"input": {"namespace": namespace, "userId": "ines",
                                              "content": content, "now": now, **extra}})
        return str(data["writeMemory"]["id"])

    bergen = await write("I live in Bergen.", "2025-01-01T00:00:00Z")
    tromso = await write("We moved to Tromsø in May.", "2025-06-01T00:00:00Z",
                         sensitivity="HIGH")
    (link,) = await links(gql, namespace)
    await gql.ok(CONFIRM, {"ns": namespace, "id": link["id"]})
    assert ids(await search(gql, namespace, "Where did Ines live before?"))[0] == bergen

    low = await make_key(graph_client, namespace, clearance=Sensitivity.LOW)
    async with as_key(session_app, low) as limited:
        for query in ("Where does Ines live?", "Where did Ines live before?"):
            assert ids(await search(limited, namespace, query)) == []
            shown = await search(limited, namespace, query,
                                 statuses=["ACTIVE", "SUPERSEDED"])
            assert ids(shown) == [bergen] and shown[0]["outdatedBy"] is None
            assert tromso not in str(shown)


ADD_EDGE = """mutation($ns: String!, $input: EdgeInput!) {
  addEdge(namespace: $ns, input: $input) { id } }"""
PROPOSE = """mutation($ns: String!, $newer: ID!, $older: ID!, $confirm: Boolean!) {
  proposeUpdate(namespace: $ns, newerId: $newer, olderId: $older, confirm: $confirm) {
    id status } }"""


async def test_a_supersedes_cycle_is_refused_with_the_reason_addedge_gives(
    gql: GraphQLClient, namespace: str,
) -> None:
    async def write(content: str, now: str) -> str:
        data = await gql.ok(WRITE, {"input": {"namespace": namespace, "content": content,
                                              "now": now}})
        return str(data["writeMemory"]["id"])

    old = await write("My go-to drink is a flat white every morning.", "2025-01-10T10:00:00Z")
    new = await write("Mornings are green tea for me these days.", "2025-06-02T09:00:00Z")
    link = (await gql.ok(PROPOSE, {"ns": namespace, "newer": new, "older": old,
                                   "confirm": False}))["proposeUpdate"]
    # Someone said the other way round that the older memory succeeds the newer one.
    await gql.ok(ADD_EDGE, {"ns": namespace, "input": {"sourceId": old, "targetId": new,
                                                       "type": "SUPERSEDES"}})
    refused = await gql.error(CONFIRM, {"ns": namespace, "id": link["id"]})
    assert refused["extensions"]["code"] == "CONFLICT"
    assert refused["extensions"]["reason"] == "SUPERSEDES_CYCLE"
    refused = await gql.error(PROPOSE, {"ns": namespace, "newer": new, "older": old,
                                        "confirm": True})
    assert refused["extensions"]["code"] == "CONFLICT"
    assert refused["extensions"]["reason"] == "SUPERSEDES_CYCLE"
    assert (await links(gql, namespace))[0]["status"] == "CANDIDATE"


async def test_each_state_of_a_confirmed_chain_is_outdated_by_the_state_that_holds(
    gql: GraphQLClient, namespace: str,
) -> None:
    # Bergen -> Oslo -> Tromsø, both links confirmed: Oslo is superseded, so Bergen's
    # direct successor no longer holds; Bergen is still outdated, by Tromsø.
    turns = [("bergen", "mara", "I live in Bergen, right by the harbour.", "2025-01-12T18:00:00Z"),
             ("f1", "jonas", "Nice! How is the weather up there?", "2025-01-12T18:01:00Z"),
             ("oslo", "mara", "I live in Oslo now, close to the office.", "2025-03-12T18:00:00Z"),
             ("f2", "jonas", "Good for the commute.", "2025-03-12T18:01:00Z"),
             ("tromso", "mara", "I live in Tromsø now, by the fjord.", "2025-06-12T18:00:00Z")]
    await gql.ok(INGEST, {"input": {"namespace": namespace, "sessionId": "s1",
                                    "messages": [{"id": id, "speaker": who, "content": text,
                                                  "at": at} for id, who, text, at in turns]}})
    bergen, oslo, tromso = (derive(namespace, "s1", MessageInput(content="x", id=id))
                            for id in ("bergen", "oslo", "tromso"))
    chain = {(link["older"]["id"], link["newer"]["id"]) for link in await links(gql, namespace)}
    assert chain == {(bergen, oslo), (oslo, tromso)}
    before = {h["memory"]["id"]: h for h in await search(
        gql, namespace, PRESENT, statuses=["ACTIVE", "SUPERSEDED"])}
    assert before[bergen]["outdatedBy"] == {"id": oslo}  # a candidate chain: one link away

    for link in await links(gql, namespace):
        await gql.ok(CONFIRM, {"ns": namespace, "id": link["id"]})

    for question in (PRESENT, PAST):
        hits = {h["memory"]["id"]: h for h in await search(
            gql, namespace, question, statuses=["ACTIVE", "SUPERSEDED"])}
        assert hits[oslo]["outdatedBy"] == {"id": tromso}
        assert hits[bergen]["outdatedBy"] == {"id": tromso}
        # The link shown is Bergen's own, the one its status depends on.
        assert hits[bergen]["update"]["status"] == "CONFIRMED"
        assert hits[tromso]["outdatedBy"] is None
    past = await search(gql, namespace, PAST)
    assert {h["memory"]["id"]: h["outdatedBy"] for h in past}[bergen] == {"id": tromso}
