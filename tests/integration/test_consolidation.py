"""Consolidation: thresholds, reinforcement, idempotence, decay and pruning, schedule."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from memlattice.server.app import runtime_of
from memlattice.services.consolidation import ConsolidationScheduler
from tests.conftest import GraphQLClient
from tests.integration._knowledge import GET_RECORD, LIST_RECORDS, write_record
from tests.integration._support import EDGES, code

CONSOLIDATE = """
mutation($ns: String!, $now: DateTime) {
  consolidate(namespace: $ns, now: $now) {
    namespace decayed pruned changed
    created { semantic competence planGraph }
    reinforced { semantic competence planGraph }
  }
}
"""

DEPLOY = [
    {"id": "a", "tool": "git.pull"},
    {"id": "b", "tool": "pytest", "dependsOn": ["a"]},
    {"id": "c", "tool": "docker.build", "dependsOn": ["a"]},
    {"id": "d", "tool": "kubectl.apply", "dependsOn": ["b", "c"]},
]


def episode(outcome: str = "success", tools: list[dict[str, Any]] | None = None,
            observations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"outcome": outcome, "toolGraph": DEPLOY if tools is None else tools,
            "observations": observations or [],
            "timeline": [{"time": "2026-01-01T00:00:00Z", "kind": "deploy",
                          "summary": "deployed the service"}]}


async def consolidate(gql: GraphQLClient, namespace: str,
                      now: datetime | None = None) -> dict[str, Any]:
    report: dict[str, Any] = (await gql.ok(CONSOLIDATE, {
        "ns": namespace, "now": now.isoformat() if now else None}))["consolidate"]
    return report


async def test_thresholds_reinforcement_and_idempotence(gql: GraphQLClient,
                                                        namespace: str) -> None:
    obs = {"subject": "service", "predicate": "deploys with", "object": "kubectl"}
    e1 = (await write_record(gql, namespace, "EPISODIC", episode(observations=[obs]),
                             embedding=None))["record"]["memory"]["id"]
    # A failure with the same pattern and a lone success of another pattern count for nothing.
    await write_record(gql, namespace, "EPISODIC", episode("failure"), embedding=None)
    await write_record(gql, namespace, "EPISODIC", episode(tools=[
        {"id": "x", "tool": "curl"}, {"id": "y", "tool": "jq", "dependsOn": ["x"]}]),
        embedding=None)
    first = await consolidate(gql, namespace)
    assert first["created"]["competence"] == []  # one success is not a pattern yet
    assert len(first["created"]["planGraph"]) == 1  # a 4-call tool graph becomes a plan
    assert len(first["created"]["semantic"]) == 1
    plan_id = first["created"]["planGraph"][0]

    e2 = (await write_record(gql, namespace, "EPISODIC", episode(observations=[obs]),
                             embedding=None))["record"]["memory"]["id"]
    second = await consolidate(gql, namespace)
    assert len(second["created"]["competence"]) == 1
    assert second["created"]["semantic"] == [] and second["created"]["planGraph"] == []
    assert second["reinforced"]["semantic"] == first["created"]["semantic"]
    assert second["reinforced"]["planGraph"] == [plan_id]
    skill_id = second["created"]["competence"][0]

    again = await consolidate(gql, namespace)
    assert again["changed"] is False
    assert again["created"] == again["reinforced"] == {"semantic": [], "competence": [],
                                                       "planGraph": []}

    skill = (await gql.ok(GET_RECORD, {"ns": namespace, "id": skill_id}))["record"]
    assert skill["recordType"] == "competence"
    assert skill["payload"]["skill"] == "git.pull -> docker.build -> pytest -> kubectl.apply"
    assert skill["payload"]["successCount"] == 2
    assert skill["memory"]["salience"] == 0.5
    derived = (await gql.ok(EDGES, {"ns": namespace, "id": skill_id, "types": ["DERIVED"],
                                    "direction": "OUT"}))["edges"]
    assert sorted(e["targetId"] for e in derived) == sorted([e1, e2])

    await write_record(gql, namespace, "EPISODIC", episode(), embedding=None)
    third = await consolidate(gql, namespace)
    assert third["reinforced"]["competence"] == [skill_id]  # reinforced, not duplicated
    assert third["created"]["competence"] == []
    skill = (await gql.ok(GET_RECORD, {"ns": namespace, "id": skill_id}))["record"]
    assert skill["payload"]["successCount"] == 3
    assert abs(skill["memory"]["salience"] - 0.6) < 1e-9
    plan = (await gql.ok(GET_RECORD, {"ns": namespace, "id": plan_id}))["record"]
    assert len(plan["planNodes"]) == 4
    assert {(e["source"], e["target"]) for e in plan["planEdges"]} == {
        ("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")}
    skills = (await gql.ok(LIST_RECORDS, {"ns": namespace, "types": ["COMPETENCE"]}))[
        "records"]
    assert len(skills) == 1


async def test_small_tool_graphs_make_no_plan_and_sensitivity_is_inherited(
    gql: GraphQLClient, namespace: str
) -> None:
    small = [{"id": "a", "tool": "ls"}, {"id": "b", "tool": "cat", "dependsOn": ["a"]},
             {"id": "c", "tool": "wc", "dependsOn": ["b"]}]
    obs = {"subject": "vault", "predicate": "opens with", "object": "key 7"}
    await write_record(gql, namespace, "EPISODIC", episode(tools=small, observations=[obs]),
                       embedding=None, sensitivity="HIGH")
    await write_record(gql, namespace, "EPISODIC", episode(tools=small), embedding=None)
    report = await consolidate(gql, namespace)
    assert report["created"]["planGraph"] == []
    assert len(report["created"]["competence"]) == 1
    fact = (await gql.ok(GET_RECORD, {"ns": namespace,
                                      "id": report["created"]["semantic"][0]}))["record"]
    assert fact["memory"]["sensitivity"] == "HIGH"
    skill = (await gql.ok(GET_RECORD, {"ns": namespace,
                                       "id": report["created"]["competence"][0]}))["record"]
    assert skill["memory"]["sensitivity"] == "HIGH"


async def test_salience_decays_and_old_episodes_are_pruned(gql: GraphQLClient,
                                                           namespace: str) -> None:
    ep = (await write_record(gql, namespace, "EPISODIC", episode("partial"),
                             embedding=None))["record"]["memory"]["id"]
    fast = (await write_record(gql, namespace, "EPISODIC", episode("failure"), embedding=None,
                               salienceHalfLifeDays=20))["record"]["memory"]["id"]
    start = datetime.now(UTC)
    in_60_days = await consolidate(gql, namespace, start + timedelta(days=60))
    assert in_60_days["decayed"] == 2 and in_60_days["pruned"] == []
    salience = (await gql.ok(GET_RECORD, {"ns": namespace, "id": ep}))["record"]["memory"][
        "salience"]
    assert abs(salience - 0.25) < 0.01
    own = (await gql.ok(GET_RECORD, {"ns": namespace, "id": fast}))["record"]["memory"][
        "salience"]
    assert abs(own - 0.125) < 0.01  # its own 20-day half-life
    same_day = await consolidate(gql, namespace, start + timedelta(days=60, hours=1))
    assert same_day["changed"] is False
    later = await consolidate(gql, namespace, start + timedelta(days=200))
    assert sorted(later["pruned"]) == sorted([ep, fast])
    gone = (await gql.ok(GET_RECORD, {"ns": namespace, "id": ep}))["record"]
    assert gone["memory"]["status"] == "FORGOTTEN"


async def test_schedule_consolidates_every_namespace_with_episodes(
    gql: GraphQLClient, namespace: str, session_app: Any
) -> None:
    for _ in range(2):
        await write_record(gql, namespace, "EPISODIC", episode(), embedding=None)
    runtime = runtime_of(session_app[0])
    assert runtime.consolidation is not None
    scheduler = ConsolidationScheduler(runtime.consolidation.consolidator,
                                       interval_hours=0.5 / 3600)
    scheduler.start()
    try:
        for _ in range(100):
            await asyncio.sleep(0.2)
            skills = (await gql.ok(LIST_RECORDS, {"ns": namespace, "types": ["COMPETENCE"]}))[
                "records"]
            if skills:
                break
    finally:
        await scheduler.stop()
    assert len(skills) == 1
    assert skills[0]["memory"]["confidence"] == 0.8


async def test_the_schedule_runs_where_its_lease_is_held(
    gql: GraphQLClient, namespace: str, session_app: Any, graph_client: Any
) -> None:
    """With leases (a server), the schedule runs in the process holding the
    `consolidation` lease; here, the only one asking."""
    from memlattice.graph.leases import LeaseGraph

    for _ in range(2):
        await write_record(gql, namespace, "EPISODIC", episode(), embedding=None)
    runtime = runtime_of(session_app[0])
    assert runtime.consolidation is not None
    scheduler = ConsolidationScheduler(runtime.consolidation.consolidator,
                                       interval_hours=0.5 / 3600,
                                       leases=LeaseGraph(graph_client))
    scheduler.start()
    try:
        for _ in range(300):
            await asyncio.sleep(0.2)
            skills = (await gql.ok(LIST_RECORDS, {"ns": namespace, "types": ["COMPETENCE"]}))[
                "records"]
            if skills:
                break
    finally:
        await scheduler.stop()
    assert len(skills) == 1


async def test_consolidate_needs_write_access(gql: GraphQLClient, namespace: str,
                                              graph_client: Any, session_app: Any) -> None:
    from tests.integration._keys import as_key, make_key

    secret = await make_key(graph_client, namespace, write=False)
    async with as_key(session_app, secret) as reader:
        error = await reader.error(CONSOLIDATE, {"ns": namespace})
    assert code(error) == "FORBIDDEN"


async def test_cli_consolidates_a_namespace(gql: GraphQLClient, namespace: str,
                                            settings: Any) -> None:
    import os
    import subprocess
    import sys

    for _ in range(2):
        await write_record(gql, namespace, "EPISODIC", episode(), embedding=None)
    env = {**os.environ, "NEO4J_URI": settings.neo4j.uri, "NEO4J_USER": settings.neo4j.user,
           "NEO4J_PASSWORD": settings.neo4j.password.get_secret_value()}
    command = [sys.executable, "-m", "memlattice.cli", "consolidate", "--namespace", namespace]
    done = await asyncio.to_thread(subprocess.run, command, env=env, capture_output=True,
                                   text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{namespace}: created {{'competence': 1, 'plan_graph': 1}}" in done.stdout
    again = await asyncio.to_thread(subprocess.run, command, env=env, capture_output=True,
                                    text=True, timeout=300)
    assert f"{namespace}: created nothing, reinforced nothing" in again.stdout
