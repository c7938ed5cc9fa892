"""The recall query: one Cypher round trip from candidates to conflicts.

Built from the shared pieces of `graph.queries` (visibility, projection,
filter conditions); kept apart because it is the one statement whose shape
depends on the search configuration.
"""

from __future__ import annotations

from datetime import datetime

from memlattice.core.auth import Tenant
from memlattice.core.model import Direction, MemoryFilter
from memlattice.core.search_config import ExpansionConfig
from memlattice.core.vector_spaces import VectorSpace
from memlattice.graph.queries import (
    FULLTEXT_INDEX,
    VECTOR_INDEX,
    Query,
    allowed,
    fenced_lucene,
    filter_conditions,
    owned,
    project_memory,
    project_state,
    state_at,
    tenant_visible,
)

# Every node a path passes through must be the tenant's to see (namespace, clearance,
# scope), or the path itself would reveal the id of a memory it may not see.
_QPP_STEP = {
    Direction.OUT: "((pa)-[r]->(pb) WHERE type(r) IN $expandTypes AND {guard})",
    Direction.IN: "((pa)<-[r]-(pb) WHERE type(r) IN $expandTypes AND {guard})",
    Direction.BOTH: "((pa)-[r]-(pb) WHERE type(r) IN $expandTypes AND {guard})",
}


def search(
    f: MemoryFilter, *, tenant: Tenant, now: datetime, vector: list[float] | None, lucene: str | None,
    candidates: int, expansion: ExpansionConfig | None = None, with_embeddings: bool = False,
    needed: int = 10, space: VectorSpace | None = None, first_try: bool = False,
    context_hops: int = 0, cross_similarity: bool = False,
) -> Query:
    """Recall in one round trip: vector and fulltext candidates, graph neighbours
    of every candidate, and CONTRADICTS neighbours of everything returned.

    Both indexes filter inside the index: the vector side with `SEARCH ... WHERE`
    on the properties the index declares (namespace, status, scope bucket), the
    fulltext side with namespace and scope tokens in the Lucene query. The rest
    of the filter runs right after; when it leaves too few vector candidates, an
    exact scan of the filtered set replaces them.

    With a side vector `space` the vector side searches that space's index over
    `MemoryVector` nodes (namespace and scope filtered inside it) and joins
    each hit to its memory, where the rest of the filter applies.

    A `first_try` (a small pool whose shortfall the caller detects and answers
    with a second, full query: memlattice.search.pool) filters status after the
    vector index instead of in it, unless the query plans an exact scan (then
    the scan's one round trip is worth more). Every term of the index's filter
    costs a pass over the documents it matches, and status matches nearly all
    of a namespace: at 100k memories it added 0.85 ms to each search. Inactive
    memories then take pool slots instead, and too few left is a shortfall.

    With `context_hops`, every candidate row carries the contents of its
    neighbours along NEXT up to that many steps away (`context`: hop and
    content; memlattice.search.lexical.context_fields); with `cross_similarity`,
    lexical rows carry their cosine to `vector` too (`similarity`), so that
    fusion scores every candidate on both signals.
    """
    conds, params = filter_conditions(f)
    # The tenant's clearance and scope limits are never in the vector index's
    # filterable properties, so they always run right after it (in `post`).
    post = " AND ".join([tenant_visible(), *conds])
    as_of = f.as_of is not None
    # A conflict is reported whatever the search's other filters, if the caller may see
    # it. Every row carries its own, read from the node in hand (no second look-up).
    c_conds = " AND ".join([tenant_visible("c"), "c.status = 'active'"]
                           + (["c.scopeKey IN $scopeKeys"] if f.scope_keys is not None else []))

    def conflicts(var: str) -> str:
        return (f"COLLECT {{ MATCH ({var})-[:CONTRADICTS]-(c:Memory) WHERE {c_conds}"
                f" RETURN {project_memory('c')} }}")

    if space is not None:
        params["space"] = space.key

    def side_vector(var: str) -> str:
        assert space is not None
        return (f"[({var})<-[:EMBEDS]-(sv:MemoryVector {{space: $space}})"
                f" | sv.`{space.vector_property}`][0]")

    def shape(var: str) -> str:
        if as_of:
            # The state then (graph.history), with the current vector for MMR.
            vector = (side_vector(var) if space is not None else f"{var}.embedding"
                      ) if with_embeddings else None
            return project_state(var, f"{var}_then", embedding=vector)
        if space is not None and with_embeddings:
            return project_memory(var, embedding_expr=side_vector(var))
        return project_memory(var, embedding=with_embeddings)

    def similarity_to_query(var: str) -> str:
        """The cosine of `var`'s vector (in the searched space) to the query's."""
        if space is not None:
            return f"vector.similarity.cosine({side_vector(var)}, $vector)"
        return (f"CASE WHEN {var}.embedding IS NOT NULL AND size({var}.embedding) = size($vector)"
                f" THEN vector.similarity.cosine({var}.embedding, $vector) END")

    # Context words come from inside the search's scope chain only.
    in_chain = f.scope_keys is not None

    def row(var: str, score: str | None = "score", similarity: str | None = None,
            path: str | None = None) -> str:
        """One candidate as the map every list collects: its projection, element id,
        visible CONTRADICTS neighbours, and what ranking needs of it besides."""
        fields = [f"m: {shape(var)}"]
        if score is not None:
            fields.append(f"score: {score}")
        fields += [f"eid: elementId({var})", f"conflicts: {conflicts(var)}"]
        if similarity is not None:
            fields.append(f"similarity: {similarity}")
        if context_hops > 0:
            fields.append(f"context: {sequence_context(var, context_hops, in_chain)}")
        if path is not None:
            fields.append(f"path: {path}")
        return "{" + ", ".join(fields) + "}"

    def carry(var: str, names: str) -> str:
        return f"{names}, {var}_then" if as_of else names

    def keep(var: str, carry: str, extra: str = "") -> str:
        """Keep the rows whose `var` passes the filter. With `as_of` (never on the
        plain path): the time rules on the node, the clearance on it and on its
        state then, the rest on that state; candidates still come from the
        current indexes."""
        if not as_of:
            return f"WITH {carry} WHERE {post}{extra}\n"
        then = f"{var}_then"
        state_conds = filter_conditions(f, var=var, state=then)[0]
        return (f"WITH {carry} WHERE {tenant_visible(var)} AND {state_conds[0]}{extra}\n"
                + state_at(var, then)
                + f"  WITH * WHERE {' AND '.join([allowed(then), *state_conds[1:]])}\n")

    exact_fallback = _needs_post_filter(f) or tenant.restricted
    in_index = ["m.namespace = $namespace"]
    if not (first_try and not exact_fallback):
        in_index.append("m.status IN $statuses")
    # The buckets of memlattice.core.model.MemoryFilter.indexed_scope_keys.
    if f.scope_keys is not None:
        in_index.append("m.scopeKey IN $scopeKeys")
    if f.scope is not None:
        in_index.append("m.scope = $scopeLevel")
    parts: list[str] = []
    lists: list[str] = []
    sized = " AND m.embedding IS NOT NULL AND size(m.embedding) = size($vector)"
    if vector is not None and space is not None:
        # A side space's index knows namespace and bucket only (graph.vector_spaces).
        side_in_index = [c.replace("m.", "v.") for c in in_index
                         if "status" not in c and "scopeLevel" not in c]
        parts.append(
            "CALL () {\n"
            "  MATCH (v:MemoryVector)\n"
            f"    SEARCH v IN (VECTOR INDEX `{space.index}` FOR $vector"
            f" WHERE {' AND '.join(side_in_index)} LIMIT $candidates) SCORE AS score\n"
            "  MATCH (v)-[:EMBEDS]->(m:Memory)\n"
            f"  {keep('m', 'm, score')}"
            f"  RETURN collect({row('m')}) AS approximate\n}}"
        )
        # Status lives on the memory, so some filtering always follows the index.
        parts.append(
            "CALL (approximate) {\n"
            "  WITH approximate WHERE size(approximate) < $needed\n"
            + (f"  MATCH (m:Memory) WHERE {post}\n" if not as_of
               else f"  MATCH (m:Memory)\n  {keep('m', 'm')}")
            + "  MATCH (m)<-[:EMBEDS]-(v:MemoryVector {space: $space})\n"
            f"  WITH {carry('m', 'm')},"
            f" vector.similarity.cosine(v.`{space.vector_property}`, $vector) AS score\n"
            "  ORDER BY score DESC, m.id LIMIT $candidates\n"
            f"  RETURN collect({row('m')}) AS exact\n}}\n"
            "WITH CASE WHEN size(exact) > 0 THEN exact ELSE approximate END AS semantic"
        )
        lists.append("semantic")
        params["vector"] = vector
    elif vector is not None:
        parts.append(
            "CALL () {\n"
            "  MATCH (m:Memory)\n"
            f"    SEARCH m IN (VECTOR INDEX {VECTOR_INDEX} FOR $vector"
            f" WHERE {' AND '.join(in_index)} LIMIT $candidates) SCORE AS score\n"
            f"  {keep('m', 'm, score')}"
            f"  RETURN collect({row('m')}) AS approximate\n}}"
        )
        if exact_fallback:
            # Filters the index cannot apply ran after it: when they left fewer than
            # `$needed` of a full pool, better matches may lie beyond the pool, so
            # plan an exact scan of the filtered set instead (still one round trip).
            parts.append(
                "CALL (approximate) {\n"
                "  WITH approximate WHERE size(approximate) < $needed\n"
                + (f"  MATCH (m:Memory) WHERE {post} AND m.embedding IS NOT NULL\n"
                   "    AND size(m.embedding) = size($vector)\n" if not as_of
                   else f"  MATCH (m:Memory)\n  {keep('m', 'm', sized)}")
                + f"  WITH {carry('m', 'm')}, vector.similarity.cosine(m.embedding, $vector)"
                " AS score\n"
                "  ORDER BY score DESC, m.id LIMIT $candidates\n"
                f"  RETURN collect({row('m')}) AS exact\n}}\n"
                "WITH CASE WHEN size(exact) > 0 THEN exact ELSE approximate END AS semantic"
            )
        else:
            parts.append("WITH approximate AS semantic")
        lists.append("semantic")
        params["vector"] = vector
    if lucene is not None:
        lexical_similarity = (similarity_to_query("m") if cross_similarity and vector is not None
                              else None)
        parts.append(
            "CALL () {\n"
            f"  CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', $lucene,"
            " {limit: $ftLimit}) YIELD node AS m, score\n"
            f"  {keep('m', 'm, score')}"
            f"  WITH {carry('m', 'm, score')} LIMIT $candidates\n"
            f"  RETURN collect({row('m', similarity=lexical_similarity)}) AS lexical\n}}"
        )
        lists.append("lexical")
        params["lucene"] = fenced_lucene(lucene, tenant.namespace, f.scope_keys)
        params["ftLimit"] = candidates * 4
    # Element ids: the later steps find these nodes again without an index seek.
    candidate_ids = [f"[x IN {name} | x.eid]" for name in lists]
    returns = list(lists)
    if context_hops > 0 and lists and not as_of:
        # The turns right before and after each candidate are candidates too: the
        # answer to a question is often the turn after the one that names its words.
        adjacent = row("m", score=None,
                       similarity=similarity_to_query("m") if vector is not None else None)
        parts.append(
            f"CALL ({', '.join(lists)}) {{\n"
            f"  UNWIND {' + '.join(candidate_ids)} AS seedEid\n"
            "  WITH DISTINCT seedEid\n"
            "  MATCH (s) WHERE elementId(s) = seedEid\n"
            "  MATCH (s)-[:NEXT]-(m:Memory)\n"
            f"  WITH DISTINCT m WHERE {post}\n"
            f"  RETURN collect({adjacent}) AS adjacent\n}}"
        )
        returns.append("adjacent")
    if expansion is not None:
        n_conds = " AND ".join([tenant_visible("n"), *filter_conditions(f, var="n")[0]])
        guard = f"{owned('pa')} AND {owned('pb')}"
        if f.scope_keys is not None:
            # A path through a memory outside the search's scope chain would name it.
            guard += " AND pa.scopeKey IN $scopeKeys AND pb.scopeKey IN $scopeKeys"
        step = _QPP_STEP[expansion.direction].format(guard=guard)
        path = ("[rel IN relationships(p) | {type: type(rel), source: startNode(rel).id,"
                " target: endNode(rel).id}]")
        reached = row("n", score=None, path=path,
                      similarity=similarity_to_query("n") if vector is not None else "null")
        parts.append(
            f"CALL ({', '.join(lists)}) {{\n"
            f"  UNWIND {' + '.join(candidate_ids)} AS seedEid\n"
            "  WITH DISTINCT seedEid\n"
            "  MATCH (s) WHERE elementId(s) = seedEid\n"
            "  CALL (s) {\n"
            f"    MATCH p = (s){step}{{1,{int(expansion.depth)}}}(n:Memory)\n"
            + (f"    WHERE n <> s AND {n_conds}\n" if not as_of
               else f"    WHERE n <> s\n    {keep('n', 'p, n')}")
            + f"    WITH {carry('n', 'p, n')} ORDER BY length(p), n.id LIMIT $perSeed\n"
            f"    RETURN collect({reached}) AS reached\n"
            "  }\n"
            "  RETURN collect({seed: s.id, reached: reached}) AS expanded\n}"
        )
        returns.append("expanded")
        params["expandTypes"] = [t.value for t in expansion.types]
        params["perSeed"] = expansion.per_seed
    query = "CYPHER 25\n" + "\n".join(parts) + "\nRETURN " + ", ".join(returns)
    params.update(**tenant.params(), now=now, candidates=candidates, needed=needed)
    return query, params


def sequence_context(var: str, hops: int, in_chain: bool = False) -> str:
    """The contents of `var`'s neighbours along NEXT up to `hops` steps either way,
    each with its distance; every node on the way must be the tenant's to see, and
    a forgotten memory's words no longer count, and with `in_chain` the search's
    scope chain bounds the walk (another user's turns lend no words):

        COLLECT { MATCH cp = (m) ((ca)-[:NEXT]-(cb) WHERE <cb owned, not forgotten>){1,3}
                  (ctx:Memory)
                  RETURN {hop: length(cp), content: ctx.content} }
    """
    guard = f"{owned('cb')} AND cb.status IN ['active', 'superseded']"
    if in_chain:
        guard += " AND cb.scopeKey IN $scopeKeys"
    return (f"COLLECT {{ MATCH cp = ({var}) ((ca)-[:NEXT]-(cb) WHERE {guard}){{1,{int(hops)}}}"
            " (ctx:Memory) RETURN {hop: length(cp), content: ctx.content} }")


def _needs_post_filter(f: MemoryFilter) -> bool:
    """Whether the filter has conditions the vector index cannot apply itself."""
    return bool(
        f.key is not None or f.tags_any or f.tags_all or f.metadata or f.source_type is not None
        or f.created_after is not None or f.created_before is not None or f.memory_types
        or f.min_confidence is not None or f.as_of is not None
        or any(getattr(f, name) is not None
               for name in ("agent_id", "user_id", "session_id", "task_id"))
    )
