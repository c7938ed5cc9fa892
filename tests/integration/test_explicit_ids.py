"""Ids mean what they say: a write that names its id is stored under it, is the same
memory again (a retry), or is refused with CONFLICT; only writes without an id are
deduplicated (graph.explicit_ids, core.duplicates.plan_writes)."""

from __future__ import annotations

import uuid
from typing import Any

from tests.conftest import GraphQLClient
from tests.integration._keys import as_key, make_key
from tests.integration._support import count_memories, mem

FIELDS = "id content version reinforcements duplicateOf written namespace"
WRITE = "mutation($input: MemoryInput!) { writeMemory(input: $input) {" + FIELDS + "} }"
WRITE_MANY = ("mutation($inputs: [MemoryInput!]!) { writeMemories(inputs: $inputs) {"
              + FIELDS + "} }")
GET = "query($ns: String!, $id: ID!) { memory(namespace: $ns, id: $id) {" + FIELDS + "} }"
WRITE_RECORD = ("mutation($input: RecordInput!) { writeRecord(input: $input) {"
                " created record { memory { id content version } } } }")


def new_id() -> str:
    return f"own-{uuid.uuid4()}"


async def write(gql: GraphQLClient, input: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = (await gql.ok(WRITE, {"input": input}))["writeMemory"]
    return result


async def test_an_id_with_content_already_stored_is_stored_under_that_id(
    gql: GraphQLClient, namespace: str, graph_client: Any,
) -> None:
    first = await write(gql, mem(namespace, "Alice prefers green tea"))
    own = new_id()
    named = await write(gql, mem(namespace, "Alice prefers green tea", id=own))
    assert named["id"] == own and named["duplicateOf"] is None
    assert named["written"] == "CREATED" and first["written"] == "CREATED"
    stored = (await gql.ok(GET, {"ns": namespace, "id": own}))["memory"]
    assert stored["id"] == own and stored["written"] is None
    assert (await gql.ok(GET, {"ns": namespace, "id": first["id"]}))["memory"][
        "reinforcements"] == 0
    assert await count_memories(graph_client, namespace) == 2


async def test_the_same_id_and_content_again_is_the_same_memory_unchanged(
    gql: GraphQLClient, namespace: str, graph_client: Any,
) -> None:
    own = new_id()
    first = await write(gql, mem(namespace, "The deploy runs on Fridays", id=own))
    again = await write(gql, mem(namespace, "the deploy runs on Fridays.", id=own))
    assert again["id"] == own and again["written"] == "UNCHANGED"
    assert again["version"] == first["version"] and again["reinforcements"] == 0
    assert again["content"] == "The deploy runs on Fridays"
    assert await count_memories(graph_client, namespace) == 1


async def test_an_id_held_by_other_content_is_a_conflict_that_writes_nothing(
    gql: GraphQLClient, namespace: str, graph_client: Any,
) -> None:
    own = new_id()
    await write(gql, mem(namespace, "Bob lives in Bergen", id=own))
    error = await gql.error(WRITE, {"input": mem(namespace, "Bob lives in Oslo", id=own)})
    assert error["extensions"]["code"] == "CONFLICT"
    assert error["extensions"]["id"] == own
    # A batch with one such input writes none of its other inputs either.
    error = await gql.error(WRITE_MANY, {"inputs": [
        mem(namespace, "Carol likes jazz"), mem(namespace, "Bob lives in Oslo", id=own)]})
    assert error["extensions"]["code"] == "CONFLICT" and error["extensions"]["index"] == 1
    stored = (await gql.ok(GET, {"ns": namespace, "id": own}))["memory"]
    assert stored["content"] == "Bob lives in Bergen" and stored["version"] == 1
    assert await count_memories(graph_client, namespace) == 1


async def test_an_id_of_another_namespace_is_a_conflict_that_tells_nothing_of_it(
    gql: GraphQLClient, namespace: str, graph_client: Any, session_app: Any,
) -> None:
    own, other = new_id(), f"{namespace}-other"
    await write(gql, mem(other, "Secret plans of the other tenant", id=own))
    secret = await make_key(graph_client, namespace)
    async with as_key(session_app, secret) as tenant:
        same = await tenant.error(WRITE, {"input": mem(
            namespace, "Secret plans of the other tenant", id=own)})
        different = await tenant.error(WRITE, {"input": mem(namespace, "Mine", id=own)})
    for error in (same, different):
        assert error["extensions"]["code"] == "CONFLICT"
        text = str(error)
        assert other not in text and "Secret" not in text
    assert same["message"] == different["message"]
    assert await count_memories(graph_client, namespace) == 0


async def test_a_batch_with_the_same_content_with_and_without_an_id(
    gql: GraphQLClient, namespace: str, graph_client: Any,
) -> None:
    own = new_id()
    plain, named = (await gql.ok(WRITE_MANY, {"inputs": [
        mem(namespace, "Dan drinks coffee"), mem(namespace, "Dan drinks coffee", id=own)]}
    ))["writeMemories"]
    assert named["id"] == own and named["written"] == "CREATED"
    # The write without an id is deduplicated, into the memory the id names.
    assert plain["id"] == own and plain["duplicateOf"] == own
    assert plain["written"] == "REINFORCED"
    assert await count_memories(graph_client, namespace) == 1
    # The same batch again: the named input is a retry, the plain one reinforces it.
    plain, named = (await gql.ok(WRITE_MANY, {"inputs": [
        mem(namespace, "Dan drinks coffee"), mem(namespace, "Dan drinks coffee", id=own)]}
    ))["writeMemories"]
    assert named["written"] == "UNCHANGED" and plain["written"] == "REINFORCED"
    assert plain["duplicateOf"] == own
    assert await count_memories(graph_client, namespace) == 1


async def test_two_ids_for_one_content_in_a_batch_are_two_memories(
    gql: GraphQLClient, namespace: str, graph_client: Any,
) -> None:
    a, b = new_id(), new_id()
    first, second = (await gql.ok(WRITE_MANY, {"inputs": [
        mem(namespace, "Erin runs", id=a), mem(namespace, "Erin runs", id=b)]}
    ))["writeMemories"]
    assert (first["id"], second["id"]) == (a, b)
    assert first["written"] == second["written"] == "CREATED"
    assert await count_memories(graph_client, namespace) == 2
    error = await gql.error(WRITE_MANY, {"inputs": [
        mem(namespace, "Erin swims", id=a), mem(namespace, "Erin swims", id=a)]})
    assert error["extensions"]["code"] == "CONFLICT"


async def test_a_batch_naming_one_id_twice_says_which_inputs(
    gql: GraphQLClient, namespace: str, graph_client: Any,
) -> None:
    """Two contents under one id, or one content twice, in a batch of several: the
    CONFLICT names the id and the input where it came again (as an id held by another
    memory does), and the batch writes nothing. Ids are compared exactly: one that
    differs only in case is another id."""
    own = new_id()
    for second in ("Gina rows", "Gina sails"):
        error = await gql.error(WRITE_MANY, {"inputs": [
            mem(namespace, "Gina walks"), mem(namespace, "Gina sails", id=own),
            mem(namespace, "Gina hikes"), mem(namespace, second, id=own)]})
        assert error["extensions"]["code"] == "CONFLICT", error
        assert error["extensions"]["id"] == own and error["extensions"]["index"] == 3, error
        assert error["extensions"]["first"] == 1, error
        assert await count_memories(graph_client, namespace) == 0
    upper = own.upper()
    first, second = (await gql.ok(WRITE_MANY, {"inputs": [
        mem(namespace, "Gina sails", id=own), mem(namespace, "Gina sails", id=upper)]}
    ))["writeMemories"]
    assert (first["id"], second["id"]) == (own, upper)
    assert first["written"] == second["written"] == "CREATED"


async def test_a_record_id_is_stored_retried_or_refused(
    gql: GraphQLClient, namespace: str, graph_client: Any,
) -> None:
    own = new_id()
    record = {"namespace": namespace, "type": "SEMANTIC", "id": own, "payload": {
        "subject": "Frank", "predicate": "works at", "object": "Acme",
        "validity": {"kind": "global"}}}
    first = (await gql.ok(WRITE_RECORD, {"input": record}))["writeRecord"]
    assert first["created"] is True and first["record"]["memory"]["id"] == own
    again = (await gql.ok(WRITE_RECORD, {"input": record}))["writeRecord"]
    assert again["created"] is False and again["record"]["memory"]["id"] == own
    assert again["record"]["memory"]["version"] == 1
    changed = {**record, "payload": {**record["payload"], "object": "Initech"}}
    error = await gql.error(WRITE_RECORD, {"input": changed})
    assert error["extensions"]["code"] == "CONFLICT"
    # A plain memory may not take a record's id either, whatever its words.
    error = await gql.error(WRITE, {"input": mem(
        namespace, first["record"]["memory"]["content"], id=own)})
    assert error["extensions"]["code"] == "CONFLICT"
    assert await count_memories(graph_client, namespace) == 1


INGEST = ("mutation($input: ConversationInput!) { ingestConversation(input: $input) {"
          " created memories { id content } } }")


async def test_a_message_id_resent_with_other_words_is_a_conflict(
    gql: GraphQLClient, namespace: str, graph_client: Any,
) -> None:
    def conversation(text: str) -> dict[str, Any]:
        return {"namespace": namespace, "sessionId": "s1", "messages": [
            {"content": "hello", "speaker": "Ann", "id": "m1"},
            {"content": text, "speaker": "Bo", "id": "m2"}]}

    first = (await gql.ok(INGEST, {"input": conversation("hi Ann")}))["ingestConversation"]
    assert first["created"] == 2
    again = (await gql.ok(INGEST, {"input": conversation("hi Ann")}))["ingestConversation"]
    assert again["created"] == 0  # the same conversation again: nothing new
    error = await gql.error(INGEST, {"input": conversation("bye Ann")})
    assert error["extensions"]["code"] == "CONFLICT" and error["extensions"]["index"] == 1
    assert await count_memories(graph_client, namespace) == 2
