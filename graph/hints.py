"""Candidates for contradiction hints, and the candidate relationships.

Candidates are active semantic records with the new record's subject and
predicate (a range-index lookup) plus the best fulltext matches of its text
among semantic records and facts; `memlattice.records.hints` decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from neo4j import AsyncManagedTransaction

from graph.client import run
from graph.queries import fenced_lucene, visible
from graph.record_codec import Record, normalise
from graph.records import Clearance, Query, clearance_condition
from graph.revisions import link
from memlattice.lucene import any_terms
from memlattice.model import EdgeType
from memlattice.records.hints import Claim, Hint

MAX_TEXT_CANDIDATES = 20


def candidates(
    *, namespace: str, id: str, subject_key: str | None, predicate_key: str | None,
    lucene: str | None, now: datetime, clearance: Clearance,
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
    query = (
        "CYPHER 25\n"
        "CALL () {\n"
        "  MATCH (m:Semantic) WHERE m.namespace = $namespace AND m.subjectKey = $subjectKey\n"
        f"    AND m.predicateKey = $predicateKey AND {where}\n"
        "  RETURN m\n"
        + text
        + "}\n"
        "RETURN m.id AS id, m.content AS text, m.subjectKey AS subject,"
        " m.predicateKey AS predicate, m.objectKey AS object"
    )
    return query, {**params, "namespace": namespace, "id": id, "subjectKey": subject_key,
                   "predicateKey": predicate_key, "now": now, "limit": MAX_TEXT_CANDIDATES,
                   "lucene": fenced_lucene(lucene, namespace, None) if lucene else None}


def claim_of(record: Record) -> Claim:
    props = record.payload
    if record.type == "semantic":
        return Claim(record.memory.id, record.memory.content, normalise(props["subject"]),
                     normalise(props["predicate"]), normalise(props["object"]))
    return Claim(record.memory.id, record.memory.content)


async def find_candidates(
    tx: AsyncManagedTransaction, record: Record, *, now: datetime, clearance: Clearance,
) -> list[Claim]:
    claim = claim_of(record)
    rows = await run(tx, candidates(
        namespace=record.memory.namespace, id=record.memory.id, subject_key=claim.subject,
        predicate_key=claim.predicate, lucene=any_terms(record.memory.content), now=now,
        clearance=clearance,
    ))
    return [Claim(r["id"], r["text"], r["subject"], r["predicate"], r["object"]) for r in rows]


async def link_hints(
    tx: AsyncManagedTransaction, record: Record, hints: Sequence[Hint], *, now: datetime,
) -> None:
    for hint in hints:
        await run(tx, link(
            namespace=record.memory.namespace, source=record.memory.id, target=hint.memory_id,
            type=EdgeType(hint.kind), now=now,
            metadata={"candidate": True, "reason": hint.reason, "score": hint.score},
        ))
