"""The recall query's blocks (memlattice.graph.recall_query): what each builds."""

from __future__ import annotations

from datetime import UTC, datetime

from memlattice.core.auth import Principal, Tenant
from memlattice.core.model import MemoryFilter, validated
from memlattice.core.search_config import ExpansionConfig
from memlattice.core.vector_spaces import VectorSpace
from memlattice.graph import recall_query
from memlattice.graph.recall_plan import RecallPlan, sequence_context

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _tenant() -> Tenant:
    return Principal.development().tenant("a/b", write=True)


def _plan(**over: object) -> RecallPlan:
    args: dict[str, object] = {"f": MemoryFilter(namespace="a/b"), "tenant": _tenant(),
                               "now": NOW, "vector": [0.1, 0.2], "lucene": "orchid",
                               "candidates": 50}
    args.update(over)
    return RecallPlan(**args)  # type: ignore[arg-type]


def test_the_blocks_and_what_the_query_returns_follow_the_request() -> None:
    lexical, _ = recall_query.search(MemoryFilter(namespace="a/b"), tenant=_tenant(), now=NOW,
                                     vector=None, lucene="orchid", candidates=50)
    assert "db.index.fulltext.queryNodes" in lexical and "VECTOR INDEX" not in lexical
    assert lexical.rstrip().endswith("RETURN lexical")
    everything, params = recall_query.search(
        MemoryFilter(namespace="a/b"), tenant=_tenant(), now=NOW, vector=[0.1, 0.2],
        lucene="orchid", candidates=50, expansion=ExpansionConfig(max_expand=2),
        context_hops=3, cross_similarity=True)
    assert everything.rstrip().endswith(
        "RETURN semantic, lexical, adjacent, expanded, contextTexts")
    assert params["ftLimit"] == 200 and params["vector"] == [0.1, 0.2]
    assert params["expandTypes"] == ["RELATED", "SUPPORTS", "DERIVED"]


def test_vector_candidates_plan_an_exact_scan_only_when_filters_follow_the_index() -> None:
    plain = recall_query.vector_candidates(_plan())
    assert "AS exact" not in plain and plain.endswith("WITH approximate AS semantic")
    tagged = recall_query.vector_candidates(_plan(f=validated(
        MemoryFilter, namespace="a/b", tags_any=("x",))))
    assert "AS exact" in tagged and "ELSE approximate END AS semantic" in tagged
    # The scan is told only whether the pool is thin, never given the pool: carried
    # into it, the pool was copied onto every scanned row (hundreds of MB a search).
    assert "CALL (thin)" in tagged and "CALL (approximate)" not in tagged
    side = recall_query.side_vector_candidates(_plan(space=VectorSpace("mini", 8)))
    assert "CALL (thin)" in side and "CALL (approximate)" not in side


def test_a_first_try_leaves_status_to_the_filter_after_the_index() -> None:
    assert "m.status IN $indexStatuses" in _plan().in_index()
    assert "m.status IN $indexStatuses" not in _plan(first_try=True).in_index()


def test_leads_admit_superseded_memories_a_confirmed_update_replaced() -> None:
    plain, led = _plan(), _plan(leads=True)
    assert plain.params["indexStatuses"] == ["active"]
    assert "UPDATES" not in plain.post
    assert led.params["indexStatuses"] == ["active", "superseded"]
    assert "m.status = 'superseded' AND EXISTS" in led.post
    assert "{kind: 'update', status: 'confirmed'}" in led.post
    block = recall_query.graph_expansion(led, ["lexical"], ExpansionConfig(max_expand=1))
    assert "n.status = 'superseded' AND EXISTS" in block
    # As of a time every status is searched, each as it was then: no leads.
    then = _plan(leads=True, f=validated(MemoryFilter, namespace="a/b", as_of=NOW))
    assert not then.leads and "UPDATES" not in then.post


def test_a_side_space_searches_its_own_index_and_joins_memories() -> None:
    block = recall_query.side_vector_candidates(_plan(space=VectorSpace("mini", 8)))
    assert "MATCH (v)-[:EMBEDS]->(m:Memory)" in block and "v.namespace = $namespace" in block
    assert "v.status" not in block


def test_rows_carry_similarity_and_context_only_when_asked() -> None:
    bare = recall_query.lexical_candidates(_plan(vector=None))
    assert "similarity:" not in bare and "context:" not in bare
    rich = recall_query.lexical_candidates(_plan(cross_similarity=True, context_hops=2))
    assert "similarity: [e IN [m.embedding] WHERE size(e) = size($vector)" in rich
    assert "[:NEXT]-(cb)" in rich and "{1,2}" in rich


def test_context_and_expansion_stay_inside_a_scope_chain() -> None:
    assert "cb.scopeKey IN $scopeKeys" in sequence_context("m", 3, in_chain=True)
    assert "scopeKey" not in sequence_context("m", 3)
    scoped = _plan(f=validated(MemoryFilter, namespace="a/b", scope_keys=("user:u",)))
    block = recall_query.graph_expansion(scoped, ["lexical"], ExpansionConfig(max_expand=1))
    assert "pa.scopeKey IN $scopeKeys AND pb.scopeKey IN $scopeKeys" in block


def test_adjacent_turns_are_the_candidates_next_neighbours_under_the_filter() -> None:
    plan = _plan(context_hops=3)
    block = recall_query.adjacent_turns(plan, ["semantic", "lexical"])
    assert block.startswith("CALL (semantic, lexical) {")
    assert "MATCH (s)-[:NEXT]-(m:Memory)" in block and plan.post in block


def test_the_lexical_side_names_what_the_vector_side_found_by_id_only() -> None:
    after = recall_query.lexical_candidates(_plan(), after_semantic=True)
    assert after.startswith("CALL (semantic) {")
    assert "CASE WHEN elementId(m) IN seen THEN {eid: elementId(m), score: score, seen: true}" in after
    alone = recall_query.lexical_candidates(_plan(vector=None))
    assert alone.startswith("CALL () {") and "seen" not in alone


def test_rows_name_their_neighbours_and_their_words_come_once() -> None:
    now = _plan(context_hops=2)
    assert now.context_by_id and "eid: elementId(ctx)" in now.row("m")
    then = _plan(context_hops=2, f=validated(MemoryFilter, namespace="a/b", as_of=NOW))
    assert not then.context_by_id and "content: ctx.content" in then.row("m")
    block = recall_query.context_texts(["semantic", "lexical", "expanded"])
    assert block.startswith("CALL (semantic, lexical, expanded) {")
    assert "reduce(acc = [], e IN expanded | acc + e.reached)" in block
    assert "WHERE NOT eid IN known" in block
    text, _ = recall_query.search(
        MemoryFilter(namespace="a/b"), tenant=_tenant(), now=NOW, vector=None,
        lucene="orchid", candidates=50, context_hops=1)
    assert text.rstrip().endswith("RETURN lexical, adjacent, contextTexts")


def test_candidates_carry_only_the_properties_asked_for_and_every_memorys() -> None:
    """`properties` (what ranking and the caller read) narrows every candidate row:
    both indexes' sides, the turns around them and what expansion reaches; the
    CONTRADICTS neighbours and newer states stay whole, and so does a search of the
    past (its rows are states then)."""
    asked = frozenset({"content", "tags", "supersededBy"})
    text, _ = recall_query.search(
        MemoryFilter(namespace="a/b"), tenant=_tenant(), now=NOW, vector=[0.1, 0.2],
        lucene="orchid", candidates=50, expansion=ExpansionConfig(max_expand=2),
        context_hops=2, properties=asked)
    for var in ("m", "n"):
        assert f"{var} {{.id, .namespace, .content, .tags, .status, .version, createdAt:" in text
        assert f"{var}.valueJson" not in text and f".provenanceJson, {var}" not in text
    assert text.count("m {.id, .namespace, .content, .tags, .status, .version,") == 3
    assert ".valueJson" in text  # the conflicts' and newer states' projections
    whole, _ = recall_query.search(
        MemoryFilter(namespace="a/b"), tenant=_tenant(), now=NOW, vector=[0.1, 0.2],
        lucene="orchid", candidates=50, expansion=ExpansionConfig(max_expand=2),
        context_hops=2)
    assert whole.count(".provenanceJson") == text.count(".provenanceJson") + 4
    assert len(whole) > len(text) + 1000
    past, _ = recall_query.search(
        MemoryFilter(namespace="a/b", as_of=NOW), tenant=_tenant(), now=NOW,
        vector=[0.1, 0.2], lucene="orchid", candidates=50, properties=asked)
    assert "m_then {.*" in past and "m {.id, .namespace, .content, .tags," not in past
