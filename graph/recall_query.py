"""The recall query: one Cypher round trip from candidates to conflicts.

`search` assembles it from one builder per CALL block, each of which shows its
Cypher in its docstring (in outline: `<row>` is `RecallPlan.row`, a
candidate's projection, element id, conflicts and, as asked, its cosine to
the query and its NEXT neighbours' contents; `<keep m>` is the filter step
after an index, `RecallPlan.keep`):

    vector candidates        -> semantic      (side space, or the primary index)
    fulltext candidates      -> lexical
    NEXT neighbours          -> adjacent      (of the lexical side, when context is asked for)
    graph expansion          -> expanded      (when expansion is asked for)
    RETURN semantic, lexical, adjacent, expanded

Both indexes filter inside the index: the vector side with `SEARCH ... WHERE`
on the properties the index declares (namespace, status, scope bucket), the
fulltext side with namespace and scope tokens in the Lucene query. The rest of
the filter runs right after; when it leaves too few vector candidates, an
exact scan of the filtered set replaces them.
"""

from __future__ import annotations

from datetime import datetime

from memlattice.core.auth import Tenant
from memlattice.core.model import Direction, MemoryFilter
from memlattice.core.search_config import ExpansionConfig
from memlattice.core.vector_spaces import VectorSpace
from memlattice.graph.client import Query
from memlattice.graph.indexes import FULLTEXT_INDEX, VECTOR_INDEX, fenced_lucene
from memlattice.graph.memory_filters import filter_conditions
from memlattice.graph.recall_plan import RecallPlan
from memlattice.graph.visibility import owned, tenant_visible

# Every node a path passes through must be the tenant's to see (namespace, clearance,
# scope), or the path itself would reveal the id of a memory it may not see.
_QPP_STEP = {
    Direction.OUT: "((pa)-[r]->(pb) WHERE type(r) IN $expandTypes AND {guard})",
    Direction.IN: "((pa)<-[r]-(pb) WHERE type(r) IN $expandTypes AND {guard})",
    Direction.BOTH: "((pa)-[r]-(pb) WHERE type(r) IN $expandTypes AND {guard})",
}
_PATH = ("[rel IN relationships(p) | {type: type(rel), source: startNode(rel).id,"
         " target: endNode(rel).id}]")


# The exact scan runs only when the approximate pool is thin, and is told only that:
# importing the pool itself let the planner carry the whole list (every candidate's
# projection) on each row of the scan, ahead of the `thin` check, in a Distinct
# that held ~290 KB a row, ~580 MB for a namespace of 2000 memories, so a few
# concurrent searches of a key with a clearance filter exhausted Neo4j's
# transaction memory pool (MemoryPoolOutOfMemoryError, UNAVAILABLE "Neo4j is busy").
_THIN = ("WITH approximate, size(approximate) < $needed AS thin\n"
         "CALL (thin) {\n"
         "  WITH thin WHERE thin\n")


def side_vector_candidates(plan: RecallPlan) -> str:
    """A side space's index over `MemoryVector` nodes (it knows namespace and scope
    bucket only: graph.vector_spaces), each hit joined to its memory; status lives
    on the memory, so an exact scan replaces a pool the filter thinned out:

        CALL () { MATCH (v:MemoryVector) SEARCH v IN (VECTOR INDEX `<space>` FOR $vector
                    WHERE v.namespace = $namespace ... LIMIT $candidates) SCORE AS score
                  MATCH (v)-[:EMBEDS]->(m:Memory) <keep m>
                  RETURN collect(<row>) AS approximate }
        WITH approximate, size(approximate) < $needed AS thin
        CALL (thin) { WITH thin WHERE thin
                  MATCH (m:Memory) WHERE <filter> MATCH (m)<-[:EMBEDS]-(v:MemoryVector ...)
                  ORDER BY <cosine> DESC, m.id LIMIT $candidates
                  RETURN collect(<row>) AS exact }
        WITH CASE WHEN size(exact) > 0 THEN exact ELSE approximate END AS semantic
    """
    assert plan.space is not None
    in_index = [c.replace("m.", "v.") for c in plan.in_index()
                if "status" not in c and "scopeLevel" not in c]
    return (
        "CALL () {\n"
        "  MATCH (v:MemoryVector)\n"
        f"    SEARCH v IN (VECTOR INDEX `{plan.space.index}` FOR $vector"
        f" WHERE {' AND '.join(in_index)} LIMIT $candidates) SCORE AS score\n"
        "  MATCH (v)-[:EMBEDS]->(m:Memory)\n"
        f"  {plan.keep('m', 'm, score')}"
        f"  RETURN collect({plan.row('m')}) AS approximate\n}}\n"
        f"{_THIN}"
        + (f"  MATCH (m:Memory) WHERE {plan.post}\n" if not plan.as_of
           else f"  MATCH (m:Memory)\n  {plan.keep('m', 'm')}")
        + "  MATCH (m)<-[:EMBEDS]-(v:MemoryVector {space: $space})\n"
        f"  WITH {plan.carry('m', 'm')},"
        f" vector.similarity.cosine(v.`{plan.space.vector_property}`, $vector) AS score\n"
        "  ORDER BY score DESC, m.id LIMIT $candidates\n"
        f"  RETURN collect({plan.row('m')}) AS exact\n}}\n"
        "WITH CASE WHEN size(exact) > 0 THEN exact ELSE approximate END AS semantic"
    )


def vector_candidates(plan: RecallPlan) -> str:
    """The primary vector index, filtered in the index and right after it; when the
    filters it cannot apply may leave too few, an exact scan of the filtered set
    may replace the pool (still one round trip):

        CALL () { MATCH (m:Memory) SEARCH m IN (VECTOR INDEX memory_embedding FOR $vector
                    WHERE m.namespace = $namespace AND ... LIMIT $candidates) SCORE AS score
                  <keep m> RETURN collect(<row>) AS approximate }
        [WITH approximate, size(approximate) < $needed AS thin
         CALL (thin) { WITH thin WHERE thin
                  MATCH (m:Memory) WHERE <filter> AND m.embedding IS NOT NULL ...
                  ORDER BY <cosine> DESC, m.id LIMIT $candidates
                  RETURN collect(<row>) AS exact }]
        WITH <exact when it found some, else approximate> AS semantic
    """
    block = (
        "CALL () {\n"
        "  MATCH (m:Memory)\n"
        f"    SEARCH m IN (VECTOR INDEX {VECTOR_INDEX} FOR $vector"
        f" WHERE {' AND '.join(plan.in_index())} LIMIT $candidates) SCORE AS score\n"
        f"  {plan.keep('m', 'm, score')}"
        f"  RETURN collect({plan.row('m')}) AS approximate\n}}\n"
    )
    if not plan.exact_fallback:
        return block + "WITH approximate AS semantic"
    sized = " AND m.embedding IS NOT NULL AND size(m.embedding) = size($vector)"
    return block + (
        f"{_THIN}"
        + (f"  MATCH (m:Memory) WHERE {plan.post} AND m.embedding IS NOT NULL\n"
           "    AND size(m.embedding) = size($vector)\n" if not plan.as_of
           else f"  MATCH (m:Memory)\n  {plan.keep('m', 'm', sized)}")
        + f"  WITH {plan.carry('m', 'm')}, vector.similarity.cosine(m.embedding, $vector)"
        " AS score\n"
        "  ORDER BY score DESC, m.id LIMIT $candidates\n"
        f"  RETURN collect({plan.row('m')}) AS exact\n}}\n"
        "WITH CASE WHEN size(exact) > 0 THEN exact ELSE approximate END AS semantic"
    )


def lexical_candidates(plan: RecallPlan, after_semantic: bool = False) -> str:
    """The fulltext index, fenced to the namespace and scope chain by index tokens
    ($lucene), asked for four times the pool since the filter runs after it; with
    `cross_similarity` each row carries its cosine to the query too. With
    `after_semantic`, a memory the vector side found already comes back as its
    element id and fulltext score only (graph.recall_rows joins the two): the
    two indexes share a fifth to a third of their candidates.

        CALL (semantic) { CALL db.index.fulltext.queryNodes('memory_fulltext', $lucene,
                    {limit: $ftLimit}) YIELD node AS m, score
                  <keep m> WITH m, score LIMIT $candidates
                  WITH m, score, [x IN semantic | x.eid] AS seen
                  RETURN collect(CASE WHEN elementId(m) IN seen
                                 THEN {eid: elementId(m), score: score, seen: true}
                                 ELSE <row with similarity> END) AS lexical }
    """
    similarity = (plan.similarity_to_query("m")
                  if plan.cross_similarity and plan.vector is not None else None)
    row = plan.row("m", similarity=similarity)
    if after_semantic:
        seen = "  WITH *, [x IN semantic | x.eid] AS seen\n"
        row = ("CASE WHEN elementId(m) IN seen"
               " THEN {eid: elementId(m), score: score, seen: true}"
               f" ELSE {row} END")
    return (
        f"CALL ({'semantic' if after_semantic else ''}) {{\n"
        f"  CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', $lucene,"
        " {limit: $ftLimit}) YIELD node AS m, score\n"
        f"  {plan.keep('m', 'm, score')}"
        f"  WITH {plan.carry('m', 'm, score')} LIMIT $candidates\n"
        + (seen if after_semantic else "")
        + f"  RETURN collect({row}) AS lexical\n}}"
    )


def _seeds(lists: list[str]) -> str:
    """Each candidate of `lists` once, found again by element id (no index seek)."""
    ids = " + ".join(f"[x IN {name} | x.eid]" for name in lists)
    return (f"  UNWIND {ids} AS seedEid\n"
            "  WITH DISTINCT seedEid\n"
            "  MATCH (s) WHERE elementId(s) = seedEid\n")


def adjacent_turns(plan: RecallPlan, lists: list[str]) -> str:
    """The turns right before and after every lexical candidate, as candidates too:
    the answer to a question is often the turn after the one that names its words
    (the lexical side finds that one; the neighbours of the vector side's
    candidates added nothing measurable and cost a third of the rows). A
    neighbour that is a candidate already is not sent twice:

        CALL (semantic, lexical) { UNWIND <lexical candidates' element ids> AS seedEid
                  MATCH (s) WHERE elementId(s) = seedEid
                  MATCH (s)-[:NEXT]-(m:Memory) WITH DISTINCT m
                  WHERE NOT elementId(m) IN <all candidates' element ids> AND <filter>
                  RETURN collect(<row with similarity>) AS adjacent }
    """
    similarity = plan.similarity_to_query("m") if plan.vector is not None else None
    ids = " + ".join(f"[x IN {name} | x.eid]" for name in lists)
    return (
        f"CALL ({', '.join(lists)}) {{\n"
        f"  WITH {ids} AS candidates\n"
        "  UNWIND [x IN lexical | x.eid] AS seedEid\n"
        "  WITH DISTINCT seedEid, candidates\n"
        "  MATCH (s) WHERE elementId(s) = seedEid\n"
        "  MATCH (s)-[:NEXT]-(m:Memory)\n"
        f"  WITH DISTINCT m, candidates WHERE NOT elementId(m) IN candidates AND {plan.post}\n"
        f"  RETURN collect({plan.row('m', score=None, similarity=similarity)}) AS adjacent\n}}"
    )


def context_texts(lists: list[str]) -> str:
    """The words of every NEXT neighbour the rows name that is not a row itself,
    once each (RecallPlan.context_by_id); expansion's rows name theirs too:

        CALL (semantic, lexical, adjacent, ...) {
          WITH <every row> AS rows, <every row's element id> AS known
          UNWIND rows AS row UNWIND row.context AS near
          WITH DISTINCT near.eid AS eid, known WHERE NOT eid IN known
          MATCH (n) WHERE elementId(n) = eid
          RETURN collect({eid: eid, content: n.content}) AS contextTexts }
    """
    rows = " + ".join(
        "reduce(acc = [], e IN expanded | acc + e.reached)" if name == "expanded" else name
        for name in lists)
    return (
        f"CALL ({', '.join(lists)}) {{\n"
        f"  WITH {rows} AS rows\n"
        "  WITH rows, [x IN rows WHERE x.m IS NOT NULL | x.eid] AS known\n"
        "  UNWIND rows AS row\n"
        "  UNWIND coalesce(row.context, []) AS near\n"
        "  WITH DISTINCT near.eid AS eid, known WHERE NOT eid IN known\n"
        "  MATCH (n) WHERE elementId(n) = eid\n"
        "  RETURN collect({eid: eid, content: n.content}) AS contextTexts\n}"
    )


def graph_expansion(plan: RecallPlan, lists: list[str], config: ExpansionConfig) -> str:
    """Memories reached from every candidate along the chosen relationship types, up
    to `depth` hops, nearest first, `per_seed` per candidate; every node on a path
    must be the tenant's to see and, for a scoped search, inside its scope chain
    (a path through a memory names it):

        CALL (semantic, lexical) { UNWIND <candidates' element ids> AS seedEid ...
          CALL (s) { MATCH p = (s)((pa)-[r]-(pb) WHERE type(r) IN $expandTypes
                       AND <both owned>){1,depth}(n:Memory) WHERE n <> s AND <filter on n>
                     WITH p, n ORDER BY length(p), n.id LIMIT $perSeed
                     RETURN collect(<row with path>) AS reached }
          RETURN collect({seed: s.id, reached: reached}) AS expanded }
    """
    n_conds = " AND ".join([tenant_visible("n"),
                            *filter_conditions(plan.f, var="n", leads=plan.leads)[0]])
    guard = f"{owned('pa')} AND {owned('pb')}"
    if plan.f.scope_keys is not None:
        guard += " AND pa.scopeKey IN $scopeKeys AND pb.scopeKey IN $scopeKeys"
    step = _QPP_STEP[config.direction].format(guard=guard)
    reached = plan.row("n", score=None, path=_PATH, similarity=(
        plan.similarity_to_query("n") if plan.vector is not None else "null"))
    return (
        f"CALL ({', '.join(lists)}) {{\n"
        + _seeds(lists)
        + "  CALL (s) {\n"
        f"    MATCH p = (s){step}{{1,{int(config.depth)}}}(n:Memory)\n"
        + (f"    WHERE n <> s AND {n_conds}\n" if not plan.as_of
           else f"    WHERE n <> s\n    {plan.keep('n', 'p, n')}")
        + f"    WITH {plan.carry('n', 'p, n')} ORDER BY length(p), n.id LIMIT $perSeed\n"
        f"    RETURN collect({reached}) AS reached\n"
        "  }\n"
        "  RETURN collect({seed: s.id, reached: reached}) AS expanded\n}"
    )


def search(
    f: MemoryFilter, *, tenant: Tenant, now: datetime, vector: list[float] | None, lucene: str | None,
    candidates: int, expansion: ExpansionConfig | None = None, with_embeddings: bool = False,
    needed: int = 10, space: VectorSpace | None = None, first_try: bool = False,
    context_hops: int = 0, cross_similarity: bool = False, entities: bool = False,
    leads: bool = False, properties: frozenset[str] | None = None,
) -> Query:
    """Recall in one round trip: vector and fulltext candidates, their NEXT
    neighbours and graph neighbours, and CONTRADICTS neighbours of everything
    returned (see the module docstring for the blocks).

    A `first_try` (a small pool whose shortfall the caller detects and answers
    with a second, full query: memlattice.search.pool) filters status after the
    vector index instead of in it (RecallPlan.in_index). With `context_hops`,
    every row carries the contents of its neighbours along NEXT up to that many
    steps away (memlattice.search.lexical.context_fields) and those neighbours
    are candidates too; with `cross_similarity`, lexical rows carry their cosine
    to `vector`, so that fusion scores every candidate on both signals; with
    `entities`, every row carries the keys of the entities it is about; with
    `leads`, superseded memories a confirmed update replaced are candidates too,
    whatever the filter's statuses (RecallPlan.leads); with `properties`, candidates
    carry those properties only (and the ones every memory has); their CONTRADICTS
    neighbours and newer states still carry every property.
    """
    plan = RecallPlan(f, tenant, now, vector, lucene, candidates, expansion, with_embeddings,
                      needed, space, first_try, context_hops, cross_similarity, entities,
                      leads, properties)
    params = plan.params
    parts: list[str] = []
    lists: list[str] = []
    if vector is not None:
        parts.append(side_vector_candidates(plan) if space is not None
                     else vector_candidates(plan))
        lists.append("semantic")
        params["vector"] = vector
    if lucene is not None:
        parts.append(lexical_candidates(plan, after_semantic=vector is not None))
        lists.append("lexical")
        params["lucene"] = fenced_lucene(lucene, tenant.namespace, f.scope_keys)
        params["ftLimit"] = candidates * 4
    returns = list(lists)
    if context_hops > 0 and "lexical" in lists and not plan.as_of:
        parts.append(adjacent_turns(plan, lists))
        returns.append("adjacent")
    if expansion is not None:
        parts.append(graph_expansion(plan, lists, expansion))
        returns.append("expanded")
        params["expandTypes"] = [t.value for t in expansion.types]
        params["perSeed"] = expansion.per_seed
    if context_hops > 0 and plan.context_by_id:
        parts.append(context_texts(returns))
        returns.append("contextTexts")
    query = "CYPHER 25\n" + "\n".join(parts) + "\nRETURN " + ", ".join(returns)
    params.update(**tenant.params(), now=now, candidates=candidates, needed=needed)
    return query, params
