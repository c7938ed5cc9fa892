"""Version history: every in-place edit keeps the state it replaced, and `asOf` on
get, list, search and records answers with the state as it was then."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from memlattice.core.model import Sensitivity
from tests.conftest import GraphQLClient
from tests.integration._keys import as_key, make_key
from tests.integration._knowledge import GET_RECORD, UPDATE_RECORD, write_record
from tests.integration._support import FORGET, SUPERSEDE, UPDATE, WRITE, code, mem, ts

FIELDS = "id content summary tags metadata version status sensitivity updatedAt"
GET_AS_OF = ("query($ns: String!, $id: ID!, $asOf: DateTime) {"
             " memory(namespace: $ns, id: $id, asOf: $asOf) {" + FIELDS + "} }")
LIST_AS_OF = ("query($filter: MemoryFilterInput!) { memories(filter: $filter, first: 50) {"
              " totalCount edges { node {" + FIELDS + "} } } }")
SEARCH_AS_OF = ("query($input: SearchInput!) { search(input: $input) {"
                " memory {" + FIELDS + "} } }")
HISTORY = ("query($ns: String!, $id: ID!, $limit: Int) {"
           " memoryHistory(namespace: $ns, id: $id, limit: $limit) {"
           " version recordedFrom recordedUntil memory {" + FIELDS + "} } }")
RECORDS_AS_OF = ("query($ns: String!, $asOf: DateTime, $threadId: String) {"
                 " records(namespace: $ns, asOf: $asOf, threadId: $threadId) {"
                 " memory { id version } payload planNodes { id label } planEdges { source target"
                 " kind } } }")

# Every version of the memory edited below: content, summary, tags, metadata.
STATES = [
    ("zebra grazes in the north field", "north", ["field", "v1"], {"stage": 1, "site": "n"}),
    ("zebra grazes in the south field", "south", ["field", "v2"], {"stage": 2, "site": "s"}),
    ("zebra sleeps near the east river", "east", ["river", "v3"], {"stage": 3, "site": "e"}),
    ("zebra drinks from the west lake", "west", ["lake", "v4"], {"stage": 4, "site": "w"}),
]


def before(instant: str) -> str:
    """One microsecond earlier, as an ISO string."""
    return (ts(instant) - timedelta(microseconds=1)).isoformat()


async def edited(gql: GraphQLClient, namespace: str) -> tuple[str, list[str]]:
    """A memory written as STATES[0] and edited three times; its id and the
    `updatedAt` at which each version began."""
    content, summary, tags, metadata = STATES[0]
    written = (await gql.ok(WRITE, {"input": mem(namespace, content, summary=summary, tags=tags,
                                                 metadata=metadata)}))["writeMemory"]
    began = [written["updatedAt"]]
    for content, summary, tags, metadata in STATES[1:]:
        await asyncio.sleep(0.01)
        updated = (await gql.ok(UPDATE, {"ns": namespace, "id": written["id"], "patch": {
            "content": content, "summary": summary, "tags": tags, "metadata": metadata},
            "v": len(began)}))["updateMemory"]
        began.append(updated["updatedAt"])
    return written["id"], began


def assert_state(memory: dict[str, Any], version: int) -> None:
    content, summary, tags, metadata = STATES[version - 1]
    assert (memory["content"], memory["summary"], memory["tags"], memory["metadata"],
            memory["version"]) == (content, summary, tags, metadata, version)


async def test_get_list_and_search_as_of_return_each_version(gql: GraphQLClient,
                                                             namespace: str) -> None:
    id, began = await edited(gql, namespace)
    ends = [before(t) for t in began[1:]] + [None]
    for version, (start, end) in enumerate(zip(began, ends), start=1):
        for at in filter(None, (start, end)):
            got = (await gql.ok(GET_AS_OF, {"ns": namespace, "id": id, "asOf": at}))["memory"]
            assert_state(got, version)
            assert got["status"] == "ACTIVE"
            # Filters match the state then: its tag and metadata, not today's.
            _, _, tags, metadata = STATES[version - 1]
            flt = {"namespace": namespace, "asOf": at}
            page = (await gql.ok(LIST_AS_OF, {"filter": {**flt, "tagsAny": [tags[1]]}}))
            assert page["memories"]["totalCount"] == 1
            assert_state(page["memories"]["edges"][0]["node"], version)
            other = [f"v{v}" for v in range(1, 5) if v != version]
            page = (await gql.ok(LIST_AS_OF, {"filter": {**flt, "tagsAny": other}}))
            assert page["memories"]["totalCount"] == 0
            page = (await gql.ok(LIST_AS_OF, {"filter": {**flt, "metadata": {
                "stage": metadata["stage"]}}}))
            assert [e["node"]["id"] for e in page["memories"]["edges"]] == [id]
            for mode in ("LEXICAL", "HYBRID"):
                hits = (await gql.ok(SEARCH_AS_OF, {"input": {
                    "filter": {**flt, "metadata": {"site": metadata["site"]}},
                    "query": "zebra", "mode": mode}}))["search"]
                assert len(hits) == 1, (mode, version)
                assert_state(hits[0]["memory"], version)
                missed = (await gql.ok(SEARCH_AS_OF, {"input": {
                    "filter": {**flt, "tagsAll": [STATES[version % 4][2][1]]},
                    "query": "zebra", "mode": mode}}))["search"]
                assert missed == []
    # Before it was written it did not exist; today is the last version.
    assert code(await gql.error(GET_AS_OF, {"ns": namespace, "id": id,
                                            "asOf": before(began[0])})) == "NOT_FOUND"
    assert_state((await gql.ok(GET_AS_OF, {"ns": namespace, "id": id}))["memory"], 4)


async def test_history_lists_every_version_with_its_window(gql: GraphQLClient,
                                                           namespace: str) -> None:
    id, began = await edited(gql, namespace)
    versions = (await gql.ok(HISTORY, {"ns": namespace, "id": id}))["memoryHistory"]
    assert [v["version"] for v in versions] == [4, 3, 2, 1]
    for v in versions:
        assert_state(v["memory"], v["version"])
        assert ts(v["recordedFrom"]) == ts(began[v["version"] - 1])
    assert versions[0]["recordedUntil"] is None
    # The windows tile system time: each version ends when the next begins.
    for newer, older in itertools.pairwise(versions):
        assert ts(older["recordedUntil"]) == ts(newer["recordedFrom"])
    limited = (await gql.ok(HISTORY, {"ns": namespace, "id": id, "limit": 2}))["memoryHistory"]
    assert [v["version"] for v in limited] == [4, 3]
    bad = await gql.error(HISTORY, {"ns": namespace, "id": id, "limit": 0})
    assert code(bad) == "VALIDATION"


async def test_supersede_and_forget_keep_the_state_they_replaced(
        gql: GraphQLClient, namespace: str) -> None:
    first = (await gql.ok(WRITE, {"input": mem(namespace, "the zebra is calm",
                                               tags=["calm"])}))["writeMemory"]
    await asyncio.sleep(0.01)
    result = (await gql.ok(SUPERSEDE, {"id": first["id"], "memory": mem(
        namespace, "the zebra is restless")}))["supersedeMemory"]
    then = (await gql.ok(GET_AS_OF, {"ns": namespace, "id": first["id"],
                                     "asOf": first["updatedAt"]}))["memory"]
    assert (then["status"], then["version"]) == ("ACTIVE", 1)
    assert result["previous"]["version"] == 2
    await asyncio.sleep(0.01)
    second = result["current"]
    await gql.ok(UPDATE, {"ns": namespace, "id": second["id"], "patch": {"summary": "edited"}})
    forgotten = (await gql.ok(FORGET, {"ns": namespace, "p": {"id": second["id"]}}))["forget"]
    assert forgotten["ids"] == [second["id"]]
    then = (await gql.ok(GET_AS_OF, {"ns": namespace, "id": second["id"],
                                     "asOf": second["updatedAt"]}))["memory"]
    assert (then["status"], then["version"], then["summary"]) == ("ACTIVE", 1, None)
    # A forgotten memory's history shows its versions and windows, not their content.
    versions = (await gql.ok(HISTORY, {"ns": namespace, "id": second["id"]}))["memoryHistory"]
    assert [v["version"] for v in versions] == [3, 2, 1]
    assert versions[0]["memory"]["status"] == "FORGOTTEN"
    assert [v["memory"] for v in versions[1:]] == [None, None]


async def test_concurrent_updates_leave_a_gapless_version_chain(
        gql: GraphQLClient, namespace: str, graph_client: Any) -> None:
    written = (await gql.ok(WRITE, {"input": mem(namespace, "start")}))["writeMemory"]
    contents = [f"concurrent edit {i}" for i in range(8)]
    await asyncio.gather(*(gql.ok(UPDATE, {"ns": namespace, "id": written["id"],
                                           "patch": {"content": c}}) for c in contents))
    versions = (await gql.ok(HISTORY, {"ns": namespace, "id": written["id"]}))["memoryHistory"]
    assert [v["version"] for v in versions] == list(range(9, 0, -1))
    assert versions[-1]["memory"]["content"] == "start"
    assert sorted(v["memory"]["content"] for v in versions[:-1]) == sorted(contents)
    for newer, older in itertools.pairwise(versions):
        assert ts(older["recordedUntil"]) == ts(newer["recordedFrom"])
        assert ts(older["recordedFrom"]) <= ts(older["recordedUntil"])
    rows = await graph_client.read((
        "MATCH (m:Memory {id: $id})-[:HAS_REVISION]->(r:MemoryRevision)"
        " RETURN r.version AS v, r.id AS id, r.embedding AS e ORDER BY v", {"id": written["id"]}))
    assert [r["v"] for r in rows] == list(range(1, 9))
    assert all(r["id"] is None and r["e"] is None for r in rows)
    # Revisions are no memories: no index or listing ever sees them.
    page = (await gql.ok(LIST_AS_OF, {"filter": {"namespace": namespace}}))["memories"]
    assert page["totalCount"] == 1


async def test_working_and_plan_records_as_of_each_payload(gql: GraphQLClient,
                                                           namespace: str) -> None:
    def working(state: str, next_action: str) -> dict[str, Any]:
        return {"threadId": "t-1", "state": state, "nextActions": [next_action]}

    written = (await write_record(gql, namespace, "WORKING",
                                  working("planning", "read the spec")))["record"]
    id = written["memory"]["id"]
    t1 = (await gql.ok(GET_AS_OF, {"ns": namespace, "id": id}))["memory"]["updatedAt"]
    await asyncio.sleep(0.01)
    second = (await gql.ok(UPDATE_RECORD, {"ns": namespace, "id": id, "type": "WORKING",
                                           "payload": working("executing", "write code"),
                                           "v": 1}))["updateRecord"]
    t2 = (await gql.ok(GET_AS_OF, {"ns": namespace, "id": id}))["memory"]["updatedAt"]
    await asyncio.sleep(0.01)
    await gql.ok(UPDATE_RECORD, {"ns": namespace, "id": id, "type": "WORKING",
                                 "payload": working("done", "ship"), "v": 2})
    assert second["memory"]["version"] == 2
    for at, state, version in ((t1, "planning", 1), (before(t2), "planning", 1),
                               (t2, "executing", 2), (None, "done", 3)):
        got = (await gql.ok(GET_RECORD, {"ns": namespace, "id": id, "asOf": at}))["record"]
        assert (got["payload"]["state"], got["memory"]["version"]) == (state, version)
        listed = (await gql.ok(RECORDS_AS_OF, {"ns": namespace, "asOf": at,
                                               "threadId": "t-1"}))["records"]
        assert [(r["payload"]["state"], r["memory"]["version"]) for r in listed] == [
            (state, version)]

    # A plan graph's nodes and edges are rebuilt as they were.
    plan = {"planId": "p", "version": 1, "intent": "deploy",
            "nodes": [{"id": "a", "kind": "tool", "label": "build"},
                      {"id": "b", "kind": "tool", "label": "test"}],
            "edges": [{"source": "a", "target": "b", "kind": "data"}]}
    written = (await write_record(gql, namespace, "PLAN_GRAPH", plan))["record"]
    pid = written["memory"]["id"]
    p1 = (await gql.ok(GET_AS_OF, {"ns": namespace, "id": pid}))["memory"]["updatedAt"]
    await asyncio.sleep(0.01)
    replanned = {**plan, "nodes": [{"id": "x", "kind": "tool", "label": "deploy"}], "edges": []}
    await gql.ok(UPDATE_RECORD, {"ns": namespace, "id": pid, "type": "PLAN_GRAPH",
                                 "payload": replanned})
    then = (await gql.ok(GET_RECORD, {"ns": namespace, "id": pid, "asOf": p1}))["record"]
    assert [(n["id"], n["label"]) for n in then["planNodes"]] == [("a", "build"),
                                                                  ("b", "test")]
    assert then["planEdges"] == [{"source": "a", "target": "b", "kind": "DATA"}]
    now = (await gql.ok(GET_RECORD, {"ns": namespace, "id": pid}))["record"]
    assert [n["id"] for n in now["planNodes"]] == ["x"] and now["planEdges"] == []


async def test_history_and_as_of_never_pass_the_callers_clearance(
        gql: GraphQLClient, namespace: str, graph_client: Any,
        session_app: tuple[Any, Any]) -> None:
    # Lowered: HIGH at first, LOW now.
    lowered = (await gql.ok(WRITE, {"input": mem(namespace, "zebra secret plan",
                                                 sensitivity="HIGH")}))["writeMemory"]
    await asyncio.sleep(0.01)
    await gql.ok(UPDATE, {"ns": namespace, "id": lowered["id"], "patch": {
        "content": "zebra public plan", "sensitivity": "LOW"}})
    # Raised: LOW at first, HIGH now.
    raised = (await gql.ok(WRITE, {"input": mem(namespace, "zebra harmless note")}))[
        "writeMemory"]
    await asyncio.sleep(0.01)
    await gql.ok(UPDATE, {"ns": namespace, "id": raised["id"], "patch": {
        "content": "zebra now classified", "sensitivity": "HIGH"}})
    secret = await make_key(graph_client, namespace, clearance=Sensitivity.LOW)
    async with as_key(session_app, secret) as low:
        then = lowered["updatedAt"]
        assert (await low.ok(GET_AS_OF, {"ns": namespace, "id": lowered["id"]}))[
            "memory"]["content"] == "zebra public plan"
        gone = await low.error(GET_AS_OF, {"ns": namespace, "id": lowered["id"],
                                           "asOf": then})
        assert code(gone) == "NOT_FOUND"
        versions = (await low.ok(HISTORY, {"ns": namespace, "id": lowered["id"]}))[
            "memoryHistory"]
        assert [v["version"] for v in versions] == [2, 1]
        assert versions[1]["memory"] is None  # above its clearance then
        # Above its clearance now: not there at any time, nor its history.
        for query, variables in ((GET_AS_OF, {"asOf": raised["updatedAt"]}), (HISTORY, {})):
            error = await low.error(query, {"ns": namespace, "id": raised["id"], **variables})
            assert code(error) == "NOT_FOUND"
        # At `then` the lowered memory was HIGH and the raised one not yet written;
        # when the raised one was written (LOW then, HIGH now) the lowered was LOW.
        for at, expected in ((then, set()), (raised["updatedAt"], {lowered["id"]})):
            flt = {"namespace": namespace, "asOf": at}
            listed = (await low.ok(LIST_AS_OF, {"filter": flt}))["memories"]
            hits = (await low.ok(SEARCH_AS_OF, {"input": {"filter": flt, "query": "zebra",
                                                          "mode": "LEXICAL"}}))["search"]
            assert {e["node"]["id"] for e in listed["edges"]} == expected
            assert listed["totalCount"] == len(expected)
            assert {h["memory"]["id"] for h in hits} == expected
            shown = str(listed) + str(hits)
            assert "secret" not in shown and "harmless" not in shown
    # The admin sees both, as they were.
    got = (await gql.ok(GET_AS_OF, {"ns": namespace, "id": lowered["id"],
                                    "asOf": lowered["updatedAt"]}))["memory"]
    assert (got["content"], got["sensitivity"]) == ("zebra secret plan", "HIGH")


async def test_delete_erases_the_history(gql: GraphQLClient, namespace: str,
                                         graph_client: Any) -> None:
    written = (await gql.ok(WRITE, {"input": mem(namespace, "short lived")}))["writeMemory"]
    for i in range(2):
        await gql.ok(UPDATE, {"ns": namespace, "id": written["id"],
                              "patch": {"content": f"edit {i}"}})
    count = ("MATCH (r:MemoryRevision {memoryId: $id}) RETURN count(r) AS n",
             {"id": written["id"]})
    assert (await graph_client.read(count))[0]["n"] == 2
    await gql.ok("mutation($ns: String!, $id: ID!) { deleteMemory(namespace: $ns, id: $id) }",
                 {"ns": namespace, "id": written["id"]})
    assert (await graph_client.read(count))[0]["n"] == 0
    error = await gql.error(HISTORY, {"ns": namespace, "id": written["id"]})
    assert code(error) == "NOT_FOUND"


async def test_as_of_applies_expiry_as_of_then(gql: GraphQLClient, namespace: str) -> None:
    expires = (datetime.now(UTC) + timedelta(seconds=1)).isoformat()
    written = (await gql.ok(WRITE, {"input": mem(namespace, "zebra fleeting",
                                                 expiresAt=expires)}))["writeMemory"]
    await asyncio.sleep(1.2)
    assert code(await gql.error(GET_AS_OF, {"ns": namespace, "id": written["id"]})) == (
        "NOT_FOUND")
    then = (await gql.ok(GET_AS_OF, {"ns": namespace, "id": written["id"],
                                     "asOf": written["createdAt"]}))["memory"]
    assert then["content"] == "zebra fleeting"
    page = (await gql.ok(LIST_AS_OF, {"filter": {"namespace": namespace,
                                                 "asOf": written["createdAt"]}}))
    assert page["memories"]["totalCount"] == 1
