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
    WRITE_MANY,
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
    ("supersede with a typed record's memoryType", SUPERSEDE,
     lambda ns, id: {"id": id, "memory": mem(ns, "next", memoryType="semantic")},
     {"VALIDATION"}),
    ("supersede with a fact's memoryType", SUPERSEDE,
     lambda ns, id: {"id": id, "memory": mem(ns, "next", memoryType="fact")}, {"VALIDATION"}),
    ("memoryType patch (not a patchable field)", UPDATE,
     lambda ns, id: {"ns": ns, "id": id, "patch": {"memoryType": "episodic"}},
     {"VALIDATION"}),
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


TYPED = ["episodic", "working", "semantic", "competence", "plan_graph", "fact"]


@pytest.mark.parametrize("memory_type", TYPED)
async def test_plain_writes_refuse_typed_memory_types(
    gql: GraphQLClient, graph_client: Any, namespace: str, memory_type: str,
) -> None:
    """A typed record or fact has a validated payload, a label and a subgraph: only
    writeRecord / storeFact write them, so the plain mutations refuse their types
    (writeMemory stores one fact as storeFact would: see test_write_fact.py), with a
    message that names the right mutation and shows it."""
    writer = "storeFact" if memory_type == "fact" else "writeRecord"
    batch = await gql.error(WRITE_MANY, {"inputs": [
        mem(namespace, "a fine note"), mem(namespace, "looks typed", memoryType=memory_type)]})
    refused = [batch]
    if memory_type != "fact":
        refused.append(await gql.error(WRITE, {"input": mem(namespace, "looks typed",
                                                            memoryType=memory_type)}))
    for error in refused:
        assert code(error) == "VALIDATION", error
        assert error["extensions"]["field"] == "memoryType"
        assert f'memoryType "{memory_type}" is reserved' in error["message"], error
        assert f"mutation {{ {writer}(input: {{" in error["message"], error
        assert_clean(error)
    assert batch["extensions"]["index"] == 1
    assert await count_memories(graph_client, namespace) == 0
    audits = await graph_client.read((
        "MATCH (a:AuditEntry) WHERE a.namespace = $ns RETURN count(a) AS n", {"ns": namespace}))
    assert audits[0]["n"] == 0


async def test_plain_memory_types_are_still_free(gql: GraphQLClient, namespace: str) -> None:
    written = (await gql.ok(
        "mutation($inputs: [MemoryInput!]!) { writeMemories(inputs: $inputs) { memoryType } }",
        {"inputs": [mem(namespace, "a note"), mem(namespace, "a decision", memoryType="decision"),
                    mem(namespace, "a fact-like note", memoryType="factoid")]}))["writeMemories"]
    assert [m["memoryType"] for m in written] == ["note", "decision", "factoid"]


async def test_plain_mutations_neither_rewrite_nor_replace_typed_records(
        gql: GraphQLClient, namespace: str) -> None:
    """updateMemory may retag a record or fact, not rewrite what its payload or claim
    defines; supersedeMemory may not replace one with a plain note. Refusals change
    nothing."""
    from tests.integration._knowledge import STORE_FACT, fact, spo, write_record

    semantic = (await write_record(gql, namespace, "SEMANTIC", spo("Alice", "lives in",
                                                                  "Lisbon")))["record"]
    stored = (await gql.ok(STORE_FACT, {"input": fact(namespace, "policy",
                                                      "Deploys need two reviews.")}))
    for target in (semantic["memory"], stored["storeFact"]["fact"]["memory"]):
        for patch in ({"content": "rewritten"}, {"value": {"x": 1}}):
            error = await gql.error(UPDATE, {"ns": namespace, "id": target["id"],
                                             "patch": patch})
            assert code(error) == "VALIDATION", error
            assert_clean(error)
        error = await gql.error(SUPERSEDE, {"id": target["id"],
                                            "memory": mem(namespace, "a plain successor")})
        assert code(error) == "VALIDATION", error
        retagged = (await gql.ok(UPDATE, {"ns": namespace, "id": target["id"],
                                          "patch": {"tags": ["reviewed"]}}))["updateMemory"]
        assert retagged["version"] == 2 and retagged["content"] == target["content"]
    assert await count_memories_with_content(gql, namespace, "a plain successor") == 0


async def count_memories_with_content(gql: GraphQLClient, namespace: str, content: str) -> int:
    found = (await gql.ok("query($f: MemoryFilterInput!) { memories(filter: $f, first: 100) {"
                          " edges { node { content } } } }", {"f": {"namespace": namespace}}))
    return sum(1 for e in found["memories"]["edges"] if e["node"]["content"] == content)
