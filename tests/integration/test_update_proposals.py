"""A writer says what its memory replaces: `Memory.mayReplace` and `proposeUpdate`.

The rules link what they can read ("we moved to Tromsø" after "I live in Bergen");
"mornings are green tea for me these days" after "my go-to drink is a flat white
every morning" names no value of a kind they compare and no word of change they
know, so nothing links it, and the old drink ranks first. The writer (an agent's
model, a person) is shown the earlier memories nearest its own and says which one
it replaces.
"""

from __future__ import annotations

import asyncio
from typing import Any

from memlattice.core.model import Sensitivity
from tests.conftest import GraphQLClient
from tests.integration._keys import as_key, make_key
from tests.integration._knowledge import WRITE_RECORD, record

WRITE = """mutation($input: MemoryInput!) { writeMemory(input: $input) {
  id mayReplace(first: 3) { memory { id content } similarity update { id status } } } }"""
MAY_REPLACE = """query($ns: String!, $id: ID!, $first: Int!) { memory(namespace: $ns, id: $id) {
  mayReplace(first: $first) { memory { id } similarity update { id status } } } }"""
PROPOSE = """mutation($ns: String!, $newer: ID!, $older: ID!, $confirm: Boolean!) {
  proposeUpdate(namespace: $ns, newerId: $newer, olderId: $older, confirm: $confirm,
                attribute: "morning drink", reason: "tea instead of coffee") {
    id kind status confidence reason attribute newer { id status } older { id status supersededBy }
  } }"""
REJECT = """mutation($ns: String!, $id: ID!) { rejectUpdate(namespace: $ns, id: $id) { status } }"""
SEARCH = """query($input: SearchInput!) { search(input: $input) {
  memory { id } outdatedBy { id } } }"""
AUDIT = """query($ns: String!, $id: ID!) { auditTrail(namespace: $ns, id: $id) { operation } }"""


OLD = "My go-to drink is a flat white every morning."
NEW = "Mornings are green tea for me these days."
QUESTION = "What do I drink in the morning?"


async def write(gql: GraphQLClient, namespace: str, content: str, at: str,
                **fields: Any) -> dict[str, Any]:
    result = await gql.ok(WRITE, {"input": {"namespace": namespace, "content": content,
                                            "now": at, **fields}})
    return dict(result["writeMemory"])


async def home_chat(gql: GraphQLClient, namespace: str) -> tuple[str, str, dict[str, Any]]:
    old = await write(gql, namespace, OLD, "2025-01-10T10:00:00Z")
    await write(gql, namespace, "Reminder: renew the passport before the summer.",
                "2025-02-01T10:00:00Z")
    await write(gql, namespace, "Favourite band at the moment: Röyksopp.",
                "2025-03-01T10:00:00Z")
    new = await write(gql, namespace, NEW, "2025-06-02T09:00:00Z")
    return old["id"], new["id"], new


async def test_a_write_is_shown_the_earlier_memory_it_replaces_and_says_so(
    gql: GraphQLClient, namespace: str,
) -> None:
    old, new, written = await home_chat(gql, namespace)
    shown = [c["memory"]["id"] for c in written["mayReplace"]]
    assert old in shown
    assert new not in shown  # never itself, never a later memory
    assert all(c["update"] is None for c in written["mayReplace"])
    assert all(-1.0 <= c["similarity"] <= 1.0 for c in written["mayReplace"])
    # The first memory has nothing earlier to replace.
    first = (await gql.ok(MAY_REPLACE, {"ns": namespace, "id": old, "first": 3}))["memory"]["mayReplace"]
    assert first == []

    link = (await gql.ok(PROPOSE, {"ns": namespace, "newer": new, "older": old,
                                   "confirm": False}))["proposeUpdate"]
    assert link["kind"] == "UPDATE" and link["status"] == "CANDIDATE"
    assert link["confidence"] == 1.0 and link["attribute"] == "morning drink"
    assert "tea instead of coffee" in link["reason"]
    assert link["older"]["status"] == "ACTIVE"
    hits = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                            "query": QUESTION}}))["search"]
    order = [h["memory"]["id"] for h in hits]
    assert order.index(new) < order.index(old)
    assert next(h for h in hits if h["memory"]["id"] == old)["outdatedBy"] == {"id": new}
    again = (await gql.ok(MAY_REPLACE, {"ns": namespace, "id": new, "first": 3}))["memory"]["mayReplace"]
    assert {"id": link["id"], "status": "CANDIDATE"} in [c["update"] for c in again]

    same = (await gql.ok(PROPOSE, {"ns": namespace, "newer": new, "older": old,
                                   "confirm": False}))["proposeUpdate"]
    assert same["id"] == link["id"]  # saying it again changes nothing
    done = (await gql.ok(PROPOSE, {"ns": namespace, "newer": new, "older": old,
                                   "confirm": True}))["proposeUpdate"]
    assert done["id"] == link["id"] and done["status"] == "CONFIRMED"
    assert done["older"] == {"id": old, "status": "SUPERSEDED", "supersededBy": new}
    audit = (await gql.ok(AUDIT, {"ns": namespace, "id": new}))["auditTrail"]
    assert {"propose-update", "confirm-update"} <= {a["operation"] for a in audit}


async def test_a_proposal_confirmed_at_once_supersedes_in_one_step(
    gql: GraphQLClient, namespace: str,
) -> None:
    old, new, _ = await home_chat(gql, namespace)
    done = (await gql.ok(PROPOSE, {"ns": namespace, "newer": new, "older": old,
                                   "confirm": True}))["proposeUpdate"]
    assert done["status"] == "CONFIRMED"
    assert done["older"]["status"] == "SUPERSEDED"
    # Superseded, the old home leaves recall and is offered to no later memory.
    later = await write(gql, namespace, "Green tea with a slice of ginger, every morning.",
                        "2025-07-01T09:00:00Z")
    assert old not in [c["memory"]["id"] for c in later["mayReplace"]]


async def test_what_cannot_be_proposed_is_refused_and_changes_nothing(
    gql: GraphQLClient, namespace: str,
) -> None:
    old, new, _ = await home_chat(gql, namespace)

    async def refused(newer: str, older: str, ns: str = namespace) -> str:
        error = await gql.error(PROPOSE, {"ns": ns, "newer": newer, "older": older,
                                          "confirm": True})
        return str(error["extensions"]["code"])

    assert await refused(new, new) == "VALIDATION"
    assert await refused(old, new) == "VALIDATION"  # the newer one must come later
    assert await refused(new, "no-such-memory") == "NOT_FOUND"
    assert await refused(new, old, ns=f"{namespace}-other") == "NOT_FOUND"
    episode = (await gql.ok(WRITE_RECORD, {"input": record(
        namespace, "EPISODIC", {"outcome": "success"})}))["writeRecord"]["record"]["memory"]
    assert await refused(new, episode["id"]) == "EPISODIC_IMMUTABLE"

    link = (await gql.ok(PROPOSE, {"ns": namespace, "newer": new, "older": old,
                                   "confirm": False}))["proposeUpdate"]
    await gql.ok(REJECT, {"ns": namespace, "id": link["id"]})
    assert await refused(new, old) == "CONFLICT"  # a person said no
    assert old not in [c["memory"]["id"] for c in (await gql.ok(
        MAY_REPLACE, {"ns": namespace, "id": new, "first": 5}))["memory"]["mayReplace"]]
    hits = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                            "query": QUESTION}}))["search"]
    assert all(h["outdatedBy"] is None for h in hits)


async def test_a_supersedes_cycle_is_refused(gql: GraphQLClient, namespace: str) -> None:
    a = (await write(gql, namespace, "The metrics exporter listens on port 9100.",
                     "2025-01-01T00:00:00Z"))["id"]
    b = (await write(gql, namespace, "Metrics exporter now on 9256 after the clash.",
                     "2025-02-01T00:00:00Z"))["id"]
    c = (await write(gql, namespace, "Exporter port is 9300 since the rebuild.",
                     "2025-03-01T00:00:00Z"))["id"]
    await gql.ok(PROPOSE, {"ns": namespace, "newer": c, "older": b, "confirm": False})
    # b -> a is fine; a -> c would run against time (VALIDATION) before any cycle.
    await gql.ok(PROPOSE, {"ns": namespace, "newer": b, "older": a, "confirm": False})
    error = await gql.error(PROPOSE, {"ns": namespace, "newer": a, "older": c,
                                      "confirm": True})
    assert error["extensions"]["code"] == "VALIDATION"


async def test_a_key_never_sees_or_links_a_memory_it_may_not_see(
    gql: GraphQLClient, graph_client: Any, session_app: Any, namespace: str,
) -> None:
    secret_old = await write(gql, namespace, OLD, "2025-01-10T10:00:00Z", sensitivity="HIGH")
    new = await write(gql, namespace, NEW, "2025-06-02T09:00:00Z")
    assert secret_old["id"] in [c["memory"]["id"] for c in new["mayReplace"]]
    low_key = await make_key(graph_client, namespace, clearance=Sensitivity.LOW)
    async with as_key(session_app, low_key) as low:
        shown = (await low.ok(MAY_REPLACE, {"ns": namespace, "id": new["id"], "first": 5}))["memory"]
        assert secret_old["id"] not in [c["memory"]["id"] for c in shown["mayReplace"]]
        error = await low.error(PROPOSE, {"ns": namespace, "newer": new["id"],
                                          "older": secret_old["id"], "confirm": True})
        assert error["extensions"]["code"] == "NOT_FOUND"
    reader = await make_key(graph_client, namespace, clearance=Sensitivity.HIGH, write=False)
    async with as_key(session_app, reader) as read_only:
        error = await read_only.error(PROPOSE, {"ns": namespace, "newer": new["id"],
                                                "older": secret_old["id"], "confirm": True})
        assert error["extensions"]["code"] == "FORBIDDEN"
    hits = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                            "query": QUESTION}}))["search"]
    assert all(h["outdatedBy"] is None for h in hits)  # nothing was linked


async def test_two_writers_proposing_the_same_pair_at_once_make_one_link(
    gql: GraphQLClient, namespace: str,
) -> None:
    old, new, _ = await home_chat(gql, namespace)
    results = await asyncio.gather(*(
        gql.ok(PROPOSE, {"ns": namespace, "newer": new, "older": old, "confirm": confirm})
        for confirm in (False, True, False, True)))
    assert len({r["proposeUpdate"]["id"] for r in results}) == 1
