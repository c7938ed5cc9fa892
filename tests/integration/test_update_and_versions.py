"""updateMemory: optimistic concurrency, patch semantics, re-embedding, metadata index."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.conftest import GraphQLClient
from tests.integration._support import (
    DIM,
    FORGET,
    GET,
    GET_WITH_EMBEDDING,
    LIST,
    SEARCH,
    SUPERSEDE,
    UPDATE,
    WRITE,
    basis,
    code,
    mem,
    seeded,
    ts,
)


async def write(gql: GraphQLClient, namespace: str, content: str = "original content",
                **fields: Any) -> dict[str, Any]:
    data = await gql.ok(WRITE, {"input": mem(namespace, content, **fields)})
    written: dict[str, Any] = data["writeMemory"]
    return written


async def update(gql: GraphQLClient, namespace: str, id: str, patch: dict[str, Any],
                 version: int | None = None) -> dict[str, Any]:
    data = await gql.ok(UPDATE, {"ns": namespace, "id": id, "patch": patch, "v": version})
    updated: dict[str, Any] = data["updateMemory"]
    return updated


async def test_expected_version_success_bumps_version(
    gql: GraphQLClient, namespace: str
) -> None:
    m = await write(gql, namespace)
    u = await update(gql, namespace, m["id"], {"summary": "s1"}, version=1)
    assert u["version"] == 2 and u["summary"] == "s1"
    assert ts(u["updatedAt"]) > ts(m["updatedAt"])
    assert u["createdAt"] == m["createdAt"]
    u = await update(gql, namespace, m["id"], {"summary": "s2"}, version=2)
    assert u["version"] == 3
    # Without expectedVersion the update is unconditional.
    u = await update(gql, namespace, m["id"], {"summary": "s3"})
    assert u["version"] == 4


async def test_stale_version_conflicts_and_changes_nothing(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    m = await write(gql, namespace, summary="kept")
    await update(gql, namespace, m["id"], {"summary": "second"}, version=1)
    before = (await gql.ok(GET, {"ns": namespace, "id": m["id"]}))["memory"]
    for stale in (1, 3, 0, -1):
        error = await gql.error(UPDATE, {"ns": namespace, "id": m["id"],
                                         "patch": {"summary": "lost", "content": "lost"},
                                         "v": stale})
        assert code(error) == "VERSION_CONFLICT"
        assert error["extensions"]["expected"] == stale
        assert error["extensions"]["actual"] == 2
    after = (await gql.ok(GET, {"ns": namespace, "id": m["id"]}))["memory"]
    assert after == before
    audits = await graph_client.read((
        "MATCH (a:AuditEntry {memoryId: $id}) WHERE a.operation = 'update'"
        " RETURN count(a) AS n", {"id": m["id"]}))
    assert audits[0]["n"] == 1


async def test_unset_fields_stay_and_null_clears(gql: GraphQLClient, namespace: str) -> None:
    m = await write(gql, namespace, key="k", summary="sum", value={"a": 1}, tags=["t"],
                    metadata={"m": 1}, source="src", sourceType="chat", extractionMethod="llm",
                    provenance={"p": 1}, confidence=0.5,
                    expiresAt=(datetime.now(UTC) + timedelta(days=1)).isoformat())
    u = await update(gql, namespace, m["id"], {"confidence": 0.9})
    for field in ("key", "summary", "value", "tags", "metadata", "source", "sourceType",
                  "extractionMethod", "provenance", "expiresAt", "content",
                  "embeddingModel", "scope"):
        assert u[field] == m[field], field
    assert u["confidence"] == pytest.approx(0.9)

    cleared = await update(gql, namespace, m["id"], {
        "summary": None, "key": None, "value": None, "source": None, "sourceType": None,
        "extractionMethod": None, "provenance": None, "expiresAt": None})
    for field in ("summary", "key", "value", "source", "sourceType", "extractionMethod",
                  "provenance", "expiresAt"):
        assert cleared[field] is None, field
    assert cleared["tags"] == ["t"] and cleared["metadata"] == {"m": 1}
    assert cleared["version"] == 3
    read = (await gql.ok(GET, {"ns": namespace, "id": m["id"]}))["memory"]
    assert read == cleared


@pytest.mark.parametrize("field", ["content", "tags", "metadata", "confidence"])
async def test_required_fields_cannot_be_cleared(
    gql: GraphQLClient, namespace: str, field: str
) -> None:
    m = await write(gql, namespace, tags=["a"])
    error = await gql.error(UPDATE, {"ns": namespace, "id": m["id"], "patch": {field: None}})
    assert code(error) == "VALIDATION"
    after = (await gql.ok(GET, {"ns": namespace, "id": m["id"]}))["memory"]
    assert after["version"] == 1


async def test_invalid_patches_write_nothing(gql: GraphQLClient, namespace: str) -> None:
    m = await write(gql, namespace)
    for patch, expected in (({"confidence": 1.5}, "VALIDATION"),
                            ({"content": "   "}, "VALIDATION"),
                            ({"tags": [""]}, "VALIDATION"),
                            ({"metadata": {"": 1}}, "VALIDATION"),
                            ({"embedding": [0.5] * (DIM + 3)}, "DIMENSION_MISMATCH")):
        error = await gql.error(UPDATE, {"ns": namespace, "id": m["id"], "patch": patch})
        assert code(error) == expected, patch
    after = (await gql.ok(GET, {"ns": namespace, "id": m["id"]}))["memory"]
    assert after["version"] == 1 and after["content"] == "original content"


async def test_update_unknown_or_foreign_id_is_not_found(
    gql: GraphQLClient, namespace: str
) -> None:
    m = await write(gql, namespace)
    error = await gql.error(UPDATE, {"ns": namespace, "id": "nope", "patch": {"summary": "x"}})
    assert code(error) == "NOT_FOUND"
    error = await gql.error(UPDATE, {"ns": namespace + "/other", "id": m["id"],
                                     "patch": {"summary": "x"}})
    assert code(error) == "NOT_FOUND"
    assert (await gql.ok(GET, {"ns": namespace, "id": m["id"]}))["memory"]["version"] == 1


async def test_content_change_re_embeds(gql: GraphQLClient, namespace: str) -> None:
    m = (await gql.ok(WRITE, {"input": {"namespace": namespace,
                                        "content": "the cat sat on the mat"}}))["writeMemory"]
    before = (await gql.ok(GET_WITH_EMBEDDING, {"ns": namespace, "id": m["id"]}))["memory"]
    await update(gql, namespace, m["id"], {"content": "quarterly revenue grew strongly"})
    after = (await gql.ok(GET_WITH_EMBEDDING, {"ns": namespace, "id": m["id"]}))["memory"]
    assert len(after["embedding"]) == DIM
    assert after["embedding"] != pytest.approx(before["embedding"])
    assert after["embeddingModel"] == before["embeddingModel"]

    # A summary-only change keeps the vector.
    await update(gql, namespace, m["id"], {"summary": "about revenue"})
    again = (await gql.ok(GET_WITH_EMBEDDING, {"ns": namespace, "id": m["id"]}))["memory"]
    assert again["embedding"] == pytest.approx(after["embedding"])


async def test_client_embedding_in_patch_replaces_vector(
    gql: GraphQLClient, namespace: str
) -> None:
    m = await write(gql, namespace, embedding=basis(0))
    new = seeded(99)
    u = await update(gql, namespace, m["id"], {"embedding": new, "embeddingModel": "mine"})
    assert u["embeddingModel"] == "mine" and u["embeddingDimension"] == DIM
    got = (await gql.ok(GET_WITH_EMBEDDING, {"ns": namespace, "id": m["id"]}))["memory"]
    assert got["embedding"] == pytest.approx(new)
    # Content plus a client vector: the client's vector wins over re-embedding.
    u = await update(gql, namespace, m["id"], {"content": "new words", "embedding": basis(5)})
    got = (await gql.ok(GET_WITH_EMBEDDING, {"ns": namespace, "id": m["id"]}))["memory"]
    assert got["embedding"] == pytest.approx(basis(5))
    assert u["embeddingModel"] == "client"


async def test_updated_text_is_searchable(gql: GraphQLClient, namespace: str) -> None:
    m = await write(gql, namespace, "the aardvark digs")
    await update(gql, namespace, m["id"], {"content": "the pangolin rolls", "tags": ["mammal"]})

    async def lexical(q: str) -> list[str]:
        hits = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                                "query": q, "mode": "LEXICAL"}}))["search"]
        return [h["memory"]["id"] for h in hits]

    assert await lexical("pangolin") == [m["id"]]
    assert await lexical("mammal") == [m["id"]]
    assert await lexical("aardvark") == []


async def test_metadata_replacement_drops_old_keys_from_filtering(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    m = await write(gql, namespace, metadata={"lang": "en", "team": "blue", "n": 1})

    async def match(meta: dict[str, Any]) -> list[str]:
        page = (await gql.ok(LIST, {"filter": {"namespace": namespace, "metadata": meta},
                                    "first": 10}))["memories"]
        return [e["node"]["id"] for e in page["edges"]]

    assert await match({"team": "blue"}) == [m["id"]]
    u = await update(gql, namespace, m["id"], {"metadata": {"lang": "pt", "n": 2}})
    assert u["metadata"] == {"lang": "pt", "n": 2}
    assert await match({"team": "blue"}) == []
    assert await match({"lang": "en"}) == []
    assert await match({"lang": "pt", "n": 2}) == [m["id"]]
    props = await graph_client.read((
        "MATCH (m:Memory {id: $id}) RETURN [k IN keys(m) WHERE k STARTS WITH 'meta.'] AS ks",
        {"id": m["id"]}))
    assert sorted(props[0]["ks"]) == ["meta.lang", "meta.n"]

    await update(gql, namespace, m["id"], {"metadata": {}})
    assert await match({"lang": "pt"}) == []
    assert await match({}) == [m["id"]]


async def test_inactive_memories_cannot_be_updated(gql: GraphQLClient, namespace: str) -> None:
    old = await write(gql, namespace, "old")
    await gql.ok(SUPERSEDE, {"id": old["id"], "memory": mem(namespace, "new")})
    error = await gql.error(UPDATE, {"ns": namespace, "id": old["id"],
                                     "patch": {"summary": "x"}})
    assert code(error) == "CONFLICT"

    gone = await write(gql, namespace, "gone")
    await gql.ok(FORGET, {"ns": namespace, "p": {"id": gone["id"]}})
    error = await gql.error(UPDATE, {"ns": namespace, "id": gone["id"],
                                     "patch": {"summary": "x"}})
    assert code(error) == "CONFLICT"


async def test_expired_memory_cannot_be_updated(gql: GraphQLClient, namespace: str) -> None:
    past = (datetime.now(UTC) - timedelta(seconds=30)).isoformat()
    m = await write(gql, namespace, expiresAt=past)
    error = await gql.error(UPDATE, {"ns": namespace, "id": m["id"],
                                     "patch": {"expiresAt": None}})
    assert code(error) == "NOT_FOUND"


async def test_concurrent_updates_exactly_one_wins(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    m = await write(gql, namespace)
    n = 8
    bodies = await asyncio.gather(*(
        gql.raw(UPDATE, {"ns": namespace, "id": m["id"], "patch": {"summary": f"writer {i}"},
                         "v": 1})
        for i in range(n)))
    winners = [b for b in bodies if not b.get("errors")]
    losers = [b for b in bodies if b.get("errors")]
    assert len(winners) == 1, bodies
    assert all(code(b["errors"][0]) == "VERSION_CONFLICT" for b in losers), losers
    winner = winners[0]["data"]["updateMemory"]
    assert winner["version"] == 2
    final = (await gql.ok(GET, {"ns": namespace, "id": m["id"]}))["memory"]
    assert final["version"] == 2 and final["summary"] == winner["summary"]
    audits = await graph_client.read((
        "MATCH (a:AuditEntry {memoryId: $id}) WHERE a.operation = 'update'"
        " RETURN count(a) AS n", {"id": m["id"]}))
    assert audits[0]["n"] == 1


async def test_concurrent_unconditional_updates_all_apply(
    gql: GraphQLClient, namespace: str
) -> None:
    m = await write(gql, namespace)
    n = 6
    bodies = await asyncio.gather(*(
        gql.raw(UPDATE, {"ns": namespace, "id": m["id"], "patch": {"summary": f"w{i}"}})
        for i in range(n)))
    assert all(not b.get("errors") for b in bodies), bodies
    versions = sorted(b["data"]["updateMemory"]["version"] for b in bodies)
    assert versions == list(range(2, 2 + n))  # no lost update
    final = (await gql.ok(GET, {"ns": namespace, "id": m["id"]}))["memory"]
    assert final["version"] == 1 + n
