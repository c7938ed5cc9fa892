"""Revisions: supersede, fork, contest, retract, merge; audited; exactly one winner in races."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.conftest import GraphQLClient
from tests.integration._knowledge import (
    CONTEST,
    FORK,
    GET_RECORD,
    MERGE,
    RETRACT,
    SUPERSEDE_RECORD,
    record,
    spo,
    write_record,
)
from tests.integration._support import AUDIT, EDGES, code, count_memories

RACERS = 8


async def semantic(gql: GraphQLClient, namespace: str, s: str, p: str, o: str,
                   **fields: Any) -> dict[str, Any]:
    written: dict[str, Any] = (await write_record(gql, namespace, "SEMANTIC", spo(s, p, o),
                                                  **fields))["record"]
    return written


async def operations(gql: GraphQLClient, namespace: str, id: str) -> list[str]:
    trail = (await gql.ok(AUDIT, {"ns": namespace, "id": id}))["auditTrail"]
    return [a["operation"] for a in trail]


async def test_concurrent_retracts_have_exactly_one_winner(
    gql: GraphQLClient, namespace: str
) -> None:
    target = await semantic(gql, namespace, "build", "uses", "make")
    rid = target["memory"]["id"]
    results = await asyncio.gather(*(gql.raw(RETRACT, {"ns": namespace, "id": rid})
                                     for _ in range(RACERS)))
    winners = [r for r in results if not r.get("errors")]
    losers = [r["errors"][0] for r in results if r.get("errors")]
    assert len(winners) == 1 and len(losers) == RACERS - 1
    assert {code(e) for e in losers} == {"CONFLICT"}
    retracted = winners[0]["data"]["retractRecord"]
    assert retracted["memory"]["status"] == "RETRACTED"
    assert retracted["revisionStatus"] == "RETRACTED" and retracted["retractedAt"]
    assert await operations(gql, namespace, rid) == ["write", "retract"]


async def test_concurrent_supersedes_have_exactly_one_winner(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    old = await semantic(gql, namespace, "api", "version", "v1")
    results = await asyncio.gather(*(gql.raw(SUPERSEDE_RECORD, {
        "ns": namespace, "id": old["memory"]["id"],
        "r": record(namespace, "SEMANTIC", spo("api", "version", f"v{i + 2}"))})
        for i in range(RACERS)))
    winners = [r for r in results if not r.get("errors")]
    assert len(winners) == 1
    assert {code(r["errors"][0]) for r in results if r.get("errors")} == {"CONFLICT"}
    assert await count_memories(graph_client, namespace) == 2  # losers wrote nothing


async def test_concurrent_merges_over_shared_records_have_exactly_one_winner(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    a = await semantic(gql, namespace, "cache", "ttl", "60s")
    b = await semantic(gql, namespace, "cache", "ttl seconds", "60")
    c = await semantic(gql, namespace, "cache", "expiry", "one minute")
    ids = [a["memory"]["id"], b["memory"]["id"], c["memory"]["id"]]
    results = await asyncio.gather(*(gql.raw(MERGE, {
        "ns": namespace, "ids": ids if i % 2 else list(reversed(ids)),
        "r": record(namespace, "SEMANTIC", spo("cache", "ttl", f"60 seconds #{i}"))})
        for i in range(RACERS)))
    winners = [r["data"]["mergeRecords"] for r in results if not r.get("errors")]
    assert len(winners) == 1
    assert {code(r["errors"][0]) for r in results if r.get("errors")} == {"CONFLICT"}
    merged = winners[0]
    new_id = merged["record"]["memory"]["id"]
    assert sorted(p["memory"]["id"] for p in merged["previous"]) == sorted(ids)
    assert {p["memory"]["status"] for p in merged["previous"]} == {"SUPERSEDED"}
    assert {p["memory"]["supersededBy"] for p in merged["previous"]} == {new_id}
    derived = (await gql.ok(EDGES, {"ns": namespace, "id": new_id, "types": ["DERIVED"],
                                    "direction": "OUT"}))["edges"]
    assert sorted(e["targetId"] for e in derived) == sorted(ids)
    assert await count_memories(graph_client, namespace) == 4
    assert await operations(gql, namespace, ids[0]) == ["write", "merge"]


async def test_contest_links_and_marks_both(gql: GraphQLClient, namespace: str) -> None:
    a = await semantic(gql, namespace, "db", "is", "postgres")
    b = await semantic(gql, namespace, "database", "engine", "mysql")
    result = (await gql.ok(CONTEST, {"ns": namespace, "id": a["memory"]["id"],
                                     "by": b["memory"]["id"]}))["contestRecord"]
    assert result["record"]["revisionStatus"] == "CONTESTED"
    assert result["previous"][0]["revisionStatus"] == "CONTESTED"
    assert result["record"]["memory"]["status"] == "ACTIVE"
    edges = (await gql.ok(EDGES, {"ns": namespace, "id": a["memory"]["id"],
                                  "types": ["CONTRADICTS"], "direction": "IN"}))["edges"]
    assert [e["sourceId"] for e in edges] == [b["memory"]["id"]]
    # Concurrent contests of the same pair leave one relationship.
    await asyncio.gather(*(gql.ok(CONTEST, {"ns": namespace, "id": a["memory"]["id"],
                                            "by": b["memory"]["id"]}) for _ in range(4)))
    edges = (await gql.ok(EDGES, {"ns": namespace, "id": a["memory"]["id"],
                                  "types": ["CONTRADICTS"], "direction": "IN"}))["edges"]
    assert len(edges) == 1
    assert (await operations(gql, namespace, a["memory"]["id"]))[:2] == ["write", "contest"]


async def test_fork_needs_conditions_and_keeps_both(gql: GraphQLClient,
                                                    namespace: str) -> None:
    base = await semantic(gql, namespace, "deploy", "window", "weekdays")
    plain = await gql.error(FORK, {"ns": namespace, "id": base["memory"]["id"],
                                   "r": record(namespace, "SEMANTIC",
                                               spo("deploy", "window", "weekends"))})
    assert code(plain) == "VALIDATION"
    wrong_type = await gql.error(FORK, {"ns": namespace, "id": base["memory"]["id"],
                                        "r": record(namespace, "COMPETENCE", {"skill": "x"})})
    assert code(wrong_type) == "CONFLICT"
    forked = (await gql.ok(FORK, {"ns": namespace, "id": base["memory"]["id"], "r": record(
        namespace, "SEMANTIC", spo("deploy", "window", "weekends",
                                   validity={"kind": "conditional",
                                             "conditions": ["during incidents"]}))}))[
        "forkRecord"]
    assert forked["record"]["payload"]["validity"]["conditions"] == ["during incidents"]
    assert forked["previous"][0]["memory"]["status"] == "ACTIVE"
    edges = (await gql.ok(EDGES, {"ns": namespace, "id": forked["record"]["memory"]["id"],
                                  "types": ["DERIVED"], "direction": "OUT"}))["edges"]
    assert [e["targetId"] for e in edges] == [base["memory"]["id"]]
    assert edges[0]["metadata"] == {"revision": "fork"}


async def test_revisions_of_unknown_or_retired_records(gql: GraphQLClient,
                                                       namespace: str) -> None:
    missing = await gql.error(RETRACT, {"ns": namespace, "id": "nope"})
    assert code(missing) == "NOT_FOUND"
    a = await semantic(gql, namespace, "x", "y", "z")
    await gql.ok(RETRACT, {"ns": namespace, "id": a["memory"]["id"]})
    again = await gql.error(MERGE, {"ns": namespace, "ids": [a["memory"]["id"], "nope"],
                                    "r": record(namespace, "SEMANTIC", spo("x", "y", "w"))})
    assert code(again) in {"NOT_FOUND", "CONFLICT"}
    kept = (await gql.ok(GET_RECORD, {"ns": namespace, "id": a["memory"]["id"]}))["record"]
    assert kept["memory"]["status"] == "RETRACTED"


async def test_concurrent_forks_each_make_their_own_branch(gql: GraphQLClient,
                                                           namespace: str) -> None:
    base = await semantic(gql, namespace, "deploy", "window", "weekdays")
    results = await asyncio.gather(*(gql.ok(FORK, {
        "ns": namespace, "id": base["memory"]["id"], "r": record(
            namespace, "SEMANTIC", spo("deploy", "window", f"slot {i}", validity={
                "kind": "conditional", "conditions": [f"region {i}"]}))})
        for i in range(RACERS)))
    branches = {r["forkRecord"]["record"]["memory"]["id"] for r in results}
    assert len(branches) == RACERS
    edges = (await gql.ok(EDGES, {"ns": namespace, "id": base["memory"]["id"],
                                  "types": ["DERIVED"], "direction": "IN"}))["edges"]
    assert {e["sourceId"] for e in edges} == branches
    assert (await operations(gql, namespace, base["memory"]["id"])).count("fork") == RACERS
