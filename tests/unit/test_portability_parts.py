"""Export lines for payload graphs and side vector spaces, and back (no database)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memlattice.core.errors import ValidationError
from memlattice.core.vector_spaces import VectorSpace
from memlattice.graph.transfer_parts import parse_space_key, replace_payload_graphs, upsert_vectors
from memlattice.portability.kinds import ImportEnv
from memlattice.portability.part_kinds import (
    _payload_graph_record,
    decode_payload_graph,
    decode_vector,
    decode_vector_space,
)

ENV = ImportEnv(namespace="dest", remap=lambda id: f"new-{id}")
AT = datetime(2026, 1, 2, 3, 4, 5, 600000, tzinfo=UTC)


def test_a_payload_graph_line_is_canonical_and_decodes_back_to_the_same_nodes() -> None:
    row = {"memory": "r1",
           "calls": [{"callId": "b", "tool": "pytest", "argsJson": "null", "namespace": "src",
                      "recordId": "r1", "dependsOn": ["a"]},
                     {"callId": "a", "tool": "git", "argsJson": '{"branch":"main"}',
                      "result": "ok", "at": AT, "namespace": "src", "recordId": "r1",
                      "dependsOn": []}],
           "nodes": [{"nodeId": "n2", "kind": "gate", "argsJson": "null"},
                     {"nodeId": "n1", "tool": "build", "argsJson": '{"x":1}'}],
           "edges": [{"source": "n1", "target": "n2", "type": "CONTROL"}]}
    line = _payload_graph_record(row)
    assert [c["callId"] for c in line["toolCalls"]] == ["a", "b"]
    assert line["toolCalls"][0] == {"args": {"branch": "main"}, "at": AT.isoformat(),
                                    "callId": "a", "dependsOn": [], "result": "ok",
                                    "tool": "git"}
    assert line["toolCalls"][1]["args"] is None and "namespace" not in line["toolCalls"][1]
    assert [n["nodeId"] for n in line["planNodes"]] == ["n1", "n2"]

    decoded = decode_payload_graph(line, ENV)
    assert decoded["memory"] == "new-r1"
    assert decoded["toolDeps"] == [{"source": "b", "target": "a"}]
    git = decoded["toolCalls"][0]
    assert git == {"callId": "a", "tool": "git", "argsJson": '{"branch":"main"}',
                   "result": "ok", "at": AT}
    # A null `args` is stored as the JSON text "null", as a write stores it.
    assert decoded["toolCalls"][1]["argsJson"] == "null"
    assert decoded["planEdges"] == [{"source": "n1", "target": "n2", "type": "CONTROL"}]


@pytest.mark.parametrize(("line", "problem"), [
    ({"memory": "r", "toolCalls": [{"callId": "a"}]}, "toolCalls.tool"),
    ({"memory": "r", "toolCalls": [{"callId": "a", "tool": "t"}, {"callId": "a", "tool": "t"}]},
     "repeats"),
    ({"memory": "r", "planNodes": [{"nodeId": "a"}],
      "planEdges": [{"source": "a", "target": "b", "type": "DATA"}]}, "planEdges"),
    ({"memory": "r", "toolCalls": "nope"}, "list of JSON objects"),
    ({"memory": " "}, "memory must be"),
])
def test_a_bad_payload_graph_is_refused(line: dict[str, object], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        decode_payload_graph({"_type": "payloadGraph", **line}, ENV)


def test_vectors_and_spaces_decode_with_their_space() -> None:
    row = decode_vector({"memory": "m", "model": "a@b", "dimension": 2, "vector": [1, 0.5]},
                        ENV)
    assert row == {"memory": "new-m", "space": VectorSpace("a@b", 2), "vector": [1.0, 0.5]}
    assert parse_space_key(VectorSpace("a@b", 2).key) == VectorSpace("a@b", 2)
    with pytest.raises(ValidationError):
        decode_vector({"memory": "m", "model": "x", "dimension": 2,
                       "vector": [1.0, float("nan")]}, ENV)
    state = decode_vector_space({"_type": "vectorSpace", "activeModel": "x",
                                 "activeDimension": 64, "targetModel": "y",
                                 "targetDimension": 128, "status": "building",
                                 "updatedAt": AT.isoformat()}, ENV)
    assert state["spaces"] == [VectorSpace("x", 64), VectorSpace("y", 128)]
    assert state["props"]["updatedAt"] == AT and "_type" not in state["props"]
    with pytest.raises(ValidationError, match="unknown field"):
        decode_vector_space({"status": "ready", "activeLabel": "Admin"}, ENV)


def test_import_statements_pin_cypher_25_and_splice_only_safe_names() -> None:
    text, params = replace_payload_graphs("ns", [])
    assert text.startswith("CYPHER 25\n") and "CREATE (a)-[:$(e.type)]->(b)" in text
    space = VectorSpace("Some Model/v2", 64)
    text, params = upsert_vectors("ns", space, [{"memory": "m", "vector": [0.0] * 64}])
    assert text.startswith("CYPHER 25\n") and f"v.`{space.vector_property}`" in text
    assert "Some Model" not in text and params["space"] == space.key
