"""Shared GraphQL documents and helpers for the integration suite.

Everything here talks to the real service through `/graphql` (via the
`gql` fixture) or reads the graph directly through `graph_client`; nothing is
mocked. Operations always take GraphQL variables, never interpolated text.
"""

from __future__ import annotations

import math
import random
import zlib
from datetime import datetime
from typing import Any

DIM = 256  # settings.embedding.dimension; asserted in test_write_and_read

MEMORY_FIELDS = """
  id namespace key content value summary tags metadata scope agentId userId sessionId taskId
  status confidence sensitivity source sourceType extractionMethod provenance createdAt updatedAt
  expiresAt version accessCount lastAccessedAt embeddingModel embeddingDimension
  supersededBy supersededAt forgottenAt
"""

WRITE = (
    "mutation($input: MemoryInput!) { writeMemory(input: $input) {" + MEMORY_FIELDS + "} }"
)
WRITE_MANY = (
    "mutation($inputs: [MemoryInput!]!) { writeMemories(inputs: $inputs) {"
    + MEMORY_FIELDS + "} }"
)
GET = (
    "query($ns: String!, $id: ID!) { memory(namespace: $ns, id: $id) {" + MEMORY_FIELDS + "} }"
)
GET_WITH_EMBEDDING = (
    "query($ns: String!, $id: ID!) { memory(namespace: $ns, id: $id) { id version embedding"
    " embeddingModel embeddingDimension } }"
)
LIST = """
query($filter: MemoryFilterInput!, $first: Int!, $after: String) {
  memories(filter: $filter, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { cursor node { id key content tags status createdAt metadata sourceType } }
  }
}
"""
SEARCH = """
query($input: SearchInput!) {
  search(input: $input) {
    score similarityScore ftsScore
    memory { id content status namespace scope sessionId }
  }
}
"""
UPDATE = (
    "mutation($ns: String!, $id: ID!, $patch: MemoryPatchInput!, $v: Int) {"
    " updateMemory(namespace: $ns, id: $id, patch: $patch, expectedVersion: $v) {"
    + MEMORY_FIELDS + "} }"
)
SUPERSEDE = (
    "mutation($id: ID!, $memory: MemoryInput!, $v: Int) {"
    " supersedeMemory(id: $id, memory: $memory, expectedVersion: $v) {"
    " previous {" + MEMORY_FIELDS + "} current {" + MEMORY_FIELDS + "} } }"
)
ADD_EDGE = """
mutation($input: EdgeInput!) {
  addEdge(input: $input) { id type sourceId targetId createdAt metadata }
}
"""
EDGES = """
query($ns: String!, $id: ID!, $types: [EdgeType!], $direction: Direction!) {
  edges(namespace: $ns, id: $id, types: $types, direction: $direction) {
    id type sourceId targetId createdAt metadata
  }
}
"""
DELETE_EDGE = "mutation($ns: String!, $id: ID!) { deleteEdge(namespace: $ns, id: $id) }"
FORGET = """
mutation($ns: String!, $p: ForgetPredicateInput!) {
  forget(namespace: $ns, predicate: $p) { count ids }
}
"""
DELETE = "mutation($ns: String!, $id: ID!) { deleteMemory(namespace: $ns, id: $id) }"
AUDIT = """
query($ns: String!, $id: ID!) {
  auditTrail(namespace: $ns, id: $id) { id memoryId operation actor at version details }
}
"""


def basis(i: int, dim: int = DIM) -> list[float]:
    """The unit vector along axis `i`."""
    v = [0.0] * dim
    v[i % dim] = 1.0
    return v


def mix(*weights: tuple[int, float], dim: int = DIM) -> list[float]:
    """A unit vector that is the normalised sum of weighted axes."""
    v = [0.0] * dim
    for axis, w in weights:
        v[axis % dim] += w
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v]


def seeded(seed: int, dim: int = DIM) -> list[float]:
    """A deterministic pseudo-random unit vector."""
    rng = random.Random(seed)
    v = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v]


def ts(text: str) -> datetime:
    return datetime.fromisoformat(text)


def mem(namespace: str, content: str, **fields: Any) -> dict[str, Any]:
    """A MemoryInput with a client vector (so no test waits on the embedder)."""
    fields.setdefault("embedding", seeded(zlib.crc32(content.encode())))
    return {"namespace": namespace, "content": content, **fields}


async def count_memories(graph_client: Any, namespace: str) -> int:
    records = await graph_client.read((
        "MATCH (m:Memory) WHERE m.namespace = $ns RETURN count(m) AS n", {"ns": namespace}
    ))
    return int(records[0]["n"])


async def count_relationships(graph_client: Any, namespace: str) -> int:
    records = await graph_client.read((
        "MATCH (a:Memory)-[r]-(b:Memory) WHERE a.namespace = $ns OR b.namespace = $ns"
        " RETURN count(DISTINCT r) AS n", {"ns": namespace}
    ))
    return int(records[0]["n"])


def code(error: dict[str, Any]) -> str:
    return str((error.get("extensions") or {}).get("code"))


async def fingerprint(graph_client: Any, namespace: str) -> dict[str, int]:
    """What a refused write must leave unchanged: the namespace's memories (by status),
    their versions, their relationships (revisions' HAS_REVISION included) and their
    audit entries."""
    records = await graph_client.read((
        "CALL () { MATCH (m:Memory) WHERE m.namespace = $ns"
        "  RETURN count(m) AS memories, sum(m.version) AS versions,"
        "  sum(CASE WHEN m.status = 'active' THEN 1 ELSE 0 END) AS active }"
        " CALL () { MATCH (a:Memory)-[r]-(b) WHERE a.namespace = $ns"
        "  RETURN count(DISTINCT r) AS relationships }"
        " CALL () { MATCH (e:AuditEntry) WHERE e.namespace = $ns RETURN count(e) AS audits }"
        " RETURN memories, versions, active, relationships, audits", {"ns": namespace}))
    return {k: int(v or 0) for k, v in records[0].items()}
