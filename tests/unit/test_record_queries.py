"""The knowledge query builders: Cypher 25, values only as parameters, tenant bounds."""

from __future__ import annotations

from datetime import UTC, datetime

from memlattice.core.model import EdgeType, Scope, Sensitivity, Status
from memlattice.graph import consolidation, facts, hints, records, revisions

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SNEAKY = "x' OR 1=1 //"


def test_every_builder_pins_cypher_25_and_keeps_values_out_of_the_text() -> None:
    built = [
        records.get_record(namespace=SNEAKY, id=SNEAKY, now=NOW, as_of=None, clearance=None),
        records.list_records(namespace=SNEAKY, types=["semantic"], statuses=["active"],
                             now=NOW, as_of=NOW, clearance=None, limit=5, tags=[SNEAKY],
                             lucene=SNEAKY),
        records.discard_task(namespace=SNEAKY, task_id=SNEAKY, actor=SNEAKY, now=NOW,
                             clearance=None),
        facts.by_evidence(namespace=SNEAKY, ref=SNEAKY, kind=SNEAKY, now=NOW, clearance=None,
                          include_inactive=False),
        facts.invalidate_facts(namespace=SNEAKY, predicate=facts.InvalidatePredicate(
            claim=SNEAKY, evidence_ref=SNEAKY), actor=SNEAKY, now=NOW, clearance=None),
        facts.fact_head(namespace=SNEAKY, base=SNEAKY, clearance=None),
        facts.reinforce_fact(namespace=SNEAKY, id=SNEAKY, confidence=0.5, expires_at=None,
                             evidence=[], actor=SNEAKY, now=NOW, clearance=None),
        facts.records_by_ids(namespace=SNEAKY, ids=[SNEAKY], now=NOW, clearance=None),
        revisions.retire(namespace=SNEAKY, ids=[SNEAKY], status=Status.RETRACTED, by=None,
                         actor=SNEAKY, now=NOW, operation="retract", details={"r": SNEAKY}),
        revisions.link(namespace=SNEAKY, source=SNEAKY, target=SNEAKY,
                       type=EdgeType.CONTRADICTS, metadata={"r": SNEAKY}, now=NOW),
        hints.candidates(namespace=SNEAKY, id=SNEAKY, subject_key=SNEAKY,
                         predicate_key=SNEAKY, lucene="words", now=NOW, clearance=None),
        consolidation.prune(namespace=SNEAKY, now=NOW, below=0.1, min_age_days=1,
                            actor=SNEAKY),
    ]
    for text, params in built:
        assert text.startswith("CYPHER 25\n")
        assert SNEAKY not in text
        assert "$namespace" in text and params["namespace"] == SNEAKY


def test_as_of_replaces_the_status_filter_with_belief_at_that_time() -> None:
    text, params = records.list_records(namespace="ns", types=[], statuses=["active"],
                                        now=NOW, as_of=NOW, clearance=None, limit=5)
    assert "m.status IN $statuses" not in text
    for prop in ("supersededAt", "retractedAt", "forgottenAt", "expiresAt"):
        assert f"m.{prop} > $asOf" in text
    assert params["asOf"] == NOW


def test_fact_builders_apply_the_tenants_visibility() -> None:
    from memlattice.core.auth import Principal

    tenant = Principal(key_id="k", name="k", namespaces=None, max_scope=Scope.SESSION,
                       clearance=Sensitivity.LOW, can_write=True).tenant("ns", write=True)
    built = [
        facts.fact_head(namespace="ns", base="fact-x", clearance=tenant),
        facts.reinforce_fact(namespace="ns", id="fact-x", confidence=0.5, expires_at=None,
                             evidence=[], actor="a", now=NOW, clearance=tenant),
        facts.invalidate_facts(namespace="ns", predicate=facts.InvalidatePredicate(kind="k"),
                               actor="a", now=NOW, clearance=tenant),
        facts.records_by_ids(namespace="ns", ids=["x"], now=NOW, clearance=tenant),
        facts.by_evidence(namespace="ns", ref="r", kind=None, now=NOW, clearance=tenant,
                          include_inactive=False),
    ]
    for text, params in built:
        assert "IN $sensitivities" in text and "$scopes" in text, text
        assert params["sensitivities"] == ["public", "low"]
        assert params["scopes"] == ["task", "session"]


def test_fact_generations_have_deterministic_ids() -> None:
    assert facts.generation_id("fact-abc", 1) == "fact-abc"
    assert facts.generation_id("fact-abc", 3) == "fact-abc-g3"
