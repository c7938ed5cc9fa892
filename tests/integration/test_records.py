"""Typed records: labels, payload validation, graph payloads, immutability, working memory."""

from __future__ import annotations

from typing import Any

from tests.conftest import GraphQLClient
from tests.integration._knowledge import (
    EPISODE,
    GET_RECORD,
    LIST_RECORDS,
    SUPERSEDE_RECORD,
    UPDATE_RECORD,
    WRITE_RECORD,
    record,
    spo,
    write_record,
)
from tests.integration._support import SUPERSEDE, UPDATE, WRITE, code, count_memories, mem


async def test_episodic_record_is_a_labelled_memory_with_a_traversable_tool_graph(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    written = (await write_record(gql, namespace, "EPISODIC", EPISODE))["record"]
    rid = written["memory"]["id"]
    assert written["recordType"] == "episodic"
    assert written["memory"]["memoryType"] == "episodic"
    assert written["memory"]["content"].startswith("Episode (success): began deploy")
    calls = {c["id"]: c for c in written["toolCalls"]}
    assert sorted(calls) == ["a", "b", "c", "d"]
    assert calls["d"]["dependsOn"] == ["b", "c"]
    assert calls["a"]["args"] == {"branch": "main"} and calls["a"]["result"] == "ok"
    assert written["evidence"] == [{"kind": "file", "ref": "deploy.log"}]

    rows = await graph_client.read((
        ("MATCH (m:Memory:Episodic {id: $id})-[:USED_TOOL]->(d:ToolCall {callId: 'd'})"
         "-[:DEPENDS_ON*]->(up:ToolCall) RETURN collect(DISTINCT up.callId) AS up"),
        {"id": rid}))
    assert sorted(rows[0]["up"]) == ["a", "b", "c"]

    again = (await gql.ok(GET_RECORD, {"ns": namespace, "id": rid}))["record"]
    assert again["payload"]["outcome"] == "success" and again["toolCalls"] == written["toolCalls"]


async def test_plan_graph_nodes_and_edges(gql: GraphQLClient, namespace: str,
                                          graph_client: Any) -> None:
    plan = {"planId": "p1", "version": 2, "intent": "ship release",
            "nodes": [{"id": "n1", "tool": "build"}, {"id": "n2", "tool": "test"},
                      {"id": "n3", "kind": "gate"}],
            "edges": [{"source": "n1", "target": "n2", "kind": "data"},
                      {"source": "n2", "target": "n3", "kind": "control"}],
            "metrics": {"runs": 3}}
    written = (await write_record(gql, namespace, "PLAN_GRAPH", plan))["record"]
    assert [n["id"] for n in written["planNodes"]] == ["n1", "n2", "n3"]
    assert written["planEdges"] == [{"source": "n1", "target": "n2", "kind": "DATA"},
                                    {"source": "n2", "target": "n3", "kind": "CONTROL"}]
    rows = await graph_client.read((
        ("MATCH (:PlanGraph {id: $id})-[:HAS_NODE]->(a:PlanNode)-[:DATA]->(b:PlanNode)"
         " RETURN a.nodeId AS a, b.nodeId AS b"), {"id": written["memory"]["id"]}))
    assert [(r["a"], r["b"]) for r in rows] == [("n1", "n2")]


async def test_invalid_payloads_fail_with_field_paths_and_write_nothing(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    cases = [
        ("EPISODIC", {"outcome": "meh"}, "payload.outcome"),
        ("EPISODIC", {"outcome": "success", "toolGraph": [
            {"id": "a", "tool": "x", "dependsOn": ["zz"]}]}, "payload"),
        ("EPISODIC", {"outcome": "success", "toolGraph": [
            {"id": "a", "tool": "x", "dependsOn": ["b"]},
            {"id": "b", "tool": "y", "dependsOn": ["a"]}]}, "payload"),
        ("WORKING", {"threadId": "t", "state": "sleeping"}, "payload.state"),
        ("SEMANTIC", {"subject": "a", "predicate": "b"}, "payload.object"),
        ("SEMANTIC", spo("a", "b", "c", validity={"kind": "conditional"}),
         "payload.validity"),
        ("COMPETENCE", {"skill": "x", "successCount": -1}, "payload.successCount"),
        ("PLAN_GRAPH", {"planId": "p", "intent": "i", "nodes": [{"id": "n"}],
                        "edges": [{"source": "n", "target": "ghost"}]}, "payload"),
        ("SEMANTIC", spo("a", "b", "c", extra=1), "payload.extra"),
    ]
    for type, payload, field in cases:
        error = await gql.error(WRITE_RECORD, {"input": record(namespace, type, payload)})
        assert code(error) == "VALIDATION", (type, payload, error)
        assert field in error["extensions"]["fields"], (payload, error)
    assert await count_memories(graph_client, namespace) == 0


async def test_episodic_records_refuse_every_revision(gql: GraphQLClient,
                                                      namespace: str) -> None:
    rid = (await write_record(gql, namespace, "EPISODIC", EPISODE))["record"]["memory"]["id"]
    attempts = [
        (UPDATE, {"ns": namespace, "id": rid, "patch": {"content": "rewritten"}}),
        (SUPERSEDE, {"id": rid, "memory": mem(namespace, "rewritten")}),
        (UPDATE_RECORD, {"ns": namespace, "id": rid, "type": "EPISODIC",
                         "payload": {"outcome": "failure"}}),
        (SUPERSEDE_RECORD, {"ns": namespace, "id": rid,
                            "r": record(namespace, "EPISODIC", {"outcome": "failure"})}),
    ]
    for document, variables in attempts:
        error = await gql.error(document, variables)
        assert code(error) == "EPISODIC_IMMUTABLE", error
    kept = (await gql.ok(GET_RECORD, {"ns": namespace, "id": rid}))["record"]
    assert kept["memory"]["version"] == 1 and kept["payload"]["outcome"] == "success"


async def test_working_memory_is_edited_and_discarded_with_its_task(
    gql: GraphQLClient, namespace: str
) -> None:
    state = {"threadId": "t1", "state": "planning", "nextActions": ["read spec"]}
    w = (await write_record(gql, namespace, "WORKING", state, taskId="task-9",
                            scope="TASK"))["record"]
    other = (await write_record(gql, namespace, "WORKING", {**state, "threadId": "t2"},
                                taskId="task-10", scope="TASK"))["record"]
    updated = (await gql.ok(UPDATE_RECORD, {
        "ns": namespace, "id": w["memory"]["id"], "type": "WORKING", "v": 1,
        "payload": {**state, "state": "executing", "openQuestions": ["which db?"]}}))[
        "updateRecord"]
    assert updated["memory"]["version"] == 2
    assert updated["payload"]["state"] == "executing"
    stale = await gql.error(UPDATE_RECORD, {"ns": namespace, "id": w["memory"]["id"],
                                            "type": "WORKING", "v": 1, "payload": state})
    assert code(stale) == "VERSION_CONFLICT"

    discarded = (await gql.ok(
        "mutation($ns: String!, $t: String!) { discardTask(namespace: $ns, taskId: $t)"
        " { count ids } }", {"ns": namespace, "t": "task-9"}))["discardTask"]
    assert discarded == {"count": 1, "ids": [w["memory"]["id"]]}
    left = (await gql.ok(LIST_RECORDS, {"ns": namespace, "types": ["WORKING"]}))["records"]
    assert [r["memory"]["id"] for r in left] == [other["memory"]["id"]]


async def test_supersede_record_keeps_type_and_links(gql: GraphQLClient, namespace: str) -> None:
    old = (await write_record(gql, namespace, "COMPETENCE",
                              {"skill": "deploy", "successCount": 3, "failureCount": 1}))[
        "record"]
    result = (await gql.ok(SUPERSEDE_RECORD, {
        "ns": namespace, "id": old["memory"]["id"], "v": 1,
        "r": record(namespace, "COMPETENCE", {"skill": "deploy", "successCount": 4})}))[
        "supersedeRecord"]
    assert result["previous"][0]["memory"]["status"] == "SUPERSEDED"
    assert result["previous"][0]["memory"]["supersededBy"] == result["record"]["memory"]["id"]
    assert result["record"]["payload"]["successCount"] == 4


async def test_delete_erases_the_payload_graph_too(gql: GraphQLClient, namespace: str,
                                                   graph_client: Any) -> None:
    rid = (await write_record(gql, namespace, "EPISODIC", EPISODE))["record"]["memory"]["id"]
    await gql.ok("mutation($ns: String!, $id: ID!) { deleteMemory(namespace: $ns, id: $id) }",
                 {"ns": namespace, "id": rid})
    rows = await graph_client.read((
        "MATCH (t:ToolCall) WHERE t.recordId = $id RETURN count(t) AS n", {"id": rid}))
    assert rows[0]["n"] == 0


async def test_records_lists_records_and_facts_not_plain_notes(gql: GraphQLClient,
                                                               namespace: str) -> None:
    await gql.ok(WRITE, {"input": mem(namespace, "a plain note")})
    rec = (await write_record(gql, namespace, "SEMANTIC", spo("a", "b", "c")))["record"]
    listed = (await gql.ok(LIST_RECORDS, {"ns": namespace}))["records"]
    assert [r["memory"]["id"] for r in listed] == [rec["memory"]["id"]]
