"""Bad mutations of an existing memory leave it exactly as it was.

test_errors.py checks that bad writes create nothing; this catalogue aims
at a memory that exists: after each refused update, supersede, forget or
delete, the memory still has version 1, status ACTIVE, its content, its
single `write` audit entry, no relationships, and no successor was created.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import GraphQLClient
from tests.integration._support import (
    DELETE,
    DIM,
    FORGET,
    SUPERSEDE,
    UPDATE,
    WRITE,
    code,
    count_memories,
    mem,
)
from tests.integration.test_errors import assert_clean

# (case, operation, variables builder, expected codes); builders get (namespace, id).
BAD: list[tuple[str, str, Any, set[str]]] = [
    ("blank content patch", UPDATE,
     lambda ns, id: {"ns": ns, "id": id, "patch": {"content": "  "}}, {"VALIDATION"}),
    ("confidence patch above 1", UPDATE,
     lambda ns, id: {"ns": ns, "id": id, "patch": {"confidence": 1.01}}, {"VALIDATION"}),
    ("too many tags patch", UPDATE,
     lambda ns, id: {"ns": ns, "id": id, "patch": {"tags": [f"t{i}" for i in range(65)]}},
     {"VALIDATION"}),
    ("wrong-length embedding patch", UPDATE,
     lambda ns, id: {"ns": ns, "id": id, "patch": {"embedding": [0.5] * (DIM + 1)}},
     {"DIMENSION_MISMATCH"}),
    ("metadata patch not an object", UPDATE,
     lambda ns, id: {"ns": ns, "id": id, "patch": {"metadata": "text"}}, {"VALIDATION"}),
    ("stale expected version", UPDATE,
     lambda ns, id: {"ns": ns, "id": id, "patch": {"summary": "s"}, "v": 7},
     {"VERSION_CONFLICT"}),
    ("update from another namespace", UPDATE,
     lambda ns, id: {"ns": ns + "/other", "id": id, "patch": {"summary": "s"}}, {"NOT_FOUND"}),
    ("update with a bad namespace", UPDATE,
     lambda ns, id: {"ns": "../" + ns, "id": id, "patch": {"summary": "s"}}, {"VALIDATION"}),
    ("supersede with blank content", SUPERSEDE,
     lambda ns, id: {"id": id, "memory": mem(ns, " ")}, {"VALIDATION"}),
    ("supersede with a short vector", SUPERSEDE,
     lambda ns, id: {"id": id, "memory": mem(ns, "next", embedding=[1.0, 0.0])},
     {"DIMENSION_MISMATCH"}),
    ("supersede at a stale version", SUPERSEDE,
     lambda ns, id: {"id": id, "memory": mem(ns, "next"), "v": 3}, {"VERSION_CONFLICT"}),
    ("supersede from another namespace", SUPERSEDE,
     lambda ns, id: {"id": id, "memory": mem(ns + "/other", "next")}, {"NOT_FOUND"}),
    ("supersede with its own id", SUPERSEDE,
     lambda ns, id: {"id": id, "memory": mem(ns, "next", id=id)}, {"CONFLICT", "VALIDATION"}),
    ("forget from another namespace", FORGET,
     lambda ns, id: {"ns": ns + "/other", "p": {"id": id}}, None),
    ("delete from another namespace", DELETE,
     lambda ns, id: {"ns": ns + "/other", "id": id}, {"NOT_FOUND"}),
    ("delete with a bad namespace", DELETE,
     lambda ns, id: {"ns": "/" + ns, "id": id}, {"VALIDATION"}),
]


@pytest.mark.parametrize("operation,variables,expected", [(o, v, e) for _, o, v, e in BAD],
                         ids=[case for case, _, _, _ in BAD])
async def test_refused_mutation_leaves_the_memory_alone(
    gql: GraphQLClient, graph_client: Any, namespace: str, operation: str, variables: Any,
    expected: set[str] | None,
) -> None:
    written = (await gql.ok(WRITE, {"input": mem(namespace, "the original",
                                                 tags=["kept"])}))["writeMemory"]
    body = await gql.raw(operation, variables(namespace, written["id"]))
    if expected is None:
        # forget in another namespace is not an error: it matches nothing.
        assert not body.get("errors") and body["data"]["forget"]["count"] == 0, body
    else:
        error = body["errors"][0]
        assert code(error) in expected, error
        assert_clean(error)
    records = await graph_client.read((
        ("MATCH (m:Memory {id: $id}) OPTIONAL MATCH (m)-[r]-()"
        " WITH m, count(r) AS rels"
        " OPTIONAL MATCH (a:AuditEntry {memoryId: $id})"
        " RETURN m.version AS version, m.status AS status, m.content AS content,"
        " m.tags AS tags, rels, collect(a.operation) AS audits"), {"id": written["id"]}))
    assert len(records) == 1
    state = records[0]
    assert (state["version"], state["status"], state["content"], state["tags"]) == (
        1, "active", "the original", ["kept"])
    assert state["rels"] == 0 and state["audits"] == ["write"]
    assert await count_memories(graph_client, namespace) == 1
    assert await count_memories(graph_client, namespace + "/other") == 0
