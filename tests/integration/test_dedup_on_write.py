"""Dedup on write: the same content (normalised) in the same namespace and scope is one
memory, reinforced and returned with `duplicateOf`; near-duplicates are reported."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from memlattice.core.model import Sensitivity
from memlattice_client import AsyncMemlatticeClient
from tests.conftest import GraphQLClient
from tests.integration._keys import as_key, make_key
from tests.integration._support import count_memories, mem, mix, seeded

FIELDS = """
  id content tags confidence version reinforcements lastReinforcedAt duplicateOf
  sensitivity scope userId sessionId
  nearDuplicates { kind memoryId reason score }
"""
WRITE = "mutation($input: MemoryInput!) { writeMemory(input: $input) {" + FIELDS + "} }"
WRITE_MANY = ("mutation($inputs: [MemoryInput!]!) { writeMemories(inputs: $inputs) {"
              + FIELDS + "} }")
GET = "query($ns: String!, $id: ID!) { memory(namespace: $ns, id: $id) {" + FIELDS + "} }"
AUDIT = ("query($ns: String!, $id: ID!) { auditTrail(namespace: $ns, id: $id)"
         " { operation version } }")


async def write(gql: GraphQLClient, input: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = (await gql.ok(WRITE, {"input": input}))["writeMemory"]
    return result


async def test_the_same_content_again_reinforces_the_memory_it_repeats(
    gql: GraphQLClient, namespace: str, graph_client: Any,
) -> None:
    first = await write(gql, mem(namespace, "Alice prefers green tea.", tags=["drink"],
                                 confidence=0.6))
    assert first["duplicateOf"] is None and first["reinforcements"] == 0
    again = await write(gql, mem(namespace, "  alice PREFERS green\u00a0tea ",
                                 tags=["preference", "drink"], confidence=0.9))
    assert again["id"] == first["id"]
    assert again["duplicateOf"] == first["id"]
    assert again["content"] == "Alice prefers green tea."  # the stored words are kept
    assert again["tags"] == ["drink", "preference"]
    assert again["confidence"] == 0.9
    assert again["reinforcements"] == 1 and again["lastReinforcedAt"] is not None
    assert again["version"] == 2
    assert await count_memories(graph_client, namespace) == 1
    stored = (await gql.ok(GET, {"ns": namespace, "id": first["id"]}))["memory"]
    assert stored["reinforcements"] == 1 and stored["duplicateOf"] is None
    audit = (await gql.ok(AUDIT, {"ns": namespace, "id": first["id"]}))["auditTrail"]
    assert sorted(a["operation"] for a in audit) == ["reinforce", "write"]


async def test_another_scope_sensitivity_or_key_is_another_memory(
    gql: GraphQLClient, namespace: str, graph_client: Any,
) -> None:
    text = "The deploy runs on Fridays"
    base = await write(gql, mem(namespace, text, scope="USER", userId="u1"))
    for other in ({"scope": "USER", "userId": "u2"},
                  {"scope": "SESSION", "userId": "u1", "sessionId": "s1"},
                  {},
                  {"scope": "USER", "userId": "u1", "sensitivity": "MEDIUM"},
                  {"scope": "USER", "userId": "u1", "key": "deploy.day"}):
        written = await write(gql, mem(namespace, text, **other))
        assert written["duplicateOf"] is None and written["id"] != base["id"], other
    assert await count_memories(graph_client, namespace) == 6
    again = await write(gql, mem(namespace, text, scope="USER", userId="u1"))
    assert again["duplicateOf"] == base["id"]


async def test_allow_duplicate_stores_a_copy(
    gql: GraphQLClient, namespace: str, graph_client: Any,
) -> None:
    first = await write(gql, mem(namespace, "Bob is on call"))
    copy = await write(gql, mem(namespace, "Bob is on call", allowDuplicate=True))
    assert copy["id"] != first["id"] and copy["duplicateOf"] is None
    assert await count_memories(graph_client, namespace) == 2
    # A repeat without the flag reinforces the oldest of them.
    again = await write(gql, mem(namespace, "bob is on call!"))
    assert again["duplicateOf"] == first["id"]


async def test_a_batch_holding_the_same_content_twice_stores_it_once(
    gql: GraphQLClient, namespace: str, graph_client: Any,
) -> None:
    existing = await write(gql, mem(namespace, "Carol leads the data team"))
    written = (await gql.ok(WRITE_MANY, {"inputs": [
        mem(namespace, "Dan joined in May", tags=["people"]),
        mem(namespace, "Carol leads the data team."),
        mem(namespace, "DAN JOINED IN MAY", tags=["hr"]),
        mem(namespace, "Erin moved to Oslo"),
        mem(namespace, "Dan joined in May", allowDuplicate=True),
    ]}))["writeMemories"]
    dan, carol, dan_again, erin, dan_copy = written
    assert dan["duplicateOf"] is None
    assert dan_again["id"] == dan["id"] and dan_again["duplicateOf"] == dan["id"]
    assert dan["tags"] == ["people", "hr"] and dan["reinforcements"] == 1
    assert carol["id"] == existing["id"] and carol["duplicateOf"] == existing["id"]
    assert erin["duplicateOf"] is None
    assert dan_copy["duplicateOf"] is None and dan_copy["id"] != dan["id"]
    # existing + Dan + Erin + Dan's copy
    assert await count_memories(graph_client, namespace) == 4


async def test_concurrent_identical_writes_end_with_one_memory(
    gql: GraphQLClient, namespace: str, graph_client: Any,
) -> None:
    results = await asyncio.gather(*[
        write(gql, mem(namespace, "Frank's birthday is on 3 March", tags=[f"t{i}"]))
        for i in range(8)])
    ids = {r["id"] for r in results}
    assert len(ids) == 1
    assert await count_memories(graph_client, namespace) == 1
    assert sum(r["duplicateOf"] is None for r in results) == 1
    (id,) = ids
    stored = (await gql.ok(GET, {"ns": namespace, "id": id}))["memory"]
    assert stored["reinforcements"] == 7
    assert sorted(stored["tags"]) == sorted(f"t{i}" for i in range(8))


async def test_a_duplicate_the_key_may_not_see_is_not_revealed(
    gql: GraphQLClient, namespace: str, graph_client: Any, session_app: Any,
) -> None:
    hidden = await write(gql, mem(namespace, "The merger closes in June",
                                  sensitivity="HIGH", embedding=seeded(5)))
    secret = await make_key(graph_client, namespace, clearance=Sensitivity.LOW)
    async with as_key(session_app, secret) as low:
        written = await write(low, mem(namespace, "The merger closes in June",
                                       embedding=seeded(5)))
    assert written["id"] != hidden["id"] and written["duplicateOf"] is None
    assert written["sensitivity"] == "LOW"
    assert hidden["id"] not in {h["memoryId"] for h in written["nearDuplicates"]}
    assert await count_memories(graph_client, namespace) == 2


async def test_near_duplicates_are_reported_without_blocking_the_write(
    gql: GraphQLClient, namespace: str, graph_client: Any,
) -> None:
    near = await write(gql, mem(namespace, "Grace lives in Lisbon",
                                embedding=mix((1, 1.0), (2, 0.1))))
    far = await write(gql, mem(namespace, "The office has a cat",
                               embedding=mix((7, 1.0))))
    other_scope = await write(gql, mem(namespace, "Grace resides in Lisbon", scope="USER",
                                       userId="u9", embedding=mix((1, 1.0), (2, 0.1))))
    written = await write(gql, mem(namespace, "Grace is a resident of Lisbon",
                                   embedding=mix((1, 1.0), (2, 0.12))))
    assert written["duplicateOf"] is None and written["id"] != near["id"]
    reported = {h["memoryId"]: h for h in written["nearDuplicates"]}
    assert set(reported) == {near["id"]}
    assert far["id"] not in reported and other_scope["id"] not in reported
    hint = reported[near["id"]]
    assert hint["kind"] == "SUPPORTS" and hint["score"] >= 0.92
    # Worded alike but negated: a contradiction candidate, still no refusal.
    negated = await write(gql, mem(namespace, "Grace does not live in Lisbon",
                                   embedding=mix((1, 1.0), (2, 0.11))))
    kinds = {h["memoryId"]: h["kind"] for h in negated["nearDuplicates"]}
    assert kinds[near["id"]] == "CONTRADICTS"
    assert await count_memories(graph_client, namespace) == 5


async def test_a_forgotten_memory_is_not_reinforced(
    gql: GraphQLClient, namespace: str,
) -> None:
    first = await write(gql, mem(namespace, "Heidi uses vim"))
    await gql.ok("mutation($ns: String!, $id: ID!) { forget(namespace: $ns,"
                 " predicate: {id: $id}) { count } }", {"ns": namespace, "id": first["id"]})
    again = await write(gql, mem(namespace, "Heidi uses vim"))
    assert again["duplicateOf"] is None and again["id"] != first["id"]


async def test_an_updated_content_is_matched_by_its_new_words(
    gql: GraphQLClient, namespace: str,
) -> None:
    first = await write(gql, mem(namespace, "Ivan drinks coffee"))
    await gql.ok("mutation($ns: String!, $id: ID!, $p: MemoryPatchInput!) {"
                 " updateMemory(namespace: $ns, id: $id, patch: $p) { id } }",
                 {"ns": namespace, "id": first["id"], "p": {"content": "Ivan drinks tea"}})
    assert (await write(gql, mem(namespace, "ivan drinks tea")))["duplicateOf"] == first["id"]
    assert (await write(gql, mem(namespace, "Ivan drinks coffee")))["duplicateOf"] is None


async def test_the_python_client_reads_duplicate_of_and_near_duplicates(
    namespace: str, session_app: tuple[Any, Any], admin_key: str,
) -> None:
    transport = httpx.ASGITransport(app=session_app[1])
    async with AsyncMemlatticeClient("http://test", transport=transport, api_key=admin_key,
                                     actor="py-dedup") as client:
        first = await client.write_memory(namespace, "Judy owns a kayak",
                                          embedding=mix((3, 1.0)))
        again = await client.write_memory(namespace, "judy owns a kayak.", tags=["boat"],
                                          embedding=mix((3, 1.0)))
        assert again.id == first.id and again.duplicate_of == first.id
        assert again.reinforcements == 1 and again.tags == ("boat",)
        assert again.last_reinforced_at is not None
        batch = await client.write_memories([
            {"namespace": namespace, "content": "Judy owns a red kayak",
             "embedding": mix((3, 1.0), (4, 0.05))},
            {"namespace": namespace, "content": "Judy owns a kayak", "allow_duplicate": True,
             "embedding": mix((3, 1.0))},
        ])
        assert batch[0].duplicate_of is None
        assert [h.memory_id for h in batch[0].near_duplicates] == [first.id]
        assert batch[1].id != first.id and batch[1].duplicate_of is None


async def test_a_bulk_batch_is_not_checked_for_near_duplicates(
    gql: GraphQLClient, namespace: str,
) -> None:
    old = await write(gql, mem(namespace, "Kim plays the cello", embedding=mix((9, 1.0))))
    near = mem(namespace, "Kim is a cellist", embedding=mix((9, 1.0), (10, 0.05)))
    small = (await gql.ok(WRITE_MANY, {"inputs": [near]}))["writeMemories"]
    assert [h["memoryId"] for h in small[0]["nearDuplicates"]] == [old["id"]]
    bulk = [mem(namespace, "Kim is a cellist, truly", embedding=mix((9, 1.0), (10, 0.06)))] + [
        mem(namespace, f"filler memory {i}", embedding=seeded(1000 + i)) for i in range(64)]
    written = (await gql.ok(WRITE_MANY, {"inputs": bulk}))["writeMemories"]
    assert len({m["id"] for m in written}) == 65
    assert all(m["nearDuplicates"] == [] for m in written)


async def test_memories_written_before_the_migration_are_hashed_and_matched(
    gql: GraphQLClient, namespace: str, graph_client: Any,
) -> None:
    from memlattice.graph.duplicates import backfill_hashes

    first = await write(gql, mem(namespace, "Leo speaks Portuguese."))
    await graph_client.write(("MATCH (m:Memory {id: $id}) REMOVE m.contentHash",
                              {"id": first["id"]}))
    assert await backfill_hashes(graph_client, batch=1, namespace=namespace) == 1
    assert await backfill_hashes(graph_client, namespace=namespace) == 0  # idempotent
    again = await write(gql, mem(namespace, "leo speaks portuguese"))
    assert again["duplicateOf"] == first["id"]
