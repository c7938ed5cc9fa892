"""Facts: stable ids, reinforcement, evidence as shared nodes, recall, invalidation."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from typing import Any

from tests.conftest import GraphQLClient
from tests.integration._knowledge import (
    BY_EVIDENCE,
    GET_RECORD,
    INVALIDATE,
    LIST_RECORDS,
    RECALL_FACTS,
    STORE_FACT,
    fact,
)
from tests.integration._support import AUDIT, EDGES, code, count_memories


async def store(gql: GraphQLClient, namespace: str, kind: str, claim: str,
                **fields: Any) -> dict[str, Any]:
    result: dict[str, Any] = (await gql.ok(STORE_FACT, {"input": fact(
        namespace, kind, claim, **fields)}))["storeFact"]
    return result


async def node(graph_client: Any, id: str) -> str:
    """A fact node's labels and properties, canonical JSON (to show it did not change)."""
    rows = await graph_client.read((
        "MATCH (m:Memory {id: $id}) RETURN labels(m) AS labels, properties(m) AS props",
        {"id": id}))
    return json.dumps([sorted(rows[0]["labels"]), rows[0]["props"]], sort_keys=True,
                      default=str)


def _between(earlier: str, later: str) -> str:
    a, b = datetime.fromisoformat(earlier), datetime.fromisoformat(later)
    return (a + (b - a) / 2).isoformat()


async def test_an_invalidated_claim_stored_again_is_a_new_generation(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    claim, ref = "Releases ship on Tuesdays.", {"kind": "file", "ref": "RELEASING.md"}
    first = await store(gql, namespace, "policy", claim, confidence=0.7, evidence=[ref])
    base = first["fact"]["memory"]["id"]
    inv = (await gql.ok(INVALIDATE, {"ns": namespace, "p": {"claim": claim}}))[
        "invalidateFacts"]
    assert inv["ids"] == [base]
    tombstone = (await gql.ok(GET_RECORD, {"ns": namespace, "id": base, "asOf": None}))
    assert tombstone["record"] is not None  # status RETRACTED, still readable by id
    retracted_at = tombstone["record"]["retractedAt"]
    before = await node(graph_client, base)
    trail = (await gql.ok(AUDIT, {"ns": namespace, "id": base}))["auditTrail"]
    await asyncio.sleep(0.05)

    again = await store(gql, namespace, "policy", "releases ship on TUESDAYS",
                        confidence=0.5, evidence=[{"kind": "file", "ref": "CHANGELOG.md"}])
    assert (again["created"], again["reasserted"]) == (True, True)
    second = again["fact"]["memory"]["id"]
    assert second == base + "-g2"
    assert again["fact"]["memory"]["status"] == "ACTIVE"
    assert again["fact"]["memory"]["version"] == 1
    assert [e["ref"] for e in again["fact"]["evidence"]] == ["CHANGELOG.md"]
    # The tombstone stays exactly as it was, and its history with it.
    assert await node(graph_client, base) == before
    assert (await gql.ok(AUDIT, {"ns": namespace, "id": base}))["auditTrail"] == trail
    edges = (await gql.ok(EDGES, {"ns": namespace, "id": second, "types": ["SUPERSEDES"],
                                  "direction": "OUT"}))["edges"]
    assert [(e["sourceId"], e["targetId"]) for e in edges] == [(second, base)]

    # Storing the claim once more reinforces the current generation.
    third = await store(gql, namespace, "policy", claim, confidence=0.9)
    assert (third["created"], third["reasserted"]) == (False, False)
    assert third["fact"]["memory"]["id"] == second
    assert third["fact"]["memory"]["version"] == 2
    assert third["fact"]["memory"]["confidence"] == 0.9
    assert await count_memories(graph_client, namespace) == 2

    # Recall and evidence show only the current generation.
    hits = (await gql.ok(RECALL_FACTS, {"filter": {"namespace": namespace}}))["recallFacts"]
    assert [h["fact"]["memory"]["id"] for h in hits] == [second]
    assert (await gql.ok(BY_EVIDENCE, {"ns": namespace, "ref": "RELEASING.md"}))[
        "factsByEvidence"] == []
    resting = (await gql.ok(BY_EVIDENCE, {"ns": namespace, "ref": "CHANGELOG.md"}))[
        "factsByEvidence"]
    assert [r["memory"]["id"] for r in resting] == [second]

    # Time travel: before the invalidation the first generation, inside the tombstoned
    # window nothing, after the reassertion the second.
    recorded = again["fact"]["recordedAt"]
    for when, expected in ((first["fact"]["recordedAt"], [base]),
                           (_between(retracted_at, recorded), []),
                           (recorded, [second])):
        listed = (await gql.ok(LIST_RECORDS, {"ns": namespace, "asOf": when}))["records"]
        assert [r["memory"]["id"] for r in listed] == expected, when
        recalled = (await gql.ok(RECALL_FACTS, {"filter": {"namespace": namespace,
                                                           "asOf": when}}))["recallFacts"]
        assert [h["fact"]["memory"]["id"] for h in recalled] == expected, when

    # A second invalidation and reassertion make the third generation.
    await gql.ok(INVALIDATE, {"ns": namespace, "p": {"id": second}})
    fourth = await store(gql, namespace, "policy", claim)
    assert fourth["fact"]["memory"]["id"] == base + "-g3" and fourth["reasserted"] is True
    edges = (await gql.ok(EDGES, {"ns": namespace, "id": base + "-g3",
                                  "types": ["SUPERSEDES"], "direction": "OUT"}))["edges"]
    assert [e["targetId"] for e in edges] == [second]


async def test_concurrent_reassertions_make_one_generation(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    claim = "Only one second generation."
    base = (await store(gql, namespace, "policy", claim))["fact"]["memory"]["id"]
    await gql.ok(INVALIDATE, {"ns": namespace, "p": {"id": base}})
    results = await asyncio.gather(*(
        gql.ok(STORE_FACT, {"input": fact(namespace, "policy", claim)}) for _ in range(6)))
    stored = [r["storeFact"] for r in results]
    assert sum(s["reasserted"] for s in stored) == 1
    assert {s["fact"]["memory"]["id"] for s in stored} == {base + "-g2"}
    assert await count_memories(graph_client, namespace) == 2


async def test_same_claim_is_one_fact_reinforced_not_duplicated(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    first = await store(gql, namespace, "policy", "Deploys need two approvals.",
                        confidence=0.6, evidence=[{"kind": "file", "ref": "README.md:1-3"}])
    assert first["created"] is True
    fid = first["fact"]["memory"]["id"]
    assert fid.startswith("fact-") and first["fact"]["kind"] == "policy"
    again = await store(gql, namespace, "policy", "  deploys need TWO approvals ",
                        confidence=0.9, evidence=[{"kind": "file", "ref": "CONTRIBUTING.md"}])
    assert again["created"] is False
    assert again["fact"]["memory"]["id"] == fid
    assert again["fact"]["memory"]["confidence"] == 0.9
    assert again["fact"]["memory"]["version"] == 2
    assert again["fact"]["memory"]["salience"] > (first["fact"]["memory"]["salience"] or 0.5)
    assert [e["ref"] for e in again["fact"]["evidence"]] == ["CONTRIBUTING.md", "README.md:1-3"]
    assert await count_memories(graph_client, namespace) == 1
    other_kind = await store(gql, namespace, "observation", "Deploys need two approvals.")
    assert other_kind["fact"]["memory"]["id"] != fid
    trail = (await gql.ok(AUDIT, {"ns": namespace, "id": fid}))["auditTrail"]
    assert [a["operation"] for a in trail] == ["write", "reinforce"]


async def test_invalid_facts_fail_with_stable_codes(gql: GraphQLClient, namespace: str,
                                                   graph_client: Any) -> None:
    for bad, field in (({"kind": "Bad Kind"}, "kind"), ({"claim": "   "}, "claim"),
                       ({"confidence": 1.5}, "confidence"),
                       ({"evidence": [{"kind": "", "ref": "x"}]}, "evidence.0.kind")):
        input = {**fact(namespace, "policy", "a claim"), **bad}
        error = await gql.error(STORE_FACT, {"input": input})
        assert code(error) == "VALIDATION", error
        assert field in error["extensions"]["fields"], error
    assert await count_memories(graph_client, namespace) == 0


async def test_evidence_is_shared_and_queryable(gql: GraphQLClient, namespace: str,
                                               graph_client: Any) -> None:
    ref = {"kind": "file", "ref": "README.md:1-3"}
    a = await store(gql, namespace, "doc", "The service speaks GraphQL.", evidence=[ref])
    b = await store(gql, namespace, "doc", "Neo4j stores the memories.", evidence=[ref])
    await store(gql, namespace, "doc", "Unrelated claim about tests.",
                evidence=[{"kind": "file", "ref": "tests/README"}])
    resting = (await gql.ok(BY_EVIDENCE, {"ns": namespace, "ref": "README.md:1-3"}))[
        "factsByEvidence"]
    assert sorted(r["memory"]["id"] for r in resting) == sorted(
        [a["fact"]["memory"]["id"], b["fact"]["memory"]["id"]])
    rows = await graph_client.read((
        ("MATCH (e:Evidence {ref: 'README.md:1-3'}) WHERE e.namespace = $ns"
         " RETURN count(e) AS n, COUNT { (e)<-[:RESTS_ON]-() } AS facts"), {"ns": namespace}))
    assert (rows[0]["n"], rows[0]["facts"]) == (1, 2)
    other = (await gql.ok(BY_EVIDENCE, {"ns": namespace + "x", "ref": "README.md:1-3"}))[
        "factsByEvidence"]
    assert other == []


async def test_recall_facts_scores_filters_and_expires(gql: GraphQLClient,
                                                       namespace: str) -> None:
    await store(gql, namespace, "policy", "Backups run nightly at two.", confidence=0.9,
                evidence=[{"kind": "runbook", "ref": "ops.md"}])
    await store(gql, namespace, "policy", "Backups are kept for thirty days.", confidence=0.4)
    await store(gql, namespace, "trivia", "Backups once ran weekly.", confidence=0.95)
    await store(gql, namespace, "policy", "Backups were on tape.", confidence=0.9,
                validUntil="2020-01-01T00:00:00Z")
    hits = (await gql.ok(RECALL_FACTS, {"filter": {"namespace": namespace},
                                        "query": "backups", "kind": "policy", "min": 0.5}))[
        "recallFacts"]
    assert [h["fact"]["memory"]["content"] for h in hits] == ["Backups run nightly at two."]
    assert hits[0]["score"] > 0 and hits[0]["evidence"] == [{"kind": "runbook",
                                                             "ref": "ops.md"}]
    listed = (await gql.ok(RECALL_FACTS, {"filter": {"namespace": namespace}}))["recallFacts"]
    assert [h["fact"]["memory"]["content"] for h in listed] == [
        "Backups once ran weekly.", "Backups run nightly at two.",
        "Backups are kept for thirty days."]


async def test_invalidate_facts_by_each_predicate(gql: GraphQLClient, namespace: str) -> None:
    f1 = await store(gql, namespace, "policy", "Alpha claim one.", tags=["t1"],
                     evidence=[{"kind": "file", "ref": "a.md"}])
    f2 = await store(gql, namespace, "policy", "Beta claim two.", tags=["t2"])
    f3 = await store(gql, namespace, "note", "Gamma claim three.")
    f4 = await store(gql, namespace, "note", "Delta claim four.")
    ids = {k: f["fact"]["memory"]["id"] for k, f in
           (("f1", f1), ("f2", f2), ("f3", f3), ("f4", f4))}

    async def invalidate(predicate: dict[str, Any]) -> list[str]:
        return list((await gql.ok(INVALIDATE, {"ns": namespace, "p": predicate}))[
            "invalidateFacts"]["ids"])

    assert await invalidate({"evidenceRef": "a.md"}) == [ids["f1"]]
    assert await invalidate({"evidenceRef": "a.md"}) == []  # already a tombstone
    assert await invalidate({"kind": "policy", "tag": "t2"}) == [ids["f2"]]
    assert await invalidate({"claim": "gamma claim THREE"}) == [ids["f3"]]
    assert await invalidate({"query": "delta four"}) == [ids["f4"]]
    error = await gql.error(INVALIDATE, {"ns": namespace, "p": {}})
    assert code(error) == "VALIDATION"
    left = (await gql.ok(RECALL_FACTS, {"filter": {"namespace": namespace}}))["recallFacts"]
    assert left == []
    kept = (await gql.ok(RECALL_FACTS, {"filter": {"namespace": namespace,
                                                   "statuses": ["RETRACTED"]}}))
    assert kept["recallFacts"] == []  # recall never returns tombstones

    before = f4["fact"]["recordedAt"]
    then = (await gql.ok(RECALL_FACTS, {"filter": {"namespace": namespace, "asOf": before}}))
    assert len(then["recallFacts"]) == 4  # all four were believed before the invalidations
    searched = (await gql.ok(RECALL_FACTS, {"filter": {"namespace": namespace, "asOf": before},
                                            "query": "gamma"}))["recallFacts"]
    assert {h["fact"]["memory"]["id"] for h in searched} == set(ids.values())
    assert [h["fact"]["memory"]["status"] for h in searched] == ["ACTIVE"] * 4  # as then
    reasserted = await store(gql, namespace, "policy", "Alpha claim one.")
    assert reasserted["created"] is True and reasserted["reasserted"] is True
    assert reasserted["fact"]["memory"]["status"] == "ACTIVE"
    assert reasserted["fact"]["memory"]["id"] == ids["f1"] + "-g2"


async def test_concurrent_stores_of_one_claim_make_one_fact(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    import asyncio

    results = await asyncio.gather(*(
        gql.ok(STORE_FACT, {"input": fact(namespace, "policy", "Only one fact, please.",
                                          evidence=[{"kind": "run", "ref": f"r{i}"}])})
        for i in range(8)))
    stored = [r["storeFact"] for r in results]
    assert sum(s["created"] for s in stored) == 1
    assert len({s["fact"]["memory"]["id"] for s in stored}) == 1
    assert await count_memories(graph_client, namespace) == 1
    fid = stored[0]["fact"]["memory"]["id"]
    trail = (await gql.ok(AUDIT, {"ns": namespace, "id": fid}))["auditTrail"]
    assert sorted(a["operation"] for a in trail) == ["reinforce"] * 7 + ["write"]
    resting = (await gql.ok(BY_EVIDENCE, {"ns": namespace, "ref": "r5"}))["factsByEvidence"]
    assert [r["memory"]["id"] for r in resting] == [fid]
