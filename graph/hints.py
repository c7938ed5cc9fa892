"""Candidates for contradiction hints, and the candidate relationships.

Candidates are active semantic records with the new record's subject and
predicate (a range-index lookup), plus the best fulltext matches of its text
and its nearest neighbours by vector among semantic records and facts;
`memlattice.core.records.hints` decides. Every candidate comes back with its cosine
similarity to the new record's vector, so the pure rules can use it whichever
way the candidate was found.

The vector side searches the space the namespace searches (`HintProbe`): the
primary `memory_embedding` index, or the namespace's active side space, whose
index holds `MemoryVector` nodes. Both filter on namespace inside the index
(`SEARCH ... WHERE`); labels, status, expiry and the writer's clearance follow
right after, so a candidate the writer may not see is never hinted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from neo4j import AsyncManagedTransaction

from memlattice.core.lucene import any_terms
from memlattice.core.model import EdgeType
from memlattice.core.records.hints import Claim, Hint
from memlattice.core.vector_spaces import VectorSpace
from memlattice.graph.client import Query, run
from memlattice.graph.codec import Edge
from memlattice.graph.indexes import VECTOR_INDEX, fenced_lucene
from memlattice.graph.record_codec import Record, normalise
from memlattice.graph.records import Clearance, clearance_condition
from memlattice.graph.revisions import linked
from memlattice.graph.visibility import visible

MAX_TEXT_CANDIDATES = 20
MAX_VECTOR_CANDIDATES = 20
# Nearest neighbours asked of the index before labels and clearance filter them.
VECTOR_OVERFETCH = 50


@dataclass(frozen=True)
class HintProbe:
    """The new record's vector in the space its namespace searches (None: primary)."""

    vector: list[float]
    space: VectorSpace | None = None


def _vector_branch(where: str, space: VectorSpace | None) -> str:
    if space is None:
        return (
            "  UNION\n"
            "  MATCH (m:Memory)\n"
            f"    SEARCH m IN (VECTOR INDEX {VECTOR_INDEX} FOR $vector"
            " WHERE m.namespace = $namespace AND m.status = 'active'"
            " LIMIT $overfetch) SCORE AS score\n"
            f"  WITH m, score WHERE (m:Semantic OR m:Fact) AND {where}\n"
            "  WITH m ORDER BY score DESC, m.id LIMIT $vectorLimit\n"
            "  RETURN m\n"
        )
    # Side-space names come from VectorSpace's hash-suffixed [a-z0-9_] slug only.
    return (
        "  UNION\n"
        "  MATCH (v:MemoryVector)\n"
        f"    SEARCH v IN (VECTOR INDEX `{space.index}` FOR $vector"
        " WHERE v.namespace = $namespace LIMIT $overfetch) SCORE AS score\n"
        "  MATCH (v)-[:EMBEDS]->(m:Memory)\n"
        f"  WITH m, score WHERE (m:Semantic OR m:Fact) AND {where}\n"
        "  WITH m ORDER BY score DESC, m.id LIMIT $vectorLimit\n"
        "  RETURN m\n"
    )


def _similarity(space: VectorSpace | None) -> str:
    """Cosine in [-1, 1] of a candidate's vector to `$vector` (Neo4j reports (1 + cos) / 2)."""
    if space is None:
        vector = "m.embedding"
        guard = "m.embedding IS NOT NULL AND size(m.embedding) = size($vector)"
    else:
        vector = (f"[(m)<-[:EMBEDS]-(sv:MemoryVector {{space: $space}})"
                  f" | sv.`{space.vector_property}`][0]")
        guard = f"{vector} IS NOT NULL"
    return f"CASE WHEN {guard} THEN 2 * vector.similarity.cosine({vector}, $vector) - 1 END"


def candidates(
    *, namespace: str, id: str, subject_key: str | None, predicate_key: str | None,
    lucene: str | None, now: datetime, clearance: Clearance, probe: HintProbe | None = None,
) -> Query:
    cond, params = clearance_condition(clearance)
    where = f"m.id <> $id AND m.status = 'active' AND {visible()} AND {cond}"
    text = (
        "  UNION\n"
        "  CALL db.index.fulltext.queryNodes('memory_fulltext', $lucene, {limit: $limit})"
        " YIELD node AS m\n"
        f"  WITH m WHERE (m:Semantic OR m:Fact) AND {where}\n"
        "  RETURN m\n"
    ) if lucene else ""
    space = probe.space if probe is not None else None
    similar = _vector_branch(where, space) if probe is not None else ""
    similarity = _similarity(space) if probe is not None else "null"
    query = (
        "CYPHER 25\n"
        "CALL () {\n"
        "  MATCH (m:Semantic) WHERE m.namespace = $namespace AND m.subjectKey = $subjectKey\n"
        f"    AND m.predicateKey = $predicateKey AND {where}\n"
        "  RETURN m\n"
        + text
        + similar
        + "}\n"
        "RETURN m.id AS id, m.content AS text, m.subjectKey AS subject,"
        " m.predicateKey AS predicate, m.objectKey AS object,"
        f" {similarity} AS similarity"
    )
    return query, {**params, "namespace": namespace, "id": id, "subjectKey": subject_key,
                   "predicateKey": predicate_key, "now": now, "limit": MAX_TEXT_CANDIDATES,
                   "lucene": fenced_lucene(lucene, namespace, None) if lucene else None,
                   "vector": probe.vector if probe is not None else None,
                   "space": space.key if space is not None else None,
                   "overfetch": VECTOR_OVERFETCH, "vectorLimit": MAX_VECTOR_CANDIDATES}


def claim_of(record: Record) -> Claim:
    props = record.payload
    if record.type == "semantic":
        return Claim(record.memory.id, record.memory.content, normalise(props["subject"]),
                     normalise(props["predicate"]), normalise(props["object"]))
    return Claim(record.memory.id, record.memory.content)


async def find_candidates(
    tx: AsyncManagedTransaction, record: Record, *, now: datetime, clearance: Clearance,
    probe: HintProbe | None = None,
) -> list[Claim]:
    """Candidate claims for `record`'s hints; with `probe`, also its nearest neighbours."""
    claim = claim_of(record)
    rows = await run(tx, candidates(
        namespace=record.memory.namespace, id=record.memory.id, subject_key=claim.subject,
        predicate_key=claim.predicate, lucene=any_terms(record.memory.content), now=now,
        clearance=clearance, probe=probe,
    ))
    return [Claim(r["id"], r["text"], r["subject"], r["predicate"], r["object"],
                  similarity=r["similarity"]) for r in rows]


async def link_hints(
    tx: AsyncManagedTransaction, record: Record, hints: Sequence[Hint], *, now: datetime,
) -> list[Edge]:
    """Candidate SUPPORTS / CONTRADICTS relationships from `record`; returns those created."""
    edges: list[Edge] = []
    for hint in hints:
        edges += await linked(
            tx, namespace=record.memory.namespace, source=record.memory.id,
            target=hint.memory_id, type=EdgeType(hint.kind), now=now,
            metadata={"candidate": True, "reason": hint.reason, "score": hint.score},
        )
    return edges
