"""Export and import against the real Neo4j: lossless round trips, idempotence,
validation that writes nothing, harn event logs and JSONL entries, and the CLI."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from memlattice.core.errors import Conflict, ValidationError
from memlattice.core.settings import Settings
from memlattice.graph.transfer import TransferGraph
from memlattice.portability import foreign, kinds
from memlattice.portability.exporter import export_namespace
from memlattice.portability.importer import import_export, remapper
from memlattice.server.app import runtime_of
from tests.conftest import GraphQLClient
from tests.integration._support import (
    ADD_EDGE,
    DELETE,
    FORGET,
    GET,
    SUPERSEDE,
    UPDATE,
    WRITE_MANY,
    code,
    count_memories,
    mem,
)


@pytest.fixture
def runtime(session_app: tuple[Any, Any]) -> Any:
    return runtime_of(session_app[0])


@pytest.fixture
def transfer(runtime: Any) -> TransferGraph:
    return TransferGraph(runtime.client)


async def populate(gql: GraphQLClient, ns: str) -> dict[str, str]:
    """A namespace with every kind of state: versions, supersede, edges, forget, delete."""
    written = (await gql.ok(WRITE_MANY, {"inputs": [
        mem(ns, "Alice moved to Lisbon", key="alice.city", tags=["travel", "alice"],
            value={"city": "Lisbon", "n": 1.5}, metadata={"source": "chat", "turn": 3},
            provenance={"by": "extractor", "confidence": [0.9, 1]}, scope="USER",
            userId="u1", summary="moved", salience=0.7, confidence=0.8,
            sourceType="chat", extractionMethod="llm"),
        mem(ns, "Bob likes tea", tags=["bob"], expiresAt="2099-01-01T00:00:00+00:00"),
        mem(ns, "Carol is a pilot", sensitivity="HIGH"),
        mem(ns, "to be deleted"),
        mem(ns, "to be forgotten", tags=["tmp"]),
    ]}))["writeMemories"]
    ids = {m["content"]: m["id"] for m in written}
    alice, bob, carol = ids["Alice moved to Lisbon"], ids["Bob likes tea"], ids["Carol is a pilot"]
    await gql.ok(UPDATE, {"ns": ns, "id": alice, "patch": {"summary": "moved in 2023",
                                                           "metadata": {"source": "chat"}}})
    new_bob = (await gql.ok(SUPERSEDE, {"id": bob, "memory": mem(ns, "Bob likes coffee")}))[
        "supersedeMemory"]["current"]["id"]
    await gql.ok(ADD_EDGE, {"input": {"namespace": ns, "sourceId": alice, "targetId": carol,
                                      "type": "SUPPORTS", "metadata": {"why": "same trip"}}})
    await gql.ok(ADD_EDGE, {"input": {"namespace": ns, "sourceId": carol, "targetId": new_bob,
                                      "type": "RELATED"}})
    await gql.ok(FORGET, {"ns": ns, "p": {"tag": "tmp"}})
    await gql.ok(DELETE, {"ns": ns, "id": ids["to be deleted"]})
    fact = (await gql.ok(STORE_FACT, {"input": {
        "namespace": ns, "kind": "biography", "claim": "Alice is a marine biologist",
        "evidence": [{"kind": "file", "ref": "notes.md:3"}, {"kind": "url", "ref": "https://x"}],
    }}))["storeFact"]["fact"]["memory"]["id"]
    return {"alice": alice, "bob": bob, "new_bob": new_bob, "carol": carol, "fact": fact}


STORE_FACT = ("mutation($input: FactInput!) {"
              " storeFact(input: $input) { fact { memory { id } } } }")
BY_EVIDENCE = ("query($ns: String!, $ref: String!) {"
               " factsByEvidence(namespace: $ns, ref: $ref) { memory { id } } }")
HISTORY = ("query($ns: String!, $id: ID!) { memoryHistory(namespace: $ns, id: $id) {"
           " version recordedFrom memory { summary } } }")
GET_AS_OF = ("query($ns: String!, $id: ID!, $asOf: DateTime) {"
             " memory(namespace: $ns, id: $id, asOf: $asOf) { summary version metadata } }")


async def export_text(transfer: TransferGraph, ns: str) -> str:
    sink = io.StringIO()
    await export_namespace(transfer, ns, sink)
    return sink.getvalue()


def body(text: str) -> list[dict[str, Any]]:
    """Records without the header, namespace-free, in a canonical order."""
    records = [json.loads(line) for line in text.splitlines()]
    assert records[0]["_type"] == "header"
    out = []
    for r in records[1:]:
        r.pop("namespace", None)
        out.append(r)
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True))


def remapped(records: list[dict[str, Any]], remap: Any) -> list[dict[str, Any]]:
    """What the source's records look like after --remap-ids."""
    out = []
    for r in records:
        r = dict(r)
        for name in ("id", "supersededBy", "source", "target", "memoryId", "memory"):
            if isinstance(r.get(name), str):
                r[name] = remap(r[name])
        if isinstance(r.get("details"), dict):
            r["details"] = {k: remap(v) if k in ("supersedes", "supersededBy", "edge", "target")
                            else v for k, v in r["details"].items()}
        out.append(r)
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True))


async def wipe(graph_client: Any, ns: str) -> None:
    await graph_client.write(("MATCH (m:Memory {namespace: $ns}) DETACH DELETE m", {"ns": ns}))
    await graph_client.write(("MATCH (a:AuditEntry {namespace: $ns}) DELETE a", {"ns": ns}))
    await graph_client.write(("MATCH (r:MemoryRevision {namespace: $ns}) DETACH DELETE r",
                              {"ns": ns}))
    await graph_client.write(("MATCH (e:Evidence {namespace: $ns}) DETACH DELETE e",
                              {"ns": ns}))


async def test_export_has_a_header_and_every_property(
    gql: GraphQLClient, transfer: TransferGraph, namespace: str
) -> None:
    ids = await populate(gql, namespace)
    records = [json.loads(line) for line in (await export_text(transfer, namespace)).splitlines()]
    header = records[0]
    assert header["format"] == "memlattice-export" and header["version"] == 1
    assert header["namespace"] == namespace
    # Every kind is counted; kinds this namespace has none of count 0.
    assert {"payloadGraph", "namespaceConfig", "vectorSpace", "vector"} <= set(header["counts"])
    assert {k: n for k, n in header["counts"].items() if n} == {
        "memory": 6, "revision": 3, "edge": 3, "evidence": 2, "audit": 13}
    kinds = [r["_type"] for r in records[1:]]
    assert kinds == (["memory"] * 6 + ["revision"] * 3 + ["edge"] * 3 + ["evidence"] * 2
                     + ["audit"] * 13)
    alice = next(r for r in records if r.get("id") == ids["alice"])
    assert alice["value"] == {"city": "Lisbon", "n": 1.5}
    assert alice["metadata"] == {"source": "chat"}
    assert alice["provenance"] == {"by": "extractor", "confidence": [0.9, 1]}
    assert alice["version"] == 2 and alice["status"] == "active"
    assert len(alice["embedding"]) == alice["embeddingDimension"] == 256
    assert alice["createdAt"].endswith("+00:00") and alice["scopeKey"] == "user:u1"
    assert not any(k.startswith("meta.") or k in ("nsToken", "scopeToken") for k in alice)
    bob = next(r for r in records if r.get("id") == ids["bob"])
    assert bob["status"] == "superseded" and bob["supersededBy"] == ids["new_bob"]
    # Earlier versions (graph.history): the state each edit replaced, with its window.
    revisions = {r["memoryId"]: r for r in records if r["_type"] == "revision"}
    forgotten = next(r["id"] for r in records if r.get("content") == "to be forgotten")
    assert set(revisions) == {ids["alice"], ids["bob"], forgotten}
    old_alice = revisions[ids["alice"]]
    assert (old_alice["version"], old_alice["summary"], old_alice["metadata"]) == (
        1, "moved", {"source": "chat", "turn": 3})
    assert old_alice["recordedUntil"] == alice["updatedAt"]
    assert old_alice["recordedFrom"] == old_alice["createdAt"] == alice["createdAt"]
    assert not any(k in old_alice for k in ("id", "embedding", "nsToken", "labels"))
    assert (revisions[ids["bob"]]["status"], revisions[ids["bob"]]["version"]) == ("active", 1)
    supports = next(r for r in records if r.get("type") == "SUPPORTS")
    assert (supports["source"], supports["target"], supports["metadata"]) == (
        ids["alice"], ids["carol"], {"why": "same trip"})
    operations = sorted(r["operation"] for r in records if r["_type"] == "audit")
    assert operations == sorted(["write"] * 7 + ["update", "supersede", "link", "link",
                                                 "forget", "delete"])


async def test_round_trip_into_a_wiped_namespace_is_identical(
    gql: GraphQLClient, transfer: TransferGraph, runtime: Any, graph_client: Any,
    namespace: str, tmp_path: Path,
) -> None:
    ids = await populate(gql, namespace)
    first = await export_text(transfer, namespace)
    path = tmp_path / "export.jsonl"
    path.write_text(first)
    await wipe(graph_client, namespace)
    assert await count_memories(graph_client, namespace) == 0
    report = await import_export(transfer, path, embedder=runtime.service.embedder,
                                 dimension=runtime.service.dimension)
    assert report.counts == {"memory": 6, "revision": 3, "edge": 3, "evidence": 2,
                             "audit": 13} and report.reembedded == 0
    second = await export_text(transfer, namespace)
    assert first.splitlines()[1:] == second.splitlines()[1:]
    # The fact is found by its evidence again.
    found = (await gql.ok(BY_EVIDENCE, {"ns": namespace, "ref": "notes.md:3"}))
    assert [f["memory"]["id"] for f in found["factsByEvidence"]] == [ids["fact"]]
    # The history came back too: alice as of her first version.
    versions = (await gql.ok(HISTORY, {"ns": namespace, "id": ids["alice"]}))["memoryHistory"]
    assert [(v["version"], v["memory"]["summary"]) for v in versions] == [
        (2, "moved in 2023"), (1, "moved")]
    then = (await gql.ok(GET_AS_OF, {"ns": namespace, "id": ids["alice"],
                                     "asOf": versions[1]["recordedFrom"]}))["memory"]
    assert (then["summary"], then["version"], then["metadata"]) == (
        "moved", 1, {"source": "chat", "turn": 3})


async def test_copy_into_another_namespace_with_remapped_ids(
    gql: GraphQLClient, transfer: TransferGraph, runtime: Any, namespace: str, tmp_path: Path,
) -> None:
    ids = await populate(gql, namespace)
    first = await export_text(transfer, namespace)
    path = tmp_path / "export.jsonl"
    path.write_text(first)
    copy = f"test/{uuid.uuid4().hex[:12]}"
    with pytest.raises(Conflict) as refused:
        await import_export(transfer, path, embedder=runtime.service.embedder,
                            dimension=runtime.service.dimension, namespace=copy)
    assert "--remap-ids" in refused.value.message and refused.value.details["line"] == 2
    assert await count_memories(transfer.client, copy) == 0

    for _ in range(2):  # importing the copy again changes nothing
        await import_export(transfer, path, embedder=runtime.service.embedder,
                            dimension=runtime.service.dimension, namespace=copy,
                            remap_ids=True)
    second = await export_text(transfer, copy)
    remap = remapper(copy, True)
    assert body(second) == remapped(body(first), remap)
    got = (await gql.ok(GET, {"ns": copy, "id": remap(ids["alice"])}))["memory"]
    assert got["content"] == "Alice moved to Lisbon" and got["version"] == 2
    assert got["namespace"] == copy
    found = (await gql.ok(BY_EVIDENCE, {"ns": copy, "ref": "https://x"}))["factsByEvidence"]
    assert [f["memory"]["id"] for f in found] == [remap(ids["fact"])]


async def test_pages_split_a_batch_written_at_one_instant(
    gql: GraphQLClient, transfer: TransferGraph, namespace: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One writeMemories batch shares its createdAt: the keyset must page through it."""
    written = (await gql.ok(WRITE_MANY, {"inputs": [mem(namespace, f"same instant {i}")
                                                    for i in range(7)]}))["writeMemories"]
    await gql.ok(ADD_EDGE, {"input": {"namespace": namespace, "sourceId": written[0]["id"],
                                      "targetId": written[6]["id"], "type": "RELATED"}})
    whole = await export_text(transfer, namespace)
    monkeypatch.setattr(kinds, "PAGE", 2)
    paged = await export_text(transfer, namespace)
    assert paged.splitlines()[1:] == whole.splitlines()[1:]
    assert [r["_type"] for r in map(json.loads, paged.splitlines()[1:])] == (
        ["memory"] * 7 + ["edge"] + ["audit"] * 8)


async def test_reimport_is_idempotent(
    gql: GraphQLClient, transfer: TransferGraph, runtime: Any, graph_client: Any,
    namespace: str, tmp_path: Path,
) -> None:
    await populate(gql, namespace)
    path = tmp_path / "export.jsonl"
    path.write_text(await export_text(transfer, namespace))
    before = await export_text(transfer, namespace)
    for _ in range(2):
        await import_export(transfer, path, embedder=runtime.service.embedder,
                            dimension=runtime.service.dimension)
    after = await export_text(transfer, namespace)
    assert before.splitlines()[1:] == after.splitlines()[1:]
    records = await graph_client.read((
        "MATCH (a:Memory)-[r]->(b:Memory) WHERE a.namespace = $ns RETURN count(r) AS n",
        {"ns": namespace}))
    assert records[0]["n"] == 3


@pytest.mark.parametrize(("line", "problem"), [
    ('{"_type": "memory", "id": "x"', "not JSON"),
    ('{"_type": "fact-ish"}', "unknown _type"),
    (('{"_type": "memory", "id": "m2", "content": " ", "status": "active", "version": 1,'
      ' "createdAt": "2024-01-01T00:00:00+00:00", "updatedAt": "2024-01-01T00:00:00+00:00"}'),
     "content must not be blank"),
    (('{"_type": "memory", "id": "m2", "content": "x", "status": "zombie", "version": 1,'
      ' "createdAt": "2024-01-01T00:00:00+00:00", "updatedAt": "2024-01-01T00:00:00+00:00"}'),
     "status must be one of"),
    (('{"_type": "memory", "id": "m2", "content": "x", "status": "active", "version": 1,'
      ' "createdAt": "yesterday", "updatedAt": "2024-01-01T00:00:00+00:00"}'),
     "createdAt is not an ISO 8601 time"),
    (('{"_type": "memory", "id": "m2", "content": "x", "status": "active", "version": 1,'
      ' "labels": ["ApiKey"], "createdAt": "2024-01-01T00:00:00+00:00",'
      ' "updatedAt": "2024-01-01T00:00:00+00:00"}'), "labels may only be"),
    (('{"_type": "edge", "id": "e1", "type": "RELATED", "source": "m1", "target": "nowhere",'
      ' "createdAt": "2024-01-01T00:00:00+00:00"}'), "neither in the file nor in namespace"),
])
async def test_a_bad_line_is_named_and_nothing_is_written(
    transfer: TransferGraph, runtime: Any, namespace: str, tmp_path: Path, line: str,
    problem: str,
) -> None:
    good = {"_type": "memory", "id": f"m1-{uuid.uuid4().hex}", "content": "fine",
            "status": "active", "version": 1, "createdAt": "2024-01-01T00:00:00+00:00",
            "updatedAt": "2024-01-01T00:00:00+00:00"}
    header = {"_type": "header", "format": "memlattice-export", "version": 1,
              "namespace": namespace, "counts": {}}
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([json.dumps(header), json.dumps(good),
                               line.replace('"m1"', json.dumps(good["id"]))]) + "\n")
    for dry_run in (True, False):
        with pytest.raises(ValidationError) as failed:
            await import_export(transfer, path, embedder=runtime.service.embedder,
                                dimension=runtime.service.dimension, dry_run=dry_run)
        assert failed.value.message.startswith("line 3: "), failed.value.message
        assert problem in failed.value.message and failed.value.details["line"] == 3
        assert failed.value.code == "VALIDATION"
    assert await count_memories(transfer.client, namespace) == 0


async def test_dry_run_counts_and_writes_nothing(
    gql: GraphQLClient, transfer: TransferGraph, runtime: Any, graph_client: Any,
    namespace: str, tmp_path: Path,
) -> None:
    await populate(gql, namespace)
    path = tmp_path / "export.jsonl"
    path.write_text(await export_text(transfer, namespace))
    await wipe(graph_client, namespace)
    report = await import_export(transfer, path, embedder=runtime.service.embedder,
                                 dimension=runtime.service.dimension, dry_run=True)
    assert report.dry_run and report.counts == {"memory": 6, "revision": 3, "edge": 3,
                                                "evidence": 2, "audit": 13}
    assert await count_memories(graph_client, namespace) == 0


def harn_log(root: Path, ns: str, lines: list[dict[str, Any]]) -> Path:
    log = root / ".harn" / "memory" / ns / "events.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return log


async def import_harn(transfer: TransferGraph, runtime: Any, path: Path,
                      namespace: str | None = None, dry_run: bool = False,
                      ) -> list[foreign.LogReport]:
    reports = []
    for log, ns in foreign.harn_logs(path, namespace):
        report = foreign.LogReport(namespace=ns)
        await foreign.apply_ops(
            transfer, runtime.service,
            lambda r, log=log, ns=ns: foreign.harn_ops(log, ns, remap_namespace=bool(namespace),
                                                       report=r),
            report, actor="harn-test", dry_run=dry_run)
        reports.append(report)
    return reports


async def test_harn_log_replays_with_last_write_wins_and_tombstones(
    gql: GraphQLClient, transfer: TransferGraph, runtime: Any, namespace: str, tmp_path: Path,
) -> None:
    a, b, c = (f"harn-{uuid.uuid4().hex}" for _ in range(3))
    lines = [
        {"_type": "memory_record", "id": a, "namespace": namespace, "key": "city",
         "value": {"city": "Porto"}, "text": "Alice lives in Porto", "tags": ["alice"],
         "stored_at": "2024-03-01T10:00:00Z", "provenance": {"tool": "chat"}},
        {"_type": "memory_record", "id": b, "namespace": namespace, "key": None,
         "value": None, "text": "Bob is here", "tags": [], "stored_at": 1709287200000,
         "provenance": None},
        {"_type": "config", "backend": "bm25"},
        {"_type": "memory_record", "id": a, "namespace": namespace, "key": "city",
         "value": {"city": "Lisbon"}, "text": "Alice lives in Lisbon", "tags": ["alice", "moved"],
         "stored_at": "2024-03-02T10:00:00Z", "provenance": {"tool": "chat"}},
        {"_type": "tombstone", "id": b, "namespace": namespace,
         "deleted_at": "2024-03-03T00:00:00Z"},
        {"_type": "memory_record", "id": c, "namespace": namespace, "text": "Carol",
         "stored_at": 1709380800},
    ]
    root = tmp_path
    harn_log(root, namespace, lines)
    (report,) = await import_harn(transfer, runtime, root / ".harn")
    assert report.namespace == namespace
    assert (report.records, report.tombstones, report.skipped) == (4, 1, {"config": 1})
    assert (report.written, report.forgotten) == (4, 1)

    alice = (await gql.ok(GET, {"ns": namespace, "id": a}))["memory"]
    assert alice["content"] == "Alice lives in Lisbon" and alice["version"] == 2
    assert alice["value"] == {"city": "Lisbon"} and alice["tags"] == ["alice", "moved"]
    assert alice["createdAt"].startswith("2024-03-01T10:00:00")
    assert alice["updatedAt"].startswith("2024-03-02T10:00:00")
    assert alice["provenance"] == {"tool": "chat"} and alice["key"] == "city"
    assert alice["embeddingDimension"] == 256
    bob = (await gql.ok(GET, {"ns": namespace, "id": b}))["memory"]
    assert bob["status"] == "FORGOTTEN" and bob["forgottenAt"].startswith("2024-03-03")
    carol = (await gql.ok(GET, {"ns": namespace, "id": c}))["memory"]
    assert carol["createdAt"].startswith("2024-03-02T12:00:00")

    # Replaying the same log (as a file path this time) changes nothing.
    (again,) = await import_harn(transfer, runtime,
                                 root / ".harn" / "memory" / namespace / "events.jsonl")
    assert (again.written, again.forgotten) == (0, 0)
    assert (await gql.ok(GET, {"ns": namespace, "id": a}))["memory"]["version"] == 2


async def test_harn_bad_record_is_named_and_nothing_is_written(
    transfer: TransferGraph, runtime: Any, namespace: str, tmp_path: Path,
) -> None:
    harn_log(tmp_path, namespace, [
        {"_type": "memory_record", "id": "ok-1", "text": "fine", "stored_at": 1},
        {"_type": "memory_record", "id": "bad-1", "text": "", "stored_at": 2},
    ])
    with pytest.raises(ValidationError) as failed:
        await import_harn(transfer, runtime, tmp_path / ".harn")
    assert failed.value.message.startswith("line 2: ") and "content" in failed.value.message
    assert await count_memories(transfer.client, namespace) == 0


async def test_jsonl_entries_import_with_source_and_expiry(
    gql: GraphQLClient, transfer: TransferGraph, runtime: Any, namespace: str, tmp_path: Path,
) -> None:
    ids = [f"entry-{uuid.uuid4().hex}" for _ in range(3)]
    path = tmp_path / "entries.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in [
        {"id": ids[0], "content": "Prefers dark mode", "tags": ["ui"], "source": "settings",
         "created_ms": 1700000000000, "expires_ms": None},
        {"id": ids[1], "content": "Temporary token", "tags": [], "source": "session",
         "created_ms": 1700000000000, "expires_ms": 1700000001000},
        {"id": ids[2], "content": "Meeting on Friday", "source": "calendar",
         "created_ms": 1700000000000, "expires_ms": 4102444800000},
    ]) + "\n")
    for _ in range(2):
        report = foreign.LogReport(namespace=namespace)
        await foreign.apply_ops(transfer, runtime.service,
                                lambda r: foreign.entry_ops(path, namespace, report=r),
                                report, actor="entries-test", dry_run=False)
    assert (report.records, report.expired) == (3, 1)
    assert await count_memories(transfer.client, namespace) == 3
    dark = (await gql.ok(GET, {"ns": namespace, "id": ids[0]}))["memory"]
    assert (dark["content"], dark["source"], dark["tags"], dark["version"]) == (
        "Prefers dark mode", "settings", ["ui"], 1)
    assert dark["createdAt"].startswith("2023-11-14T22:13:20")
    expired = await gql.error(GET, {"ns": namespace, "id": ids[1]})
    assert code(expired) == "NOT_FOUND"
    meeting = (await gql.ok(GET, {"ns": namespace, "id": ids[2]}))["memory"]
    assert meeting["expiresAt"].startswith("2100-01-01")


def cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NEO4J_URI": settings.neo4j.uri or "",
           "NEO4J_USER": settings.neo4j.user,
           "NEO4J_PASSWORD": settings.neo4j.password.get_secret_value(),
           "MEMLATTICE_EMBEDDING_PROVIDER": "none", "TERM": "dumb"}
    return subprocess.run([sys.executable, "-m", "memlattice.cli", *args], env=env,
                          capture_output=True, text=True, timeout=300, check=False)


async def test_cli_export_and_import_without_a_terminal(
    gql: GraphQLClient, settings: Settings, transfer: TransferGraph, namespace: str,
    tmp_path: Path,
) -> None:
    await populate(gql, namespace)
    out = tmp_path / "cli.jsonl"
    # Each command is a process of its own (seconds to start): the two exports, and
    # then the two imports that must write nothing, run side by side.
    exported, to_stdout = await asyncio.gather(
        asyncio.to_thread(cli, settings, "export", "--namespace", namespace,
                          "--output", str(out)),
        asyncio.to_thread(cli, settings, "export", "--namespace", namespace))
    assert exported.returncode == 0, exported.stderr
    assert "\x1b" not in exported.stderr and "\r" not in exported.stderr
    assert (f"exported {namespace}: 6 memory, 3 revision, 3 edge, 2 evidence, 13 audit"
            in " ".join(exported.stderr.split()))
    assert "memory: 6" in exported.stderr and "audit: 13" in exported.stderr
    assert out.read_text().splitlines()[1:] == (
        await export_text(transfer, namespace)).splitlines()[1:]

    assert to_stdout.returncode == 0 and json.loads(to_stdout.stdout.splitlines()[0])[
        "namespace"] == namespace

    copy = f"test/{uuid.uuid4().hex[:12]}"
    dry, refused = await asyncio.gather(
        asyncio.to_thread(cli, settings, "import", str(out), "--namespace", copy,
                          "--remap-ids", "--dry-run"),
        asyncio.to_thread(cli, settings, "import", str(out), "--namespace", copy))
    assert dry.returncode == 0, dry.stderr
    assert (f"would import into {copy}: 6 memory, 3 revision, 3 edge, 2 evidence, 13 audit"
            in " ".join(dry.stderr.split()))  # a long line may wrap
    assert refused.returncode == 2 and "--remap-ids" in refused.stderr
    assert await count_memories(transfer.client, copy) == 0
    done = cli(settings, "import", str(out), "--namespace", copy, "--remap-ids")
    assert done.returncode == 0, done.stderr
    assert await count_memories(transfer.client, copy) == 6


async def test_the_sample_entries_import_into_two_namespaces_and_again(
    transfer: TransferGraph, runtime: Any, namespace: str,
) -> None:
    """docs/examples/notes.jsonl (ids derived, not given) goes into any namespace, as many
    times as one likes: derived ids depend on the namespace, since ids are global."""
    path = Path(__file__).resolve().parents[2] / "docs" / "examples" / "notes.jsonl"
    for target in (namespace, namespace + "-copy", namespace):
        report = foreign.LogReport(namespace=target)
        await foreign.apply_ops(transfer, runtime.service,
                                lambda r, t=target: foreign.entry_ops(path, t, report=r),
                                report, actor="entries-test", dry_run=False)
        assert report.records == 2
    assert await count_memories(transfer.client, namespace) == 2
    assert await count_memories(transfer.client, namespace + "-copy") == 2
