"""writeMemory / writeMemories / memory(id): every field round-trips, batches are atomic."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memlattice.core.settings import Settings
from tests.conftest import GraphQLClient
from tests.integration._support import (
    DIM,
    GET,
    GET_WITH_EMBEDDING,
    LIST,
    SEARCH,
    WRITE,
    WRITE_MANY,
    basis,
    code,
    count_memories,
    mem,
    seeded,
    ts,
)


def test_configured_dimension_is_the_one_the_suite_assumes(settings: Settings) -> None:
    assert settings.embedding.dimension == DIM


async def test_write_with_every_field_round_trips(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    vector = seeded(7)
    created = "2024-03-01T12:30:45.123456+00:00"
    expires = (datetime.now(UTC) + timedelta(days=30)).isoformat()
    own_id = f"mem-{uuid.uuid4().hex}"
    value = {"city": "Lisbon", "since": 2023, "nested": {"ok": True, "list": [1, "two", None]}}
    provenance = {"doc": "chat-17", "span": [3, 9]}
    data = await gql.ok(WRITE, {"input": {
        "namespace": namespace, "id": own_id, "content": "Alice moved to Lisbon",
        "key": "alice.city", "value": value, "summary": "Alice lives in Lisbon",
        "tags": ["person", "location", "person"], "metadata": {"lang": "en", "n": 3},
        "scope": "SESSION", "agentId": "agent-1", "userId": "user-1", "sessionId": "s-1",
        "taskId": "t-1", "confidence": 0.75, "source": "chat://17", "sourceType": "chat",
        "extractionMethod": "llm", "provenance": provenance, "expiresAt": expires,
        "embedding": vector, "embeddingModel": "my-model", "now": created,
    }})
    m = data["writeMemory"]
    assert m["id"] == own_id
    assert m["namespace"] == namespace
    assert m["content"] == "Alice moved to Lisbon"
    assert m["key"] == "alice.city"
    assert m["value"] == value
    assert m["summary"] == "Alice lives in Lisbon"
    assert m["tags"] == ["person", "location"]  # duplicates dropped, order kept
    assert m["metadata"] == {"lang": "en", "n": 3}
    assert (m["scope"], m["agentId"], m["userId"], m["sessionId"], m["taskId"]) == (
        "SESSION", "agent-1", "user-1", "s-1", "t-1")
    assert m["status"] == "ACTIVE"
    assert m["confidence"] == pytest.approx(0.75)
    assert (m["source"], m["sourceType"], m["extractionMethod"]) == ("chat://17", "chat", "llm")
    assert m["provenance"] == provenance
    assert ts(m["createdAt"]) == ts(created)
    assert ts(m["updatedAt"]) == ts(created)
    assert ts(m["expiresAt"]) == ts(expires)
    assert m["version"] == 1
    assert m["accessCount"] == 0
    assert m["embeddingModel"] == "my-model"
    assert m["embeddingDimension"] == DIM
    assert m["supersededBy"] is None and m["supersededAt"] is None
    assert m["forgottenAt"] is None

    read = (await gql.ok(GET, {"ns": namespace, "id": own_id}))["memory"]
    assert read == m

    emb = (await gql.ok(GET_WITH_EMBEDDING, {"ns": namespace, "id": own_id}))["memory"]
    assert emb["embedding"] == pytest.approx(vector)

    # Behind the API's back: one node, one `write` audit entry at the caller's time.
    records = await graph_client.read((
        "MATCH (m:Memory {id: $id}) RETURN m.scopeKey AS scopeKey, m.`meta.lang` AS lang,"
        " size(m.embedding) AS dims", {"id": own_id}))
    assert records[0]["scopeKey"] == "session:user-1/s-1"
    assert records[0]["lang"] == '"en"'
    assert records[0]["dims"] == DIM


async def test_minimal_write_gets_defaults_and_uuid7_id(
    gql: GraphQLClient, namespace: str
) -> None:
    before = datetime.now(UTC)
    m = (await gql.ok(WRITE, {"input": mem(namespace, "just a note")}))["writeMemory"]
    after = datetime.now(UTC)
    parsed = uuid.UUID(m["id"])
    assert parsed.version == 7
    assert m["id"][14] == "7"
    assert m["key"] is None and m["value"] is None and m["summary"] is None
    assert m["tags"] == [] and m["metadata"] == {}
    assert m["scope"] is None and m["confidence"] == 1.0
    assert m["provenance"] is None and m["expiresAt"] is None
    assert m["embeddingModel"] == "client"  # client vector without a model name
    assert before - timedelta(seconds=1) <= ts(m["createdAt"]) <= after + timedelta(seconds=1)


async def test_ids_are_time_ordered_uuid7(gql: GraphQLClient, namespace: str) -> None:
    ids = []
    for i in range(3):
        ids.append((await gql.ok(WRITE, {"input": mem(namespace, f"note {i}")}))[
            "writeMemory"]["id"])
    assert all(uuid.UUID(i).version == 7 for i in ids)
    assert ids == sorted(ids)
    assert len(set(ids)) == 3


async def test_server_embeds_when_no_vector_is_sent(gql: GraphQLClient, namespace: str) -> None:
    written = (await gql.ok(WRITE, {"input": {"namespace": namespace,
                                              "content": "the server embeds this"}}))
    m = written["writeMemory"]
    assert m["embeddingDimension"] == DIM
    assert m["embeddingModel"] and m["embeddingModel"] != "client"
    emb = (await gql.ok(GET_WITH_EMBEDDING, {"ns": namespace, "id": m["id"]}))["memory"]
    assert len(emb["embedding"]) == DIM


async def test_naive_now_is_taken_as_utc(gql: GraphQLClient, namespace: str) -> None:
    m = (await gql.ok(WRITE, {"input": mem(namespace, "naive clock",
                                           now="2020-05-06T07:08:09")}))["writeMemory"]
    assert ts(m["createdAt"]) == datetime(2020, 5, 6, 7, 8, 9, tzinfo=UTC)


async def test_falsy_json_values_are_kept(gql: GraphQLClient, namespace: str) -> None:
    for value in (0, False, "", [], {}):
        m = (await gql.ok(WRITE, {"input": mem(namespace, f"value {value!r}",
                                               value=value)}))["writeMemory"]
        assert m["value"] == value and type(m["value"]) is type(value)


async def test_memory_from_another_namespace_is_not_found(
    gql: GraphQLClient, namespace: str
) -> None:
    m = (await gql.ok(WRITE, {"input": mem(namespace, "private")}))["writeMemory"]
    error = await gql.error(GET, {"ns": namespace + "-other", "id": m["id"]})
    assert code(error) == "NOT_FOUND"
    error = await gql.error(GET, {"ns": namespace, "id": "no-such-id"})
    assert code(error) == "NOT_FOUND"


async def test_write_memories_batch_returns_all_in_order(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    inputs = [mem(namespace, f"batch item {i}", key=f"k{i}") for i in range(5)]
    written = (await gql.ok(WRITE_MANY, {"inputs": inputs}))["writeMemories"]
    assert [m["content"] for m in written] == [f"batch item {i}" for i in range(5)]
    assert len({m["id"] for m in written}) == 5
    assert await count_memories(graph_client, namespace) == 5
    # One batch shares one clock.
    assert len({m["createdAt"] for m in written}) == 1
    audits = await graph_client.read((
        "MATCH (a:AuditEntry) WHERE a.namespace = $ns AND a.operation = 'write'"
        " RETURN count(a) AS n", {"ns": namespace}))
    assert audits[0]["n"] == 5


async def test_batch_times_are_stored_as_sent_to_the_microsecond(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    """Batches send times as epoch parts (graph.codec.epoch_parts), not datetimes:
    what is stored and read back must be the same instant, before 1970 too."""
    times = ["1969-07-20T20:17:40.000001+00:00", "2024-02-29T23:59:59.999999+00:00"]
    expires = "2999-12-31T00:00:00.500000+00:00"
    written = (await gql.ok(WRITE_MANY, {"inputs": [
        {**mem(namespace, f"at {t}"), "now": t, "expiresAt": expires} for t in times]}
    ))["writeMemories"]
    for memory, sent in zip(written, times):
        stored = (await gql.ok(GET, {"ns": namespace, "id": memory["id"]}))["memory"]
        assert ts(stored["createdAt"]) == ts(sent) == ts(stored["updatedAt"])
        assert ts(stored["expiresAt"]) == ts(expires)
        assert stored == memory
    rows = await graph_client.read((
        "MATCH (m:Memory {namespace: $ns}) RETURN m.createdAt AS at, m.expiresAt AS exp"
        " ORDER BY at", {"ns": namespace}))
    assert [r["at"].to_native() for r in rows] == [ts(t) for t in times]
    assert all(r["at"].tzinfo is not None and r["at"].utcoffset().total_seconds() == 0
               for r in rows)


async def test_batch_with_one_invalid_item_writes_nothing(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    inputs = [mem(namespace, "fine 1"), mem(namespace, "fine 2", confidence=2.0),
              mem(namespace, "fine 3")]
    error = await gql.error(WRITE_MANY, {"inputs": inputs})
    assert code(error) == "VALIDATION"
    assert await count_memories(graph_client, namespace) == 0


async def test_batch_with_wrong_dimension_writes_nothing(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    inputs = [mem(namespace, "fine"), mem(namespace, "short", embedding=[1.0, 0.0, 0.0])]
    error = await gql.error(WRITE_MANY, {"inputs": inputs})
    assert code(error) == "DIMENSION_MISMATCH"
    assert error["extensions"]["expected"] == DIM and error["extensions"]["actual"] == 3
    assert await count_memories(graph_client, namespace) == 0


async def test_batch_colliding_with_an_existing_id_writes_nothing(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    taken = f"taken-{uuid.uuid4().hex}"
    await gql.ok(WRITE, {"input": mem(namespace, "first", id=taken)})
    inputs = [mem(namespace, "new 1"), mem(namespace, "dup", id=taken), mem(namespace, "new 2")]
    error = await gql.error(WRITE_MANY, {"inputs": inputs})
    assert code(error) == "CONFLICT"
    assert await count_memories(graph_client, namespace) == 1
    still = (await gql.ok(GET, {"ns": namespace, "id": taken}))["memory"]
    assert still["content"] == "first"


async def test_batch_naming_one_id_twice_is_a_conflict(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    same = f"same-{uuid.uuid4().hex}"
    error = await gql.error(WRITE_MANY, {"inputs": [mem(namespace, "a", id=same),
                                                    mem(namespace, "b", id=same)]})
    assert code(error) == "CONFLICT"
    assert await count_memories(graph_client, namespace) == 0


async def test_batch_across_namespaces_or_empty_is_rejected(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    error = await gql.error(WRITE_MANY, {"inputs": [mem(namespace, "a"),
                                                    mem(namespace + "/x", "b")]})
    assert code(error) == "VALIDATION"
    assert await count_memories(graph_client, namespace) == 0
    assert await count_memories(graph_client, namespace + "/x") == 0
    error = await gql.error(WRITE_MANY, {"inputs": []})
    assert code(error) == "VALIDATION"


async def test_duplicate_id_is_a_conflict(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    own = f"dup-{uuid.uuid4().hex}"
    await gql.ok(WRITE, {"input": mem(namespace, "original", id=own)})
    error = await gql.error(WRITE, {"input": mem(namespace, "impostor", id=own)})
    assert code(error) == "CONFLICT"
    # Ids are unique across namespaces too (the constraint is global).
    error = await gql.error(WRITE, {"input": mem(namespace + "/b", "impostor", id=own)})
    assert code(error) == "CONFLICT"
    assert (await gql.ok(GET, {"ns": namespace, "id": own}))["memory"]["content"] == "original"
    assert await count_memories(graph_client, namespace) == 1


@pytest.mark.parametrize("length", [1, DIM - 1, DIM + 1, 2 * DIM])
async def test_embedding_dimension_mismatch(
    gql: GraphQLClient, namespace: str, graph_client: Any, length: int
) -> None:
    error = await gql.error(WRITE, {"input": mem(namespace, "wrong size",
                                                 embedding=[0.1] * length)})
    assert code(error) == "DIMENSION_MISMATCH"
    assert error["extensions"]["expected"] == DIM
    assert error["extensions"]["actual"] == length
    assert str(DIM) in error["message"]
    assert await count_memories(graph_client, namespace) == 0


async def test_empty_embedding_is_rejected(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    error = await gql.error(WRITE, {"input": mem(namespace, "empty vector", embedding=[])})
    assert code(error) == "VALIDATION"
    assert await count_memories(graph_client, namespace) == 0


async def test_expired_memory_is_never_returned(
    gql: GraphQLClient, namespace: str, graph_client: Any
) -> None:
    past = (datetime.now(UTC) - timedelta(minutes=5)).isoformat()
    vector = basis(3)
    expired = (await gql.ok(WRITE, {"input": mem(
        namespace, "zebra expired secret", expiresAt=past, embedding=vector,
        now=(datetime.now(UTC) - timedelta(hours=1)).isoformat())}))["writeMemory"]
    live = (await gql.ok(WRITE, {"input": mem(
        namespace, "zebra live fact", embedding=vector)}))["writeMemory"]
    assert await count_memories(graph_client, namespace) == 2

    assert code(await gql.error(GET, {"ns": namespace, "id": expired["id"]})) == "NOT_FOUND"

    listed = (await gql.ok(LIST, {"filter": {"namespace": namespace,
                                             "statuses": ["ACTIVE", "SUPERSEDED", "FORGOTTEN"]},
                                  "first": 50}))["memories"]
    assert [e["node"]["id"] for e in listed["edges"]] == [live["id"]]
    assert listed["totalCount"] == 1

    for mode, extra in (("LEXICAL", {"query": "zebra"}), ("SEMANTIC", {"vector": vector}),
                        ("HYBRID", {"query": "zebra", "vector": vector})):
        hits = (await gql.ok(SEARCH, {"input": {"filter": {"namespace": namespace},
                                                "mode": mode, **extra}}))["search"]
        assert [h["memory"]["id"] for h in hits] == [live["id"]], mode


async def test_memory_expiring_later_is_visible(gql: GraphQLClient, namespace: str) -> None:
    future = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    m = (await gql.ok(WRITE, {"input": mem(namespace, "later", expiresAt=future)}))["writeMemory"]
    assert (await gql.ok(GET, {"ns": namespace, "id": m["id"]}))["memory"]["id"] == m["id"]
