"""Typed records and facts: the knowledge operations, defined once (see `_operations`).

Records are memories with a typed `payload` (EPISODIC, WORKING, SEMANTIC,
COMPETENCE, PLAN_GRAPH) and a revision history; facts are claims of a `kind`,
reinforced when stored again. Payload keys are sent as given (camelCase, as
the API documents them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Unpack

from memlattice_client._inputs import (
    FactFields,
    FilterFields,
    InvalidateFactsPredicate,
    RecordFields,
    to_graphql,
)
from memlattice_client._models import Status
from memlattice_client._operations import Call, operation
from memlattice_client._record_models import (
    ConsolidationReport,
    FactHit,
    FactWriteResult,
    InvalidateResult,
    Record,
    RecordType,
    RecordWriteResult,
    RevisionResult,
)
from memlattice_client._selections import (
    FACT_BRIEF,
    RECORD,
    RECORD_BRIEF,
    Detail,
    chosen,
)

HINTS = "hints { kind memoryId reason score }"
REVISION = f"record {{ {RECORD} }} previous {{ {RECORD} }}"


def _record_input(namespace: str, type: RecordType | str, payload: Mapping[str, Any],
                  fields: Mapping[str, Any]) -> dict[str, Any]:
    return to_graphql({"namespace": namespace, "type": type, "payload": payload, **fields})


def _records(raw: Any) -> list[Record]:
    return [Record.model_validate(r) for r in raw]


@operation("record")
def record(namespace: str, id: str, *, as_of: datetime | None = None) -> Call[Record]:
    """One record (or fact) with its payload graph; `as_of` gives it as believed then."""
    return Call("record",
                "query($ns: String!, $id: ID!, $asOf: DateTime) {"
                f" record(namespace: $ns, id: $id, asOf: $asOf) {{ {RECORD} }} }}",
                {"ns": namespace, "id": id, **to_graphql({"as_of": as_of})},
                Record.model_validate)


@operation("records")
def records(namespace: str, *, types: Sequence[RecordType | str] | None = None,
            statuses: Sequence[Status | str] | None = None, as_of: datetime | None = None,
            tags: Sequence[str] | None = None, thread_id: str | None = None,
            task_id: str | None = None, limit: int = 10,
            detail: Detail = "brief") -> Call[list[Record]]:
    """Records newest first; `as_of` lists what was believed then. Each comes whole but
    for its memory's secondary fields (`detail="full"`: every field)."""
    fields = chosen(detail, RECORD_BRIEF, RECORD)
    variables = to_graphql({"types": types, "statuses": statuses, "as_of": as_of,
                            "tags": tags, "thread_id": thread_id, "task_id": task_id})
    return Call("records",
                "query($ns: String!, $types: [RecordType!], $statuses: [Status!],"
                " $asOf: DateTime, $tags: [String!], $threadId: String, $taskId: String,"
                " $limit: Int!) { records(namespace: $ns, types: $types, statuses: $statuses,"
                " asOf: $asOf, tags: $tags, threadId: $threadId, taskId: $taskId,"
                f" limit: $limit) {{ {fields} }} }}",
                {"ns": namespace, "limit": limit, **variables}, _records)


@operation("recallFacts")
# Overlap of `min_confidence` with FilterFields (PEP 692): the named argument takes it,
# sent as recallFacts' own minConfidence.
def recall_facts(  # type: ignore[misc]
    namespace: str, query: str | None = None, *, kind: str | None = None,
    min_confidence: float | None = None, limit: int = 10, detail: Detail = "brief",
    **filter: Unpack[FilterFields],
) -> Call[list[FactHit]]:
    """Facts by relevance to `query` (else by confidence), each with its evidence and
    all of it but its memory's secondary fields (`detail="full"`: every field)."""
    fields = chosen(detail, FACT_BRIEF, RECORD)
    return Call("recallFacts",
                "query($f: MemoryFilterInput!, $q: String, $kind: String, $min: Float,"
                " $limit: Int!) { recallFacts(filter: $f, query: $q, kind: $kind,"
                f" minConfidence: $min, limit: $limit) {{ score evidence {{ kind ref }}"
                f" fact {{ {fields} }} }} }}",
                {"f": to_graphql({"namespace": namespace, **filter}), "q": query, "kind": kind,
                 "min": min_confidence, "limit": limit},
                lambda raw: [FactHit.model_validate(h) for h in raw])


@operation("factsByEvidence")
def facts_by_evidence(namespace: str, ref: str, *, kind: str | None = None,
                      detail: Detail = "brief") -> Call[list[Record]]:
    """Every active fact and record resting on the evidence reference `ref`, each
    whole but for its memory's secondary fields (`detail="full"`: every field)."""
    fields = chosen(detail, RECORD_BRIEF, RECORD)
    return Call("factsByEvidence",
                "query($ns: String!, $ref: String!, $kind: String) {"
                f" factsByEvidence(namespace: $ns, ref: $ref, kind: $kind) {{ {fields} }} }}",
                {"ns": namespace, "ref": ref, "kind": kind}, _records)


@operation("writeRecord")
def write_record(namespace: str, type: RecordType | str, payload: Mapping[str, Any],
                 **fields: Unpack[RecordFields]) -> Call[RecordWriteResult]:
    """Write a typed record; semantic records come back with relationship hints."""
    return Call("writeRecord",
                "mutation($input: RecordInput!) { writeRecord(input: $input) {"
                f" record {{ {RECORD} }} {HINTS} created }} }}",
                {"input": _record_input(namespace, type, payload, fields)},
                RecordWriteResult.model_validate)


@operation("updateRecord")
def update_record(namespace: str, id: str, type: RecordType | str, payload: Mapping[str, Any],
                  *, expected_version: int | None = None) -> Call[Record]:
    """Replace a record's payload (working state moves on)."""
    return Call("updateRecord",
                "mutation($ns: String!, $id: ID!, $type: RecordType!, $payload: JSON!, $v: Int) {"
                " updateRecord(namespace: $ns, id: $id, type: $type, payload: $payload,"
                f" expectedVersion: $v) {{ {RECORD} }} }}",
                {"ns": namespace, "id": id, "type": to_graphql({"type": type})["type"],
                 "payload": payload, "v": expected_version}, Record.model_validate)


@operation("discardTask")
def discard_task(namespace: str, task_id: str) -> Call[InvalidateResult]:
    """Discard a task: its working records are tombstoned."""
    return Call("discardTask",
                "mutation($ns: String!, $task: String!) {"
                " discardTask(namespace: $ns, taskId: $task) { count ids } }",
                {"ns": namespace, "task": task_id}, InvalidateResult.model_validate)


@operation("storeFact")
def store_fact(namespace: str, kind: str, claim: str,
               **fields: Unpack[FactFields]) -> Call[FactWriteResult]:
    """Store a fact; the same (namespace, kind, claim) again reinforces it, or, once it
    was invalidated, reasserts it as a new generation (`reasserted`)."""
    return Call("storeFact",
                "mutation($input: FactInput!) { storeFact(input: $input) {"
                f" created reasserted fact {{ {RECORD} }} {HINTS} }} }}",
                {"input": to_graphql({"namespace": namespace, "kind": kind, "claim": claim,
                                      **fields})},
                FactWriteResult.model_validate)


@operation("invalidateFacts")
def invalidate_facts(namespace: str,
                     **predicate: Unpack[InvalidateFactsPredicate]) -> Call[InvalidateResult]:
    """Retract every active fact matching all given fields."""
    return Call("invalidateFacts",
                "mutation($ns: String!, $p: InvalidateFactsInput!) {"
                " invalidateFacts(namespace: $ns, predicate: $p) { count ids } }",
                {"ns": namespace, "p": to_graphql(predicate)}, InvalidateResult.model_validate)


@operation("supersedeRecord")
# Overlap of `id` with RecordFields (PEP 692): `id=` always binds the record replaced.
def supersede_record(namespace: str, id: str, type: RecordType | str,  # type: ignore[misc]
                     payload: Mapping[str, Any], *, expected_version: int | None = None,
                     **fields: Unpack[RecordFields]) -> Call[RevisionResult]:
    """Replace a record: the old one is superseded, kept, linked."""
    return Call("supersedeRecord",
                "mutation($ns: String!, $id: ID!, $r: RecordInput!, $v: Int) {"
                " supersedeRecord(namespace: $ns, id: $id, record: $r, expectedVersion: $v) {"
                f" {REVISION} }} }}",
                {"ns": namespace, "id": id, "r": _record_input(namespace, type, payload, fields),
                 "v": expected_version}, RevisionResult.model_validate)


@operation("forkRecord")
# Overlap of `id` with RecordFields (PEP 692): `id=` always binds the record forked.
def fork_record(  # type: ignore[misc]
    namespace: str, id: str, type: RecordType | str, payload: Mapping[str, Any],
    **fields: Unpack[RecordFields],
) -> Call[RevisionResult]:
    """A variant that holds under conditions; both stay active."""
    return Call("forkRecord",
                "mutation($ns: String!, $id: ID!, $r: RecordInput!) {"
                f" forkRecord(namespace: $ns, id: $id, record: $r) {{ {REVISION} }} }}",
                {"ns": namespace, "id": id,
                 "r": _record_input(namespace, type, payload, fields)},
                RevisionResult.model_validate)


@operation("contestRecord")
def contest_record(namespace: str, id: str, by: str, *,
                   reason: str | None = None) -> Call[RevisionResult]:
    """`by` CONTRADICTS `id`; both become contested."""
    return Call("contestRecord",
                "mutation($ns: String!, $id: ID!, $by: ID!, $reason: String) {"
                f" contestRecord(namespace: $ns, id: $id, by: $by, reason: $reason)"
                f" {{ {REVISION} }} }}",
                {"ns": namespace, "id": id, "by": by, "reason": reason},
                RevisionResult.model_validate)


@operation("retractRecord")
def retract_record(namespace: str, id: str, *, reason: str | None = None,
                   expected_version: int | None = None) -> Call[Record]:
    """Withdraw a record as wrong: status RETRACTED, kept for audit."""
    return Call("retractRecord",
                "mutation($ns: String!, $id: ID!, $reason: String, $v: Int) {"
                " retractRecord(namespace: $ns, id: $id, reason: $reason,"
                f" expectedVersion: $v) {{ {RECORD} }} }}",
                {"ns": namespace, "id": id, "reason": reason, "v": expected_version},
                Record.model_validate)


@operation("mergeRecords")
def merge_records(namespace: str, ids: Sequence[str], type: RecordType | str,
                  payload: Mapping[str, Any],
                  **fields: Unpack[RecordFields]) -> Call[RevisionResult]:
    """Several records become one: the sources are superseded and linked to it."""
    return Call("mergeRecords",
                "mutation($ns: String!, $ids: [ID!]!, $into: RecordInput!) {"
                f" mergeRecords(namespace: $ns, ids: $ids, into: $into) {{ {REVISION} }} }}",
                {"ns": namespace, "ids": list(ids),
                 "into": _record_input(namespace, type, payload, fields)},
                RevisionResult.model_validate)


@operation("consolidate")
def consolidate(namespace: str, *, now: datetime | None = None) -> Call[ConsolidationReport]:
    """Consolidate a namespace now: successful episodes become facts, competences and
    plans; salience decays; episodes are pruned by policy. Idempotent."""
    ids = "semantic competence planGraph"
    return Call("consolidate",
                "mutation($ns: String!, $now: DateTime) { consolidate(namespace: $ns, now: $now) {"
                f" namespace created {{ {ids} }} reinforced {{ {ids} }} decayed pruned changed"
                " } }",
                {"ns": namespace, **to_graphql({"now": now})}, ConsolidationReport.model_validate)
