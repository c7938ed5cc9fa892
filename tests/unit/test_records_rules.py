"""Pure rules of typed records: payload validation, hints, summaries, fact ids."""

from __future__ import annotations

import pytest

from memlattice.core.errors import ValidationError
from memlattice.core.records.hints import Claim, hints_for, overlap
from memlattice.core.records.payloads import RecordType, check_dag, dump_payload, parse_payload
from memlattice.core.records.summary import extract, first_sentence
from memlattice.core.records.text import describe
from memlattice.graph.facts import fact_id
from memlattice.graph.record_codec import normalise, subgraph_rows


def test_tool_graph_must_be_a_dag_with_known_ids() -> None:
    check_dag([("a", ()), ("b", ("a",)), ("c", ("a", "b"))], "g")
    for nodes, message in (([("a", ("a",))], "cycle"), ([("a", ("x",))], "unknown"),
                           ([("a", ()), ("a", ())], "repeats"),
                           ([("a", ("b",)), ("b", ("c",)), ("c", ("a",))], "cycle")):
        with pytest.raises(ValueError, match=message):
            check_dag(nodes, "g")


def test_payload_errors_name_their_paths() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_payload(RecordType.COMPETENCE, {"skill": "", "steps": [{"tool": "x"}]})
    assert set(caught.value.details["fields"]) == {"payload.skill", "payload.steps.0.step"}
    with pytest.raises(ValidationError):
        parse_payload(RecordType.WORKING, ["not", "an", "object"])
    with pytest.raises(ValidationError, match="timeboxed"):
        parse_payload(RecordType.SEMANTIC, {"subject": "a", "predicate": "b", "object": "c",
                                            "validity": {"kind": "timeboxed"}})


def test_competence_success_rate() -> None:
    payload = parse_payload(RecordType.COMPETENCE, {"skill": "s", "successCount": 3,
                                                    "failureCount": 1})
    assert payload.success_rate == 0.75  # type: ignore[union-attr]
    dumped = dump_payload(payload)
    assert dumped["successRate"] == 0.75
    assert parse_payload(RecordType.COMPETENCE, dumped) == payload  # round-trips


def test_subgraph_rows_follow_the_payload() -> None:
    payload = parse_payload(RecordType.EPISODIC, {
        "outcome": "success", "toolGraph": [{"id": "a", "tool": "x"},
                                            {"id": "b", "tool": "y", "dependsOn": ["a", "a"]}],
        "artifacts": [{"kind": "file", "ref": "f"}, {"kind": "file", "ref": "f"}]})
    rows = subgraph_rows("ns", payload)
    assert [c["callId"] for c in rows["toolCalls"]] == ["a", "b"]
    assert rows["toolDeps"] == [{"source": "b", "target": "a"}]
    assert rows["evidence"] == [{"key": "ns|file|f", "kind": "file", "ref": "f"}]


def test_fact_ids_are_stable_per_namespace_kind_and_normalised_claim() -> None:
    assert fact_id("ns", "k", "The sky is blue.") == fact_id("ns", "k", "  the SKY  is blue ")
    assert fact_id("ns", "k", "a") != fact_id("ns", "other", "a")
    assert fact_id("ns", "k", "a") != fact_id("ns2", "k", "a")
    assert normalise("  A  b. ") == "a b"


def test_hints_contradiction_wins_over_overlap() -> None:
    new = Claim("n", "alice lives in porto", "alice", "lives in", "porto")
    old = [Claim("1", "alice lives in lisbon", "alice", "lives in", "lisbon"),
           Claim("2", "alice lives in porto", "alice", "lives in", "porto"),
           Claim("3", "bob owns a boat"),
           Claim("n", "itself")]
    hints = hints_for(new, old)
    assert [(h.kind, h.memory_id) for h in hints] == [("CONTRADICTS", "1"), ("SUPPORTS", "2")]
    assert overlap("the cat sat", "a cat sat") == 1.0
    assert overlap("", "x") == 0.0


def test_summary_is_bounded_deduplicated_and_extractive() -> None:
    items = [("1", "Deploys need two approvals. Extra detail here."),
             ("2", "deploys need two approvals"),
             ("3", "Backups run nightly!"),
             ("4", "x " * 500)]
    bullets = extract(items, limit=10)
    assert [b.memory_id for b in bullets] == ["1", "3", "4"]
    assert bullets[0].text == "Deploys need two approvals."
    assert len(bullets[2].text) <= 240 and bullets[2].text.endswith("…")
    assert [b.memory_id for b in extract(items, limit=1)] == ["1"]
    assert len(extract(items, limit=10, max_chars=50)) == 2
    assert len(extract(items, limit=10, max_chars=40)) == 1
    assert first_sentence("One. Two.") == "One."


def test_describe_gives_every_record_a_text() -> None:
    semantic = parse_payload(RecordType.SEMANTIC, {
        "subject": "deploy", "predicate": "allowed on", "object": "weekends",
        "validity": {"kind": "conditional", "conditions": ["incident"]}})
    assert describe(semantic) == "deploy allowed on weekends when incident"
    plan = parse_payload(RecordType.PLAN_GRAPH, {"planId": "p", "intent": "ship",
                                                 "nodes": [{"id": "n"}]})
    assert describe(plan) == "Plan p v1: ship"
