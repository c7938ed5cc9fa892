"""Export and import of what hangs off a namespace's memories: typed records' payload
subgraphs (tool graphs, plan graphs), evidence, the namespace's configuration and its
side vector space, carried vector for vector. Round trips stay byte-identical."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from memlattice.core.errors import ValidationError
from memlattice.graph.transfer import TransferGraph
from memlattice.portability.importer import import_export, remapper
from memlattice.server.app import runtime_of
from tests.conftest import GraphQLClient
from tests.integration._knowledge import EPISODE, GET_RECORD, STORE_FACT, write_record
from tests.integration._support import count_memories
from tests.integration.test_portability import body, export_text, remapped, wipe

CONFIGURE = """mutation($ns: String!, $input: NamespaceConfigInput!) {
  configureNamespace(namespace: $ns, input: $input) { version } }"""
STATUS = """query($ns: String!) { embeddingStatus(namespace: $ns) {
  activeModel activeDimension targetModel status embedded total } }"""
SEARCH = """query($input: SearchInput!) { search(input: $input) { memory { id } } }"""
PLAN = {"planId": "p1", "version": 2, "intent": "ship release",
        "nodes": [{"id": "n1", "tool": "build", "args": {"target": "all"}},
                  {"id": "n2", "tool": "test"}, {"id": "n3", "kind": "gate"}],
        "edges": [{"source": "n1", "target": "n2", "kind": "data"},
                  {"source": "n2", "target": "n3", "kind": "control"}],
        "metrics": {"runs": 3}}
SIDE = {"embeddingModel": "l2_supercat", "embeddingDimension": 64}


@pytest.fixture
def runtime(session_app: tuple[Any, Any]) -> Any:
    return runtime_of(session_app[0])


@pytest.fixture
def transfer(runtime: Any) -> TransferGraph:
    return TransferGraph(runtime.client)


async def populate(gql: GraphQLClient, runtime: Any, ns: str) -> dict[str, str]:
    """An episode with a tool graph, a plan graph, a fact with evidence, and a second
    embedding space the namespace searches (built before returning)."""
    episode = (await write_record(gql, ns, "EPISODIC", EPISODE))["record"]["memory"]["id"]
    plan = (await write_record(gql, ns, "PLAN_GRAPH", PLAN))["record"]["memory"]["id"]
    fact = (await gql.ok(STORE_FACT, {"input": {
        "namespace": ns, "kind": "biography", "claim": "Alice is a marine biologist",
        "evidence": [{"kind": "file", "ref": "notes.md:3"}]}}))["storeFact"]["fact"]
    await gql.ok(CONFIGURE, {"ns": ns, "input": {**SIDE, "backend": "HYBRID"}})
    await runtime.reembedder.wait_idle(timeout=120)
    return {"episode": episode, "plan": plan, "fact": fact["memory"]["id"]}


async def wipe_all(graph_client: Any, ns: str) -> None:
    """Everything the namespace owns, the nodes under its memories included."""
    for label in ("ToolCall", "PlanNode", "MemoryVector", "VectorSpaceState",
                  "NamespaceConfig"):
        await graph_client.write((f"MATCH (x:{label}) WHERE x.namespace = $ns DETACH DELETE x",
                                  {"ns": ns}))
    await wipe(graph_client, ns)


async def owned(graph_client: Any, ns: str) -> dict[str, int]:
    records = await graph_client.read((
        "UNWIND ['ToolCall', 'PlanNode', 'MemoryVector', 'VectorSpaceState',"
        " 'NamespaceConfig'] AS label\n"
        "RETURN label, COUNT { MATCH (x) WHERE label IN labels(x) AND x.namespace = $ns }"
        " AS n", {"ns": ns}))
    return {r["label"]: r["n"] for r in records}


async def records_of(gql: GraphQLClient, ns: str, ids: dict[str, str]) -> dict[str, Any]:
    return {name: (await gql.ok(GET_RECORD, {"ns": ns, "id": id}))["record"]
            for name, id in ids.items()}


async def test_round_trip_carries_payload_graphs_and_the_side_space(
    gql: GraphQLClient, transfer: TransferGraph, runtime: Any, graph_client: Any,
    namespace: str, tmp_path: Path,
) -> None:
    ids = await populate(gql, runtime, namespace)
    before = await records_of(gql, namespace, ids)
    nodes = await owned(graph_client, namespace)
    assert nodes == {"ToolCall": 4, "PlanNode": 3, "MemoryVector": 3, "VectorSpaceState": 1,
                     "NamespaceConfig": 1}
    first = await export_text(transfer, namespace)
    lines = [json.loads(line) for line in first.splitlines()]
    header, by_type = lines[0], {}
    for line in lines[1:]:
        by_type.setdefault(line["_type"], []).append(line)
    assert {k: n for k, n in header["counts"].items() if n and k in by_type} == {
        k: len(v) for k, v in by_type.items()}
    graphs = {g["memory"]: g for g in by_type["payloadGraph"]}
    assert set(graphs) == {ids["episode"], ids["plan"]}
    calls = graphs[ids["episode"]]["toolCalls"]
    assert [(c["callId"], c["tool"], c["dependsOn"]) for c in calls] == [
        ("a", "git.pull", []), ("b", "pytest", ["a"]), ("c", "docker.build", ["a"]),
        ("d", "kubectl.apply", ["b", "c"])]
    assert calls[0]["args"] == {"branch": "main"} and calls[0]["result"] == "ok"
    plan = graphs[ids["plan"]]
    assert [n["nodeId"] for n in plan["planNodes"]] == ["n1", "n2", "n3"]
    assert plan["planNodes"][0]["args"] == {"target": "all"}
    assert plan["planEdges"] == [{"source": "n1", "target": "n2", "type": "DATA"},
                                 {"source": "n2", "target": "n3", "type": "CONTROL"}]
    assert {(e["memory"], e["ref"]) for e in by_type["evidence"]} == {
        (ids["fact"], "notes.md:3"), (ids["episode"], "deploy.log")}
    (config,) = by_type["namespaceConfig"]
    assert config["settings"]["embedding_model"] == "l2_supercat"
    (space,) = by_type["vectorSpace"]
    assert (space["activeModel"], space["activeDimension"], space["status"]) == (
        "l2_supercat", 64, "ready")
    assert sorted(v["memory"] for v in by_type["vector"]) == sorted(ids.values())
    assert all(len(v["vector"]) == v["dimension"] == 64 for v in by_type["vector"])

    path = tmp_path / "export.jsonl"
    path.write_text(first)
    await wipe_all(graph_client, namespace)
    assert await owned(graph_client, namespace) == dict.fromkeys(nodes, 0)
    for _ in range(2):  # the second import changes nothing
        report = await import_export(transfer, path, embedder=runtime.service.embedder,
                                     dimension=runtime.service.dimension)
        assert report.reembedded == 0
        assert report.counts["payloadGraph"] == 2 and report.counts["vector"] == 3
        second = await export_text(transfer, namespace)
        assert first.splitlines()[1:] == second.splitlines()[1:]
        assert await owned(graph_client, namespace) == nodes
    assert await records_of(gql, namespace, ids) == before

    # The namespace searches its side space again, with nothing left to embed.
    runtime.service.spaces.forget_cached(namespace)
    status = (await gql.ok(STATUS, {"ns": namespace}))["embeddingStatus"]
    assert (status["activeModel"], status["activeDimension"], status["status"]) == (
        "l2_supercat", 64, "READY")
    assert status["embedded"] == status["total"] == 3
    hits = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                            "query": "marine biologist",
                                            "mode": "SEMANTIC"}}))["search"]
    assert hits[0]["memory"]["id"] == ids["fact"]


async def test_copy_with_remapped_ids_keeps_graphs_and_vectors(
    gql: GraphQLClient, transfer: TransferGraph, runtime: Any, graph_client: Any,
    namespace: str, tmp_path: Path,
) -> None:
    ids = await populate(gql, runtime, namespace)
    first = await export_text(transfer, namespace)
    path = tmp_path / "export.jsonl"
    path.write_text(first)
    copy = f"test/{uuid.uuid4().hex[:12]}"
    await import_export(transfer, path, embedder=runtime.service.embedder,
                        dimension=runtime.service.dimension, namespace=copy, remap_ids=True)
    remap = remapper(copy, True)
    assert body(await export_text(transfer, copy)) == remapped(body(first), remap)
    assert await owned(graph_client, copy) == await owned(graph_client, namespace)
    episode = (await gql.ok(GET_RECORD, {"ns": copy, "id": remap(ids["episode"])}))["record"]
    assert [c["id"] for c in episode["toolCalls"]] == ["a", "b", "c", "d"]
    vectors = await graph_client.read((
        "MATCH (v:MemoryVector)-[:EMBEDS]->(m:Memory) WHERE v.namespace = $ns"
        " RETURN v.key AS key, m.id AS id", {"ns": copy}))
    assert sorted(r["id"] for r in vectors) == sorted(remap(i) for i in ids.values())
    assert all(r["key"].startswith(r["id"] + "|") for r in vectors)


GOOD = {"_type": "memory", "id": "m1", "content": "fine", "status": "active", "version": 1,
        "createdAt": "2024-01-01T00:00:00+00:00", "updatedAt": "2024-01-01T00:00:00+00:00"}


@pytest.mark.parametrize(("line", "problem"), [
    ({"_type": "payloadGraph", "memory": "m1", "toolCalls": [], "planNodes": [{"nodeId": "a"}],
      "planEdges": [{"source": "a", "target": "a", "type": "LOOPS_TO"}]},
     "planEdges join two planNodes"),
    ({"_type": "payloadGraph", "memory": "m1", "toolCalls": [
        {"callId": "a", "tool": "t", "dependsOn": ["elsewhere"]}]}, "dependsOn may only name"),
    ({"_type": "payloadGraph", "memory": "m1", "toolCalls": [
        {"callId": "a", "tool": "t", "label": "x"}]}, "unknown field 'label'"),
    ({"_type": "payloadGraph", "memory": "nowhere", "toolCalls": []},
     "neither in the file nor in namespace"),
    ({"_type": "vector", "memory": "m1", "model": "l2_supercat", "dimension": 64,
      "vector": [0.5] * 63}, "vector must be 64 finite numbers"),
    ({"_type": "vector", "memory": "m1", "model": "", "dimension": 64, "vector": [0.5] * 64},
     "embedding model name"),
    ({"_type": "vectorSpace", "activeModel": "l2_supercat", "activeDimension": 64,
      "status": "zombie"}, "status must be one of"),
    ({"_type": "vectorSpace", "activeModel": "l2_supercat", "status": "ready"},
     "activeModel and activeDimension go together"),
    ({"_type": "namespaceConfig", "version": 1, "updatedAt": "2024-01-01T00:00:00+00:00",
      "settings": {"embedding_dimension": 64}}, "embeddingDimension needs embeddingModel"),
])
async def test_a_bad_part_is_named_and_nothing_is_written(
    transfer: TransferGraph, runtime: Any, graph_client: Any, namespace: str, tmp_path: Path,
    line: dict[str, Any], problem: str,
) -> None:
    good = {**GOOD, "id": f"m1-{uuid.uuid4().hex}"}
    bad = {k: good["id"] if v == "m1" else v for k, v in line.items()}
    header = {"_type": "header", "format": "memlattice-export", "version": 1,
              "namespace": namespace, "counts": {}}
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in (header, good, bad)) + "\n")
    with pytest.raises(ValidationError) as failed:
        await import_export(transfer, path, embedder=runtime.service.embedder,
                            dimension=runtime.service.dimension)
    assert failed.value.message.startswith("line 3: "), failed.value.message
    assert problem in failed.value.message, failed.value.message
    assert await count_memories(graph_client, namespace) == 0
    assert set((await owned(graph_client, namespace)).values()) == {0}
