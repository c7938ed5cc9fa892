"""GraphQL documents and helpers for the typed-records and facts tests."""

from __future__ import annotations

import zlib
from typing import Any

from tests.conftest import GraphQLClient
from tests.integration._support import seeded

RECORD_FIELDS = """
  memory { id namespace content status version memoryType sensitivity supersededBy
           supersededAt confidence salience taskId }
  recordType payload kind recordedAt validFrom validTo revisionStatus retractedAt
  toolCalls { id tool args result at dependsOn }
  planNodes { id kind label tool args }
  planEdges { source target kind }
  evidence { kind ref }
"""
WRITE_RECORD = ("mutation($input: RecordInput!) { writeRecord(input: $input) { record {"
                + RECORD_FIELDS + "} hints { kind memoryId reason score } } }")
GET_RECORD = ("query($ns: String!, $id: ID!, $asOf: DateTime) {"
              " record(namespace: $ns, id: $id, asOf: $asOf) {" + RECORD_FIELDS + "} }")
LIST_RECORDS = (
    "query($ns: String!, $types: [RecordType!], $asOf: DateTime, $statuses: [Status!],"
    " $taskId: String) { records(namespace: $ns, types: $types, asOf: $asOf,"
    " statuses: $statuses, taskId: $taskId) {" + RECORD_FIELDS + "} }")
UPDATE_RECORD = (
    "mutation($ns: String!, $id: ID!, $type: RecordType!, $payload: JSON!, $v: Int) {"
    " updateRecord(namespace: $ns, id: $id, type: $type, payload: $payload,"
    " expectedVersion: $v) {" + RECORD_FIELDS + "} }")
STORE_FACT = ("mutation($input: FactInput!) { storeFact(input: $input) { created reasserted"
              " fact {" + RECORD_FIELDS + "} hints { kind memoryId reason score } } }")
RECALL_FACTS = (
    "query($filter: MemoryFilterInput!, $query: String, $kind: String, $min: Float) {"
    " recallFacts(filter: $filter, query: $query, kind: $kind, minConfidence: $min) {"
    " score evidence { kind ref } fact {" + RECORD_FIELDS + "} } }")
INVALIDATE = (
    "mutation($ns: String!, $p: InvalidateFactsInput!) {"
    " invalidateFacts(namespace: $ns, predicate: $p) { count ids } }")
BY_EVIDENCE = ("query($ns: String!, $ref: String!) { factsByEvidence(namespace: $ns, ref: $ref)"
               " {" + RECORD_FIELDS + "} }")
REVISION = "record {" + RECORD_FIELDS + "} previous {" + RECORD_FIELDS + "}"
SUPERSEDE_RECORD = (
    "mutation($ns: String!, $id: ID!, $r: RecordInput!, $v: Int) {"
    " supersedeRecord(namespace: $ns, id: $id, record: $r, expectedVersion: $v) {"
    + REVISION + "} }")
FORK = ("mutation($ns: String!, $id: ID!, $r: RecordInput!) {"
        " forkRecord(namespace: $ns, id: $id, record: $r) {" + REVISION + "} }")
CONTEST = ("mutation($ns: String!, $id: ID!, $by: ID!) {"
           " contestRecord(namespace: $ns, id: $id, by: $by, reason: \"disagree\") {"
           + REVISION + "} }")
RETRACT = ("mutation($ns: String!, $id: ID!) { retractRecord(namespace: $ns, id: $id,"
           " reason: \"wrong\") {" + RECORD_FIELDS + "} }")
MERGE = ("mutation($ns: String!, $ids: [ID!]!, $r: RecordInput!) {"
         " mergeRecords(namespace: $ns, ids: $ids, into: $r) {" + REVISION + "} }")


def record(namespace: str, type: str, payload: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A RecordInput with a client vector, so no test waits on the embedder."""
    fields.setdefault("embedding", seeded(zlib.crc32(repr(sorted(payload.items())).encode())))
    return {"namespace": namespace, "type": type, "payload": payload, **fields}


def spo(subject: str, predicate: str, obj: str, **extra: Any) -> dict[str, Any]:
    return {"subject": subject, "predicate": predicate, "object": obj, **extra}


def fact(namespace: str, kind: str, claim: str, **fields: Any) -> dict[str, Any]:
    fields.setdefault("embedding", seeded(zlib.crc32(claim.encode())))
    return {"namespace": namespace, "kind": kind, "claim": claim, **fields}


async def write_record(gql: GraphQLClient, namespace: str, type: str, payload: dict[str, Any],
                       **fields: Any) -> dict[str, Any]:
    result: dict[str, Any] = (await gql.ok(WRITE_RECORD, {"input": record(
        namespace, type, payload, **fields)}))["writeRecord"]
    return result


EPISODE = {
    "outcome": "success",
    "timeline": [{"time": "2026-01-01T10:00:00Z", "kind": "start", "summary": "began deploy"}],
    "toolGraph": [
        {"id": "a", "tool": "git.pull", "args": {"branch": "main"}, "result": "ok"},
        {"id": "b", "tool": "pytest", "dependsOn": ["a"]},
        {"id": "c", "tool": "docker.build", "dependsOn": ["a"]},
        {"id": "d", "tool": "kubectl.apply", "dependsOn": ["b", "c"]},
    ],
    "environment": {"os": "linux"},
    "artifacts": [{"kind": "file", "ref": "deploy.log"}],
}
