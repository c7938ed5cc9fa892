"""A store written by an earlier release migrates forward with no loss (issue 30, item 3).

`tests/fixtures/old-store-<commit>.backup.gz` was written by that release itself
(tests/fixtures/build_old_store.py ran it from this repository's history, made
its writes through its own API and backed the database up); beside it, what
that release answered for each memory. Here no old code runs: the backup is
restored into a fresh Neo4j through `restore_store`, which applies the current
migrations the old store lacked. Then:

- every node and relationship of the old store is there, labels, type and
  every property exactly as the old release wrote it (migrations may only add
  properties, never change or drop one), and nothing else but what the
  migrations add (counts per label and type as in the file);
- the migrations' own work is done (each memory has its content hash);
- the current API answers, for every memory, what the old one did (content,
  tags, key, value, metadata, versions, status, times, vectors), the same
  history and the same edges, and its searches find what the old ones found.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

from memlattice.core.settings import EmbeddingSettings, LimitsSettings, Settings
from memlattice.graph.migrations import applied_versions, migrations
from memlattice.portability.backup_values import encode_properties
from memlattice.portability.restore import restore_store
from tests.conftest import GraphQLClient
from tests.integration._apps import app_with
from tests.integration._stores import client_for, describe, reset

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
(BACKUP,) = sorted(FIXTURES.glob("old-store-*.backup.gz"))
ANSWERS = json.loads(BACKUP.with_name(BACKUP.name.replace(".backup.gz", ".answers.json"))
                     .read_text())
DIMENSION = 8  # the fixture's client vectors (build_old_store.DIMENSION)

GET = ("query($ns: String!, $id: ID!) { memory(namespace: $ns, id: $id) {"
       " id namespace key content value summary tags metadata scope agentId userId sessionId"
       " taskId status confidence sensitivity source sourceType provenance createdAt"
       " updatedAt expiresAt version supersededBy supersededAt forgottenAt embedding } }")
HISTORY = """query($ns: String!, $id: ID!) { memoryHistory(namespace: $ns, id: $id) {
  version memory { content summary tags metadata } } }"""
EDGES = """query($ns: String!, $id: ID!) { edges(namespace: $ns, id: $id, direction: OUT) {
  id type sourceId targetId metadata } }"""
SEARCH = """query($input: SearchInput!) { search(input: $input) { memory { id } } }"""


def old_store() -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    nodes, rels, end = [], [], {}
    with gzip.open(BACKUP, "rt") as lines:
        for line in lines:
            record = json.loads(line)
            if record["t"] == "node":
                nodes.append(record)
            elif record["t"] == "rel":
                rels.append(record)
            elif record["t"] == "end":
                end = record
    return nodes, rels, end


def upgraded_settings(spare_settings: Settings) -> Settings:
    return spare_settings.model_copy(update={"embedding": EmbeddingSettings(
        provider="none", dimension=DIMENSION)})


# A busy machine may take longer than the default 30 s request budget over the
# first requests of a fresh app (the embedder loads, Neo4j warms up).
ROOMY = LimitsSettings(request_timeout_s=600)


async def test_an_old_release_store_upgrades_with_nothing_lost(spare_settings: Settings) -> None:
    settings = upgraded_settings(spare_settings)
    client = client_for(settings)
    try:
        await reset(client)
        nodes, rels, end = old_store()
        report, applied = await restore_store(client, BACKUP, dimension=DIMENSION,
                                              index=settings.vector_index)
        old_versions = {n["p"]["version"] for n in nodes if "Migration" in n["l"]}
        current = {m.version for m in migrations(DIMENSION)}
        assert applied == sorted(current - old_versions) and applied  # it did upgrade
        assert await applied_versions(client) == current
        assert (report.nodes, report.relationships) == (len(nodes), len(rels))

        # Every old node, property by property; migrations may only add properties.
        now = await client.read(("MATCH (n) RETURN elementId(n) AS k, labels(n) AS l,"
                                 " properties(n) AS p", {}))
        by_labels: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for r in now:
            by_labels.setdefault(tuple(sorted(r["l"])), []).append(
                {"k": r["k"], "p": encode_properties(dict(r["p"]))})
        matched: dict[str, str] = {}  # old key -> new element id
        lost = []
        for node in nodes:
            candidates = by_labels.get(tuple(sorted(node["l"])), [])
            found = next((c for c in candidates if c["k"] not in matched.values()
                          and all(c["p"].get(k) == v for k, v in node["p"].items())), None)
            if found is None:
                lost.append(node)
            else:
                matched[node["k"]] = found["k"]
        assert not lost, f"{len(lost)} old nodes changed or lost, e.g. {lost[:2]}"
        added = [r for r in now if r["k"] not in matched.values()
                 and "Migration" not in r["l"]]
        assert not added, f"nodes no migration explains: {added[:3]}"
        new_rels = Counter((r["t"], r["a"], r["b"], json.dumps(
            encode_properties(dict(r["p"])), sort_keys=True)) for r in await client.read((
                "MATCH (a)-[r]->(b) RETURN type(r) AS t, elementId(a) AS a, elementId(b) AS b,"
                " properties(r) AS p", {})))
        old_rels = Counter((r["y"], matched[r["s"]], matched[r["e"]],
                            json.dumps(r["p"], sort_keys=True)) for r in rels)
        assert new_rels == old_rels
        described = await describe(client)
        assert {k: v for k, v in described.labels.items() if k != "Migration"} == {
            k: v for k, v in end["labels"].items() if k != "Migration"}
        assert dict(described.types) == end["types"]

        # The migrations' own work: memory content hashes (migration 14) backfilled.
        (unhashed,) = await client.read(("MATCH (m:Memory) WHERE m.contentHash IS NULL"
                                         " RETURN count(m) AS n", {}))
        assert unhashed["n"] == 0

        async with app_with(settings, limits=ROOMY) as http:
            await same_answers(GraphQLClient(http))
    finally:
        await client.close()


async def same_answers(gql: GraphQLClient) -> None:
    """The current API reads back what the old one answered, memory by memory."""
    assert ANSWERS["memories"]
    for id, old in ANSWERS["memories"].items():
        ns = old["namespace"]
        now = (await gql.ok(GET, {"ns": ns, "id": id}))["memory"]
        assert now == old, id
        history = (await gql.ok(HISTORY, {"ns": ns, "id": id}))["memoryHistory"]
        assert history == ANSWERS["history"][id], id
        edges = (await gql.ok(EDGES, {"ns": ns, "id": id}))["edges"]
        assert sorted(edges, key=lambda e: e["id"]) == sorted(ANSWERS["edges"][id],
                                                               key=lambda e: e["id"]), id
    for key, old_hits in ANSWERS["searches"].items():
        ns, query = key.split(" ", 1)
        hits = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": ns}, "query": query,
                                                "embedding": _vector(query), "limit": 10}}))
        found = {h["memory"]["id"] for h in hits["search"]}
        assert set(old_hits) <= found, (key, old_hits, found)


def _vector(query: str) -> list[float]:
    import zlib

    from tests.fixtures.build_old_store import vector

    return vector(zlib.crc32(query.encode()))
