"""Version history in the query builders: snapshots before in-place changes, the state
as of T only when asked for, and records rebuilt from a historic payload."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from memlattice.core.auth import Principal
from memlattice.core.model import MemoryFilter, Sensitivity
from memlattice.core.search_config import ExpansionConfig
from memlattice.graph import history, queries, recall_query, records
from memlattice.graph.cursors import Window

NOW = datetime(2026, 1, 1, tzinfo=UTC)
TENANT = Principal.development().tenant("acme/crm", write=True)


def test_every_in_place_change_snapshots_before_it_changes_the_node() -> None:
    built = [
        queries.update_memory(tenant=TENANT, id="x", props={}, actor="a", now=NOW,
                              audit_id="u", details="{}"),
        queries.forget_memories(tenant=TENANT, now=NOW, actor="a", conditions=[], params={},
                                fulltext=None),
        records.replace_payload(namespace="n", id="x", props={}, rows={}, actor="a", now=NOW,
                                audit_id="u", details="{}"),
    ]
    for text, _ in built:
        assert text.startswith("CYPHER 25\n")
        snap = text.index(":HAS_REVISION]")
        assert snap < text.index("m.version = m.version + 1")
        assert "MERGE (rev:MemoryRevision {memoryId: m.id, version: m.version})" in text
        for left_out in ("id: null", "embedding: null", "nsToken: null"):
            assert left_out in text
    text, _ = queries.supersede_memory(tenant=TENANT, id="x", props={}, edge_id="e",
                                       actor="a", now=NOW, audit_ids=("1", "2"))
    assert text.index("memoryId: old.id") < text.index("SET old.status")


def test_deleting_a_memory_deletes_its_revisions() -> None:
    text, _ = queries.delete_memory(tenant=TENANT, id="x", actor="a", now=NOW, audit_id="u")
    assert "(m)-[:HAS_REVISION]->(r:MemoryRevision) DETACH DELETE r" in text


def test_reads_look_at_revisions_only_with_as_of() -> None:
    plain = MemoryFilter(namespace="acme/crm", tags_any=("t",))
    then = plain.model_copy(update={"as_of": NOW})
    expansion = ExpansionConfig(max_expand=3)
    for flt, expected in ((plain, False), (then, True)):
        built = [
            queries.list_memories(flt, tenant=TENANT, now=NOW, window=Window(5)),
            recall_query.search(flt, tenant=TENANT, now=NOW, vector=[1.0, 0.0], lucene="t",
                                candidates=10, expansion=expansion, with_embeddings=True),
        ]
        for text, params in built:
            assert ("HAS_REVISION" in text) is expected
            if expected:
                # Filters test the state then; the clearance both then and now.
                assert "any(t IN m_then.tags WHERE t IN $tagsAny)" in text
                assert "coalesce(m_then.sensitivity, 'low') IN $sensitivities" in text
                assert params["asOf"] == NOW
    assert "HAS_REVISION" not in queries.get_memory(tenant=TENANT, id="x", now=NOW)[0]
    text, params = queries.get_memory(tenant=TENANT, id="x", now=NOW, as_of=NOW)
    assert "HAS_REVISION" in text and params["asOf"] == NOW
    assert "HAS_REVISION" not in records.get_record(namespace="n", id="x", now=NOW,
                                                    as_of=None, clearance=None)[0]


def test_history_withholds_revisions_above_clearance_and_of_forgotten_memories() -> None:
    reader = Principal.development().tenant("acme/crm", write=False)
    text, params = history.memory_history(tenant=reader, id="x", now=NOW, limit=10)
    assert "CASE WHEN m.status <> 'forgotten' AND coalesce(r.sensitivity, 'low')" in text
    assert params["limit"] == 10 and params["sensitivities"] == reader.sensitivities
    assert Sensitivity.HYPER.value in params["sensitivities"]


def test_a_historic_plan_graph_is_rebuilt_from_its_payload() -> None:
    plan = {"planId": "p", "version": 1, "intent": "deploy",
            "nodes": [{"id": "a", "kind": "tool", "label": "build"},
                      {"id": "b", "kind": "tool", "label": "test"}],
            "edges": [{"source": "a", "target": "b", "kind": "data"}]}
    props = {"id": "x", "namespace": "n", "content": "c", "status": "active", "version": 1,
             "createdAt": 0, "updatedAt": 0, "memoryType": "plan_graph",
             "payloadJson": json.dumps(plan)}
    row = {"m": props, "calls": [], "nodes": [{"nodeId": "z", "kind": "tool",
                                               "argsJson": "{}"}],
           "edges": [], "evidence": [], "historic": True, "currentPayload": "{}"}
    record = history.record_from_state(row)
    assert [n.node_id for n in record.plan_nodes] == ["a", "b"]
    assert [(e.source, e.target, e.kind) for e in record.plan_edges] == [("a", "b", "data")]
    # The current state, or a historic one with the current payload, keeps the row's graph.
    for current in ({**row, "historic": False},
                    {**row, "currentPayload": props["payloadJson"]}):
        assert [n.node_id for n in history.record_from_state(current).plan_nodes] == ["z"]
