"""What one recall query is asked to do, and the row shapes its blocks share.

`RecallPlan` holds a search's inputs and what follows from them (the filter
that runs after the indexes, the in-index filter, whether an exact scan may
replace the vector index's pool), and builds the Cypher fragments every block
of `graph.recall_query` repeats: a candidate row, the projection of a memory
(its state then, for time travel), the filter step after an index.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memlattice.core.auth import Tenant
from memlattice.core.model import MemoryFilter
from memlattice.core.search_config import ExpansionConfig
from memlattice.core.vector_spaces import VectorSpace
from memlattice.graph.entities import entity_keys
from memlattice.graph.memory_filters import filter_conditions
from memlattice.graph.projections import project_memory, project_state
from memlattice.graph.revision_clauses import state_at
from memlattice.graph.updates.queries import newer_states
from memlattice.graph.visibility import allowed, owned, tenant_visible


@dataclass
class RecallPlan:
    f: MemoryFilter
    tenant: Tenant
    now: datetime
    vector: list[float] | None
    lucene: str | None
    candidates: int
    expansion: ExpansionConfig | None = None
    with_embeddings: bool = False
    needed: int = 10
    space: VectorSpace | None = None
    first_try: bool = False
    context_hops: int = 0
    cross_similarity: bool = False
    # Whether rows carry the keys of the entities they are about (graph.entities).
    entities: bool = False
    # Whether superseded memories that a confirmed update replaced are candidates
    # too, whatever the statuses (memory_filters.filter_conditions); not as of a time.
    leads: bool = False
    # The properties a candidate's row carries (graph.projections.project_memory's
    # `only`): what ranking and the caller read; None: all. Not as of a time.
    properties: frozenset[str] | None = None
    params: dict[str, Any] = field(init=False)
    post: str = field(init=False)

    def __post_init__(self) -> None:
        self.leads = self.leads and not self.as_of
        conds, self.params = filter_conditions(self.f, leads=self.leads)
        # The tenant's clearance and scope limits are never in the vector index's
        # filterable properties, so they always run right after it (in `post`).
        self.post = " AND ".join([tenant_visible(), *conds])
        self.params["indexStatuses"] = sorted(
            {*self.params["statuses"], *(["superseded"] if self.leads else [])})
        if self.space is not None:
            self.params["space"] = self.space.key

    @property
    def as_of(self) -> bool:
        return self.f.as_of is not None

    @property
    def exact_fallback(self) -> bool:
        """Whether filters run after the vector index, so that an exact scan of the
        filtered set may have to replace a pool they thinned out."""
        return needs_post_filter(self.f) or self.tenant.restricted

    def in_index(self) -> list[str]:
        """The filter the vector index applies itself (`SEARCH ... WHERE`).

        A `first_try` (memlattice.search.pool) leaves status out unless an exact
        scan is planned: every term costs a pass over the documents it matches,
        and status matches nearly all of a namespace (0.85 ms at 100k memories).
        """
        conds = ["m.namespace = $namespace"]
        if not (self.first_try and not self.exact_fallback):
            conds.append("m.status IN $indexStatuses")
        # The buckets of memlattice.core.model.MemoryFilter.indexed_scope_keys.
        if self.f.scope_keys is not None:
            conds.append("m.scopeKey IN $scopeKeys")
        if self.f.scope is not None:
            conds.append("m.scope = $scopeLevel")
        return conds

    def conflicts(self, var: str) -> str:
        """`var`'s active CONTRADICTS neighbours the caller may see, whatever the
        search's other filters (read from the node in hand: no second look-up)."""
        conds = [tenant_visible("c"), "c.status = 'active'"]
        if self.f.scope_keys is not None:
            conds.append("c.scopeKey IN $scopeKeys")
        return (f"COLLECT {{ MATCH ({var})-[:CONTRADICTS]-(c:Memory) WHERE {' AND '.join(conds)}"
                f" RETURN {project_memory('c')} }}")

    def side_vector(self, var: str) -> str:
        """`var`'s vector in the side space searched."""
        assert self.space is not None
        return (f"[({var})<-[:EMBEDS]-(sv:MemoryVector {{space: $space}})"
                f" | sv.`{self.space.vector_property}`][0]")

    def shape(self, var: str) -> str:
        """A memory's projection (of `properties` only, when named); with `as_of`, its
        state then (graph.history), every property, with the current vector for MMR."""
        if self.as_of:
            vector = ((self.side_vector(var) if self.space is not None else f"{var}.embedding")
                      if self.with_embeddings else None)
            return project_state(var, f"{var}_then", embedding=vector)
        if self.space is not None and self.with_embeddings:
            return project_memory(var, embedding_expr=self.side_vector(var),
                                  only=self.properties)
        return project_memory(var, embedding=self.with_embeddings, only=self.properties)

    def similarity_to_query(self, var: str) -> str:
        """The cosine of `var`'s vector (in the searched space) to the query's."""
        if self.space is not None:
            return f"vector.similarity.cosine({self.side_vector(var)}, $vector)"
        # The vector is read once: each read of the property decodes the whole array,
        # and IS NOT NULL, size() and the cosine read it three times (0.7 ms a
        # 50-row pool at 384 dimensions).
        return (f"[e IN [{var}.embedding] WHERE size(e) = size($vector)"
                f" | vector.similarity.cosine(e, $vector)][0]")

    def row(self, var: str, score: str | None = "score", similarity: str | None = None,
            path: str | None = None) -> str:
        """One candidate as the map every list collects: its projection, element id,
        visible CONTRADICTS neighbours, and what ranking needs of it besides (its
        cosine to the query, the entities it is about, its NEXT neighbours' words)."""
        fields = [f"m: {self.shape(var)}"]
        if score is not None:
            fields.append(f"score: {score}")
        fields += [f"eid: elementId({var})", f"conflicts: {self.conflicts(var)}",
                   f"newer: {newer_states(var, in_chain=self.f.scope_keys is not None)}"]
        if similarity is not None:
            fields.append(f"similarity: {similarity}")
        if self.entities:
            fields.append(f"entities: {entity_keys(var)}")
        if self.context_hops > 0:
            # Context words come from inside the search's scope chain only; the
            # rows name their neighbours, whose words come once (context_texts).
            context = sequence_context(var, self.context_hops, self.f.scope_keys is not None,
                                       by_id=self.context_by_id)
            fields.append(f"context: {context}")
        if path is not None:
            fields.append(f"path: {path}")
        return "{" + ", ".join(fields) + "}"

    @property
    def context_by_id(self) -> bool:
        """Whether rows name their NEXT neighbours by element id and the query sends
        each neighbour's words once (graph.recall_query.context_texts): the turns
        around candidates overlap, so sent with every row the same words came back
        three times over. Searching the past keeps the words in the rows."""
        return not self.as_of

    def carry(self, var: str, names: str) -> str:
        """`names`, plus `var`'s state then when searching the past."""
        return f"{names}, {var}_then" if self.as_of else names

    def keep(self, var: str, carry: str, extra: str = "") -> str:
        """Keep the rows whose `var` passes the filter. With `as_of` (never on the
        plain path): the time rules on the node, the clearance on it and on its
        state then, the rest on that state; candidates still come from the
        current indexes."""
        if not self.as_of:
            return f"WITH {carry} WHERE {self.post}{extra}\n"
        then = f"{var}_then"
        state_conds = filter_conditions(self.f, var=var, state=then)[0]
        return (f"WITH {carry} WHERE {tenant_visible(var)} AND {state_conds[0]}{extra}\n"
                + state_at(var, then)
                + f"  WITH * WHERE {' AND '.join([allowed(then), *state_conds[1:]])}\n")


def sequence_context(var: str, hops: int, in_chain: bool = False, *,
                     by_id: bool = False) -> str:
    """`var`'s neighbours along NEXT up to `hops` steps either way, each with its
    distance and its contents (or, `by_id`, its element id); every node on the way
    must be the tenant's to see, and with `in_chain` the search's scope chain
    bounds the walk (another user's turns lend no words). A forgotten or
    retracted turn lends no words either, but the walk goes on past it: it is
    still a step of the conversation (the distances stay what they were), and
    the turns beyond it still said what they said:

        COLLECT { MATCH cp = (m) ((ca)-[:NEXT]-(cb) WHERE <cb owned>){1,3} (ctx:Memory)
                  WHERE ctx.status IN ['active', 'superseded']
                  RETURN {hop: length(cp), content: ctx.content} }     // or eid: elementId(ctx)
    """
    guard = owned("cb")
    if in_chain:
        guard += " AND cb.scopeKey IN $scopeKeys"
    shown = "eid: elementId(ctx)" if by_id else "content: ctx.content"
    return (f"COLLECT {{ MATCH cp = ({var}) ((ca)-[:NEXT]-(cb) WHERE {guard}){{1,{int(hops)}}}"
            f" (ctx:Memory) WHERE ctx.status IN ['active', 'superseded']"
            f" RETURN {{hop: length(cp), {shown}}} }}")


def needs_post_filter(f: MemoryFilter) -> bool:
    """Whether the filter has conditions the vector index cannot apply itself."""
    return bool(
        f.key is not None or f.tags_any or f.tags_all or f.metadata or f.source_type is not None
        or f.created_after is not None or f.created_before is not None or f.memory_types
        or f.event_after is not None or f.event_before is not None
        or f.min_confidence is not None or f.as_of is not None
        or any(getattr(f, name) is not None
               for name in ("agent_id", "user_id", "session_id", "task_id"))
    )
