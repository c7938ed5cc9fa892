"""Knowledge that stays current: update candidates found on write, recall that
prefers the newest state, confirm and reject, and what a limited key sees."""

from __future__ import annotations

import asyncio
from typing import Any

from memlattice.core.model import Sensitivity
from tests.conftest import GraphQLClient
from tests.integration._keys import as_key, make_key

INGEST = """mutation($input: ConversationInput!) {
  ingestConversation(input: $input) { created } }"""
SEARCH = """query($input: SearchInput!) { search(input: $input) {
  memory { id content } outdatedBy { id } update { id kind status reason attribute } } }"""
UPDATES = """query($ns: String!, $statuses: [UpdateStatus!], $id: ID) {
  memoryUpdates(namespace: $ns, statuses: $statuses, memoryId: $id) {
    id kind status confidence reason subject attribute matched newer { id } older { id } } }"""
CONFIRM = """mutation($ns: String!, $id: ID!) { confirmUpdate(namespace: $ns, id: $id) {
  status newer { id status } older { id status supersededBy } } }"""
REJECT = """mutation($ns: String!, $id: ID!) { rejectUpdate(namespace: $ns, id: $id,
  note: "she only visits") { status note } }"""
WRITE = """mutation($input: MemoryInput!) { writeMemory(input: $input) { id } }"""

CHAT = [
    ("bergen", "Ines", "I live in Bergen, right by the harbour.", "2025-01-10T10:00:00Z"),
    ("f1", "Tom", "Nice! How is the weather up there?", "2025-01-10T10:01:00Z"),
    ("f2", "Ines", "Rainy, as always. Haha.", "2025-01-10T10:02:00Z"),
    ("f3", "Tom", "I adopted a cat last week.", "2025-01-10T10:03:00Z"),
    ("tromso", "Ines", "Big news: we finally moved to Tromsø last month!", "2025-06-02T09:00:00Z"),
    ("f4", "Tom", "Wow, congratulations! Send pictures.", "2025-06-02T09:01:00Z"),
    ("sister", "Ines", "My sister lives in Oslo, she visits often.", "2025-06-02T09:02:00Z"),
    ("dog", "Tom", "We also adopted a dog.", "2025-06-02T09:03:00Z"),
]


def chat(namespace: str, turns: list[tuple[str, str, str, str]] = CHAT) -> dict[str, Any]:
    return {"namespace": namespace, "sessionId": "s1", "messages": [
        {"id": id, "speaker": who, "content": text, "at": at} for id, who, text, at in turns]}


def turn_id(namespace: str, message: str) -> str:
    """The memory id ingestConversation gives a message with its own id."""
    from memlattice.core.messages import MessageInput
    from memlattice.core.messages import turn_id as derive

    return derive(namespace, "s1", MessageInput(content="x", id=message))


async def links(gql: GraphQLClient, namespace: str, **variables: Any) -> list[dict[str, Any]]:
    data = await gql.ok(UPDATES, {"ns": namespace, **variables})
    return list(data["memoryUpdates"])


async def test_a_move_is_linked_and_the_present_question_gets_the_new_home(
    gql: GraphQLClient, namespace: str,
) -> None:
    await gql.ok(INGEST, {"input": chat(namespace)})
    bergen, tromso = turn_id(namespace, "bergen"), turn_id(namespace, "tromso")
    found = await links(gql, namespace)
    # Only the move: the sister's city, the pets and the small talk state nothing to link.
    assert [(x["newer"]["id"], x["older"]["id"]) for x in found] == [(tromso, bergen)]
    (link,) = found
    assert link["kind"] == "UPDATE" and link["status"] == "CANDIDATE"
    assert link["attribute"] == "residence" and link["subject"] == "ines"
    assert "'Bergen' -> 'Tromsø'" in link["reason"]
    assert 0.5 <= link["confidence"] <= 1

    hits = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                            "query": "Where does Ines live?"}}))["search"]
    ids = [h["memory"]["id"] for h in hits]
    assert ids[0] == tromso and bergen in ids and ids.index(bergen) > ids.index(tromso)
    old = next(h for h in hits if h["memory"]["id"] == bergen)
    assert old["outdatedBy"] == {"id": tromso} and old["update"]["id"] == link["id"]
    assert hits[0]["outdatedBy"] is None

    past = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                            "query": "Where did Ines live before?"}}))["search"]
    past_ids = [h["memory"]["id"] for h in past]
    assert past_ids.index(bergen) < past_ids.index(tromso)

    # As of a time between the two, the move had not been said: Bergen is current.
    then = (await gql.ok(SEARCH, {"input": {
        "filter": {"namespace": namespace, "asOf": "2025-03-01T00:00:00Z"},
        "query": "Where does Ines live?"}}))["search"]
    assert then[0]["memory"]["id"] == bergen and then[0]["outdatedBy"] is None


async def test_confirm_supersedes_and_reject_is_never_proposed_again(
    gql: GraphQLClient, namespace: str,
) -> None:
    await gql.ok(INGEST, {"input": chat(namespace)})
    (link,) = await links(gql, namespace)
    done = (await gql.ok(CONFIRM, {"ns": namespace, "id": link["id"]}))["confirmUpdate"]
    assert done["status"] == "CONFIRMED"
    assert done["older"]["status"] == "SUPERSEDED"
    assert done["older"]["supersededBy"] == done["newer"]["id"]
    again = (await gql.ok(CONFIRM, {"ns": namespace, "id": link["id"]}))["confirmUpdate"]
    assert again["status"] == "CONFIRMED"  # idempotent
    error = await gql.error(REJECT, {"ns": namespace, "id": link["id"]})
    assert error["extensions"]["code"] == "CONFLICT"

    other = f"{namespace}-r"
    await gql.ok(INGEST, {"input": chat(other)})
    (candidate,) = await links(gql, other)
    rejected = (await gql.ok(REJECT, {"ns": other, "id": candidate["id"]}))["rejectUpdate"]
    assert rejected == {"status": "REJECTED", "note": "she only visits"}
    assert await links(gql, other) == []
    assert len(await links(gql, other, statuses=["REJECTED"])) == 1
    error = await gql.error(CONFIRM, {"ns": other, "id": candidate["id"]})
    assert error["extensions"]["code"] == "CONFLICT"
    # The same statements again (a repeat of the session changes nothing) and a new
    # turn of the same value: the rejected pair stays rejected, never proposed again.
    await gql.ok(INGEST, {"input": chat(other)})
    assert await links(gql, other) == []


async def test_a_key_that_may_not_see_one_side_sees_no_link(
    gql: GraphQLClient, graph_client: Any, session_app: Any, namespace: str,
) -> None:
    await gql.ok(WRITE, {"input": {"namespace": namespace, "userId": "ines",
                                   "content": "I live in Bergen.", "sensitivity": "HIGH",
                                   "now": "2025-01-01T00:00:00Z"}})
    await gql.ok(WRITE, {"input": {"namespace": namespace, "userId": "ines",
                                   "content": "We moved to Tromsø in May.",
                                   "now": "2025-06-01T00:00:00Z"}})
    (link,) = await links(gql, namespace)
    secret = await make_key(graph_client, namespace, clearance=Sensitivity.LOW)
    async with as_key(session_app, secret) as low:
        assert await links(low, namespace) == []
        error = await low.error(CONFIRM, {"ns": namespace, "id": link["id"]})
        assert error["extensions"]["code"] == "NOT_FOUND"
        hits = (await low.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                                "query": "Where does Ines live?"}}))["search"]
        assert all(h["outdatedBy"] is None for h in hits)
    elsewhere = f"{namespace}-other"
    error = await gql.error(CONFIRM, {"ns": elsewhere, "id": link["id"]})
    assert error["extensions"]["code"] == "NOT_FOUND"
    assert (await links(gql, namespace))[0]["status"] == "CANDIDATE"


async def test_concurrent_updates_of_one_attribute_end_with_one_current_memory(
    gql: GraphQLClient, namespace: str,
) -> None:
    first = (await gql.ok(WRITE, {"input": {"namespace": namespace, "content":
                                            "The metrics exporter listens on 9100.",
                                            "now": "2025-01-01T00:00:00Z"}}))["writeMemory"]
    ports = [9200 + i for i in range(4)]
    written = await asyncio.gather(*(gql.ok(WRITE, {"input": {
        "namespace": namespace, "content": f"The exporter now listens on {port}.",
        "now": f"2025-02-0{i + 1}T00:00:00Z"}}) for i, port in enumerate(ports)))
    states = [first["id"], *(w["writeMemory"]["id"] for w in written)]
    found = await links(gql, namespace)
    # Whatever order the writes committed in (each links to its neighbours in time
    # among what it sees, under the attribute's lock), exactly one state is current:
    # the latest; every other one is outdated by a later one.
    assert {x["older"]["id"] for x in found} == set(states[:-1])
    at = {id: i for i, id in enumerate(states)}
    assert all(at[x["newer"]["id"]] > at[x["older"]["id"]] for x in found)
    hits = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace}, "query":
                                            "Which port does the metrics exporter listen on?"}}
                         ))["search"]
    assert hits[0]["memory"]["content"] == "The exporter now listens on 9203."


async def test_a_state_said_long_ago_is_updated_by_another_state_of_the_speaker(
    gql: GraphQLClient, namespace: str,
) -> None:
    # Twenty turns apart, sharing no word: the statements meet on their attribute.
    filler = [(f"x{i}", "Oskar" if i % 2 else "Lu", f"Small talk number {i} about the weather.",
               f"2025-02-0{1 + i // 10}T10:{i:02d}:00Z") for i in range(20)]
    turns = [("veg", "Oskar", "I'm vegetarian, but I still eat eggs.", "2025-01-05T10:00:00Z"),
             *filler,
             ("vegan", "Oskar", "I cut out eggs too, so fully plant-based from now on.",
              "2025-05-01T10:00:00Z"),
             ("sis", "Oskar", "My sister got married in June.", "2025-05-01T10:01:00Z")]
    await gql.ok(INGEST, {"input": chat(namespace, turns)})
    found = await links(gql, namespace)
    assert [(x["newer"]["id"], x["older"]["id"], x["attribute"]) for x in found] == [
        (turn_id(namespace, "vegan"), turn_id(namespace, "veg"), "diet")]
    assert found[0]["subject"] == "oskar" and "vegan" in found[0]["reason"]


async def test_a_diff_in_an_agent_s_tool_output_updates_the_note_it_changes(
    gql: GraphQLClient, namespace: str,
) -> None:
    # The diff shares no topic word with the note, only the setting's identifier,
    # and says no word of change: the lines it takes out and puts in say it.
    turns = [("note", "agent", "checkout-api gives the payment provider 3 s before it gives"
              " up (UPSTREAM_TIMEOUT_MS=3000).", "2025-03-01T10:00:00Z"),
             ("f1", "agent", "Checkout p95 latency 310 ms, within budget.",
              "2025-03-01T10:05:00Z"),
             ("diff", "tool", "$ git diff deploy/checkout-api/prod.env\n"
              "-UPSTREAM_TIMEOUT_MS=3000\n+UPSTREAM_TIMEOUT_MS=5000", "2025-04-02T09:00:00Z"),
             ("plan", "notetaker", "Action items: Ilse — move the timeout review to Friday.",
              "2025-04-02T09:05:00Z")]
    await gql.ok(INGEST, {"input": chat(namespace, turns)})
    found = await links(gql, namespace)
    assert [(x["newer"]["id"], x["older"]["id"]) for x in found] == [
        (turn_id(namespace, "diff"), turn_id(namespace, "note"))]
    assert "5000" in found[0]["matched"] and "+/-" in found[0]["reason"]


async def test_a_change_told_by_someone_else_updates_what_the_person_said(
    gql: GraphQLClient, namespace: str,
) -> None:
    # Ana says where she works; weeks later, in a session she is not in, Tom tells
    # Leah that she left. "she" is the person Leah just asked about.
    from memlattice.core.messages import MessageInput
    from memlattice.core.messages import turn_id as derive

    def session(id: str, turns: list[tuple[str, str, str, str]]) -> dict[str, Any]:
        return {"namespace": namespace, "sessionId": id, "messages": [
            {"id": m, "speaker": who, "content": text, "at": at} for m, who, text, at in turns]}

    await gql.ok(INGEST, {"input": session("s1", [
        ("job", "Ana", "I work at Siemens in Munich, on signalling software.",
         "2025-02-01T10:00:00Z"),
        ("f1", "Tom", "Sounds intense. Coffee on Friday?", "2025-02-01T10:01:00Z")])})
    await gql.ok(INGEST, {"input": session("s2", [
        ("ask", "Leah", "Did anyone hear from Ana lately?", "2025-06-01T18:00:00Z"),
        ("told", "Tom", "Yes! she quit Siemens in March, she's at Bosch in Stuttgart now.",
         "2025-06-01T18:01:00Z"),
        ("sister", "Leah", "Good for her. My sister moved to Lyon, she loves it.",
         "2025-06-01T18:02:00Z")])})
    found = await links(gql, namespace)
    told = derive(namespace, "s2", MessageInput(content="x", id="told"))
    job = derive(namespace, "s1", MessageInput(content="x", id="job"))
    assert [(x["newer"]["id"], x["older"]["id"]) for x in found] == [(told, job)]
    assert found[0]["reason"].startswith("tom tells of ana:")
    assert "bosch" in found[0]["matched"]


async def test_a_later_answer_of_the_same_source_goes_first_without_a_link(
    gql: GraphQLClient, namespace: str,
) -> None:
    # Two readings of one build log give two Python versions; no word of change
    # says the second replaces the first, so nothing links them. A question that
    # asks for a version gets the later one first with currentAnswerWithin (an
    # option, off by default), and the earlier one still follows.
    turns = [("old", "ci", "billing-svc Dockerfile: FROM python:3.11-slim, billing-svc image"
              " built in 3m12s", "2025-02-10T10:00:00Z"),
             ("f1", "ci", "billing-svc lint passed, 0 warnings", "2025-02-10T10:05:00Z"),
             ("new", "ci", "image billing-svc:2025.07.01 built on python:3.13-slim, 430/430"
              " tests green", "2025-07-01T09:00:00Z"),
             ("f2", "ci", "billing-svc cache warmed, nothing else to report",
              "2025-07-01T09:05:00Z")]
    await gql.ok(INGEST, {"input": chat(namespace, turns)})
    assert await links(gql, namespace) == []
    old, new = turn_id(namespace, "old"), turn_id(namespace, "new")
    query = "Which Python version does billing-svc run on?"

    async def ranked(**options: Any) -> list[str]:
        hits = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                                "query": query, **options}}))["search"]
        return [h["memory"]["id"] for h in hits]

    plain = await ranked()
    assert plain.index(old) < plain.index(new)  # by score alone the earlier leads
    current = await ranked(currentAnswerWithin=0.7)
    assert current[0] == new and old in current
    # A question about the past is left in the order of its scores.
    past = await ranked(query="Which Python version did billing-svc run on at first?",
                        currentAnswerWithin=0.7)
    assert past.index(old) < past.index(new)


async def test_within_one_sitting_a_change_of_value_links_nothing_by_contrast(
    gql: GraphQLClient, namespace: str,
) -> None:
    # The same two notes link when hours apart in the session (a log kept for days)
    # and not when said minutes apart, where another value is mostly another option
    # under discussion; naming the old value again ("not 8080") changes nothing there.
    def notes(day: str, gap: str) -> list[tuple[str, str, str, str]]:
        return [("old", "ops", "ledgerd serves its API on port 8080.", f"{day}T09:00:00Z"),
                ("new", "ops", "ledgerd's API moved to port 8081.", f"{day}T{gap}:00Z")]

    apart, together = f"{namespace}/apart", f"{namespace}/together"
    await gql.ok(INGEST, {"input": chat(apart, notes("2025-03-01", "18:00"))})
    await gql.ok(INGEST, {"input": chat(together, notes("2025-03-01", "09:04"))})
    assert [(x["newer"]["id"], x["older"]["id"]) for x in await links(gql, apart)] == [
        (turn_id(apart, "new"), turn_id(apart, "old"))]
    assert await links(gql, together) == []

    corrected = f"{namespace}/corrected"
    await gql.ok(INGEST, {"input": chat(corrected, [
        *notes("2025-03-01", "09:04")[:1],
        ("new", "ops", "sorry, typo: ledgerd's API port is 8081, not 8080.",
         "2025-03-01T09:04:00Z")])})
    assert await links(gql, corrected) == []


async def test_one_speakers_change_links_only_to_their_nearest_earlier_memory(
    gql: GraphQLClient, namespace: str,
) -> None:
    # The exporter's new port is another port of ledgerd than its API's: the note it
    # goes on from is the one about the exporter, the nearest, which states no port;
    # the API's port did not change. A change of the API's port links to the API note.
    earlier = [("api", "ops", "ledgerd serves its API on port 8080.", "2025-03-01T09:00:00Z"),
               ("exporter", "ops", "Muted two noisy alerts of ledgerd's metrics exporter"
                " today.", "2025-03-01T10:00:00Z")]
    exporter, api = f"{namespace}/exporter", f"{namespace}/api"
    for ns, change in ((exporter, ("exporter-port", "ops", "ledgerd's metrics exporter moved"
                                   " to port 9100.", "2025-03-05T09:00:00Z")),
                       (api, ("api-port", "ops", "ledgerd's API moved to port 8081.",
                              "2025-03-05T09:00:00Z"))):
        await gql.ok(INGEST, {"input": chat(ns, earlier)})
        await gql.ok(INGEST, {"input": chat(ns, [change])})
    assert await links(gql, exporter) == []
    assert [(x["newer"]["id"], x["older"]["id"]) for x in await links(gql, api)] == [
        (turn_id(api, "api-port"), turn_id(api, "api"))]


async def test_a_change_that_opens_with_when_it_starts_is_linked_without_a_comma(
    gql: GraphQLClient, namespace: str,
) -> None:
    """"From today the standup is at 11:00." names when the new state starts before
    its subject, as chats write it, without a comma. The statement reading now finds
    the standup's time in it (attribute `when`); before, it read nothing there, and
    only the looser contrast reading linked the two (attribute `time`)."""
    from memlattice.core.messages import MessageInput
    from memlattice.core.messages import turn_id as derive

    sessions = [("s1", [("old", "The standup is at 10:30.", "2025-03-03T09:00:00Z"),
                        ("f1", "Sprint 9 kicked off.", "2025-03-03T09:01:00Z")]),
                ("s2", [("new", "From today the standup is at 11:00.", "2025-04-07T09:00:00Z"),
                        ("f2", "Backlog grooming stays on Mondays.", "2025-04-07T09:01:00Z")])]
    for session, turns in sessions:
        await gql.ok(INGEST, {"input": {"namespace": namespace, "sessionId": session,
                                        "messages": [{"id": id, "speaker": "team-assistant",
                                                      "content": text, "at": at}
                                                     for id, text, at in turns]}})
    old = derive(namespace, "s1", MessageInput(content="x", id="old"))
    new = derive(namespace, "s2", MessageInput(content="x", id="new"))
    found = await links(gql, namespace)
    assert [(x["newer"]["id"], x["older"]["id"], x["attribute"]) for x in found] == [
        (new, old, "when")]
    hits = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                            "query": "When is the standup?"}}))["search"]
    assert hits[0]["memory"]["id"] == new
    assert next(h for h in hits if h["memory"]["id"] == old)["outdatedBy"] == {"id": new}
