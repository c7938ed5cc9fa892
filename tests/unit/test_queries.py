"""Built Cypher: values only as parameters, every read fenced by namespace."""

from __future__ import annotations

from datetime import datetime, timezone

from graph import queries, recall_query
from memlattice.model import Direction, EdgeType, MemoryFilter, Scope, validated
from memlattice.search_config import ExpansionConfig

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
HOSTILE = "x' OR 1=1 //`) DETACH DELETE m"


def _filter() -> MemoryFilter:
    return validated(
        MemoryFilter, namespace="a/b", scope=Scope.SESSION, session_id=HOSTILE, key=HOSTILE,
        tags_any=(HOSTILE,), metadata={HOSTILE: HOSTILE}, source_type=HOSTILE,
    )


def test_user_values_never_appear_in_query_text() -> None:
    built = [
        queries.list_memories(_filter(), now=NOW, first=10, after=(NOW, HOSTILE)),
        recall_query.search(_filter(), now=NOW, vector=[0.1], lucene=HOSTILE, candidates=5,
                       expansion=ExpansionConfig(max_expand=3)),
        queries.get_memory(namespace=HOSTILE, id=HOSTILE, now=NOW),
        queries.list_edges(namespace=HOSTILE, id=HOSTILE, types=list(EdgeType),
                           direction=Direction.BOTH, now=NOW),
        queries.audit_trail(namespace=HOSTILE, id=HOSTILE),
    ]
    for text, params in built:
        assert HOSTILE not in text
        assert text.startswith("CYPHER 25")
        assert "$namespace" in text and "namespace" in params


def test_reads_apply_the_expiry_rule() -> None:
    text, params = queries.get_memory(namespace="n", id="i", now=NOW)
    assert "m.expiresAt IS NULL OR m.expiresAt > $now" in text and params["now"] == NOW


def test_vector_search_filters_inside_the_index() -> None:
    text, _ = recall_query.search(_filter(), now=NOW, vector=[0.1], lucene=None, candidates=5)
    assert "SEARCH m IN (VECTOR INDEX memory_embedding FOR $vector WHERE" in text
    assert "m.scopeKey = $scopeKey" in text
    assert "lexical" not in text and "expanded" not in text


def test_scope_chain_is_filtered_inside_the_index() -> None:
    flt = _filter().model_copy(update={"scope_keys": ("session:s", "user:u", "namespace")})
    text, params = recall_query.search(flt, now=NOW, vector=[0.1], lucene=None, candidates=5)
    assert "AND m.scopeKey IN $scopeKeys LIMIT $candidates" in text
    assert params["scopeKeys"] == ["session:s", "user:u", "namespace"]


def test_edge_types_are_parameters_not_text() -> None:
    text, params = queries.add_edges(
        [{"source": "a", "target": "b", "type": EdgeType.SUPPORTS.value, "edgeId": "e",
          "metadataJson": "{}", "auditId": "x"}], namespace="n", actor="t", now=NOW,
    )
    assert "$(row.type)" in text and params["rows"][0]["type"] == "SUPPORTS"
    assert "SUPPORTS" not in text


def test_vector_index_build_settings_reach_the_migration() -> None:
    from graph.migrations import migrations
    from memlattice.settings import VectorIndexSettings

    (statement,) = [s for m in migrations(384, VectorIndexSettings(hnsw_m=32, search_expansion=2))
                    for s in m.statements if "VECTOR INDEX" in s]
    assert "`vector.dimensions`: 384" in statement
    assert "`vector.hnsw.m`: 32" in statement
    assert "`vector.default_search_expansion_factor`: 2.0" in statement
    assert "WITH [m.namespace, m.status, m.scopeKey, m.scope]" in statement
