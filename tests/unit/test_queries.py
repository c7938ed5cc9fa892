"""Built Cypher: values only as parameters, every read fenced by namespace."""

from __future__ import annotations

from datetime import UTC, datetime

from memlattice.core.auth import Principal, Tenant
from memlattice.core.model import Direction, EdgeType, MemoryFilter, Scope, Sensitivity, validated
from memlattice.core.search_config import ExpansionConfig
from memlattice.graph import audit_queries, edge_queries, queries, recall_query
from memlattice.graph.cursors import Window

NOW = datetime(2026, 1, 1, tzinfo=UTC)
HOSTILE = "x' OR 1=1 //`) DETACH DELETE m"
HOSTILE_NS = "x' OR 1=1 `) DETACH DELETE m"  # a valid namespace, all the same


def _tenant(namespace: str = "a/b") -> Tenant:
    return Principal.development().tenant(namespace, write=True)


def _filter() -> MemoryFilter:
    return validated(
        MemoryFilter, namespace="a/b", scope=Scope.SESSION, session_id=HOSTILE, key=HOSTILE,
        tags_any=(HOSTILE,), metadata={HOSTILE: HOSTILE}, source_type=HOSTILE,
    )


def test_user_values_never_appear_in_query_text() -> None:
    built = [
        queries.list_memories(_filter(), tenant=_tenant(), now=NOW, window=Window(
                              10, after=(NOW, HOSTILE), before=(NOW, HOSTILE))),
        recall_query.search(_filter(), tenant=_tenant(), now=NOW, vector=[0.1], lucene=HOSTILE,
                            candidates=5, expansion=ExpansionConfig(max_expand=3)),
        queries.get_memory(tenant=_tenant(HOSTILE_NS), id=HOSTILE, now=NOW),
        edge_queries.list_edges(tenant=_tenant(HOSTILE_NS), id=HOSTILE, types=list(EdgeType),
                           direction=Direction.BOTH, now=NOW),
        audit_queries.audit_trail(tenant=_tenant(HOSTILE_NS), id=HOSTILE),
    ]
    for text, params in built:
        assert HOSTILE not in text and HOSTILE_NS not in text
        assert text.startswith("CYPHER 25")
        assert "$namespace" in text and "namespace" in params


def test_reads_apply_the_expiry_rule() -> None:
    text, params = queries.get_memory(tenant=_tenant("n"), id="i", now=NOW)
    assert "m.expiresAt IS NULL OR m.expiresAt > $now" in text and params["now"] == NOW


def test_vector_search_filters_inside_the_index() -> None:
    text, _ = recall_query.search(_filter(), tenant=_tenant(), now=NOW, vector=[0.1],
                                  lucene=None, candidates=5)
    assert "SEARCH m IN (VECTOR INDEX memory_embedding FOR $vector WHERE" in text
    assert "m.scope = $scopeLevel" in text
    assert "lexical" not in text and "expanded" not in text


def test_scope_chain_is_filtered_inside_the_index() -> None:
    flt = _filter().model_copy(update={"scope_keys": ("session:s", "user:u", "namespace")})
    text, params = recall_query.search(flt, tenant=_tenant(), now=NOW, vector=[0.1],
                                       lucene=None, candidates=5)
    assert "AND m.scopeKey IN $scopeKeys AND m.scope = $scopeLevel LIMIT $candidates" in text
    assert params["scopeKeys"] == ["session:s", "user:u", "namespace"]


def test_edge_types_are_parameters_not_text() -> None:
    text, params = edge_queries.add_edges(
        [{"source": "a", "target": "b", "type": EdgeType.SUPPORTS.value, "edgeId": "e",
          "metadataJson": "{}", "auditId": "x"}], tenant=_tenant("n"), actor="t", now=NOW,
    )
    assert "$(row.type)" in text and params["rows"][0]["type"] == "SUPPORTS"
    assert "SUPPORTS" not in text


def test_vector_index_build_settings_reach_the_migration() -> None:
    from memlattice.core.settings import VectorIndexSettings
    from memlattice.graph.migrations import migrations

    (statement,) = [s for m in migrations(384, VectorIndexSettings(hnsw_m=32, search_expansion=2))
                    for s in m.statements if "VECTOR INDEX" in s]
    assert "`vector.dimensions`: 384" in statement
    assert "`vector.hnsw.m`: 32" in statement
    assert "`vector.default_search_expansion_factor`: 2.0" in statement
    assert "WITH [m.namespace, m.status, m.scopeKey, m.scope]" in statement


def _limited(clearance: Sensitivity = Sensitivity.MEDIUM, max_scope: Scope = Scope.SESSION
             ) -> Tenant:
    principal = Principal(key_id="k", name="k", namespaces=frozenset({"a/*"}),
                          max_scope=max_scope, clearance=clearance, can_write=False)
    return principal.tenant("a/b", write=False)


def test_every_tenant_read_carries_clearance_and_scope_limits() -> None:
    tenant = _limited()
    built = [
        queries.get_memory(tenant=tenant, id="i", now=NOW),
        queries.get_embeddings(tenant=tenant, ids=["i"]),
        queries.list_memories(_filter(), tenant=tenant, now=NOW, window=Window(10)),
        edge_queries.list_edges(tenant=tenant, id="i", types=list(EdgeType),
                           direction=Direction.BOTH, now=NOW),
        audit_queries.audit_trail(tenant=tenant, id="i"),
        recall_query.search(_filter(), tenant=tenant, now=NOW, vector=[0.1], lucene="x",
                            candidates=5, expansion=ExpansionConfig(max_expand=3)),
    ]
    for text, params in built:
        assert "IN $sensitivities" in text and "$scopes" in text
        assert params["namespace"] == "a/b"
        assert params["sensitivities"] == ["public", "low", "medium"]
        assert params["scopes"] == ["task", "session"]


def test_restricted_tenants_always_plan_the_exact_fallback() -> None:
    """Clearance is not an in-index filter: a starved vector pool must fall back."""
    flt = validated(MemoryFilter, namespace="a/b")
    open_text, _ = recall_query.search(flt, tenant=_tenant(), now=NOW, vector=[0.1],
                                       lucene=None, candidates=5)
    limited_text, _ = recall_query.search(flt, tenant=_limited(), now=NOW, vector=[0.1],
                                          lucene=None, candidates=5)
    assert "AS exact" not in open_text and "AS exact" in limited_text


def test_expansion_paths_only_cross_visible_nodes() -> None:
    text, _ = recall_query.search(_filter(), tenant=_limited(), now=NOW, vector=[0.1],
                                  lucene=None, candidates=5,
                                  expansion=ExpansionConfig(max_expand=3, depth=2))
    assert "pa.namespace = $namespace" in text and "pb.namespace = $namespace" in text
    assert "coalesce(pb.sensitivity, 'low') IN $sensitivities" in text
