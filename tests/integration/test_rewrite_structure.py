"""A memory whose content changes (updateMemory, supersedeMemory) gets the
structure of its new content in the same transaction: what it mentions and its
event time. The old content's mentions do not linger."""

from __future__ import annotations

from typing import Any

from tests.conftest import GraphQLClient

FIELDS = "id version content createdAt eventStart eventEnd"
WRITE = f"mutation($input: MemoryInput!) {{ writeMemory(input: $input) {{ {FIELDS} }} }}"
UPDATE = ("mutation($ns: String!, $id: ID!, $patch: MemoryPatchInput!, $v: Int) {"
          " updateMemory(namespace: $ns, id: $id, patch: $patch, expectedVersion: $v)"
          f" {{ {FIELDS} }} }}")
SUPERSEDE = ("mutation($id: ID!, $memory: MemoryInput!) {"
             " supersedeMemory(id: $id, memory: $memory) {"
             f" previous {{ {FIELDS} }} current {{ {FIELDS} }} }} }}")
MENTIONED = """MATCH (m:Memory {id: $id})-[:MENTIONS]->(e:Entity)
RETURN e.key AS key, e.namespace AS namespace ORDER BY key"""


def day(text: str) -> str:
    return f"{text}T00:00:00+00:00"


async def mentioned(graph_client: Any, id: str) -> list[str]:
    rows = await graph_client.read((MENTIONED, {"id": id}))
    return [str(r["key"]) for r in rows]


async def write(gql: GraphQLClient, namespace: str, content: str) -> dict[str, Any]:
    data = await gql.ok(WRITE, {"input": {"namespace": namespace, "content": content,
                                          "now": "2023-05-08T12:00:00Z"}})
    memory: dict[str, Any] = data["writeMemory"]
    return memory


async def test_updating_content_replaces_mentions_and_event_time(
        gql: GraphQLClient, graph_client: Any, namespace: str) -> None:
    first = await write(gql, namespace, "Alice met Bob in Paris yesterday.")
    assert await mentioned(graph_client, first["id"]) == ["alice", "bob", "paris"]
    assert (first["eventStart"], first["eventEnd"]) == (day("2023-05-07"), day("2023-05-08"))

    # New content: its names and its time, resolved against the memory's own time
    # (when it was recorded), not the time of the update.
    updated = (await gql.ok(UPDATE, {"ns": namespace, "id": first["id"], "patch": {
        "content": "Carol moved to Berlin two years ago."}}))["updateMemory"]
    assert await mentioned(graph_client, first["id"]) == ["berlin", "carol"]
    assert (updated["eventStart"], updated["eventEnd"]) == (day("2021-01-01"),
                                                             day("2022-01-01"))
    assert updated["createdAt"] == first["createdAt"]

    # Content that names nothing and no time clears both.
    cleared = (await gql.ok(UPDATE, {"ns": namespace, "id": first["id"], "patch": {
        "content": "we like green tea"}}))["updateMemory"]
    assert await mentioned(graph_client, first["id"]) == []
    assert (cleared["eventStart"], cleared["eventEnd"]) == (None, None)
    # As read back, not only as returned.
    (row,) = await graph_client.read((
        "MATCH (m:Memory {id: $id}) RETURN m.eventStart AS start, m.eventEnd AS end",
        {"id": first["id"]}))
    assert (row["start"], row["end"]) == (None, None)


async def test_an_update_that_keeps_the_content_keeps_its_structure(
        gql: GraphQLClient, graph_client: Any, namespace: str) -> None:
    first = await write(gql, namespace, "Alice flew to Lisbon yesterday.")
    before = await mentioned(graph_client, first["id"])
    assert before == ["alice", "lisbon"]
    tagged = (await gql.ok(UPDATE, {"ns": namespace, "id": first["id"], "patch": {
        "tags": ["travel"]}}))["updateMemory"]
    assert await mentioned(graph_client, first["id"]) == before
    assert (tagged["eventStart"], tagged["eventEnd"]) == (first["eventStart"],
                                                          first["eventEnd"])
    assert tagged["eventStart"] is not None


async def test_a_refused_update_changes_no_mentions(
        gql: GraphQLClient, graph_client: Any, namespace: str) -> None:
    first = await write(gql, namespace, "Alice met Bob yesterday.")
    error = await gql.error(UPDATE, {"ns": namespace, "id": first["id"], "v": 7, "patch": {
        "content": "Carol met Dave in 2020."}})
    assert error["extensions"]["code"] == "VERSION_CONFLICT"
    assert await mentioned(graph_client, first["id"]) == ["alice", "bob"]
    (row,) = await graph_client.read((
        "MATCH (e:Entity {namespace: $ns}) WHERE e.key IN ['carol', 'dave']"
        " RETURN count(e) AS made", {"ns": namespace}))
    assert row["made"] == 0


async def test_an_update_in_one_namespace_leaves_anothers_entities(
        gql: GraphQLClient, graph_client: Any, namespace: str) -> None:
    other = namespace + "-other"
    mine = await write(gql, namespace, "Alice painted a lake.")
    theirs = await write(gql, other, "Alice painted a sunset.")
    await gql.ok(UPDATE, {"ns": namespace, "id": mine["id"], "patch": {
        "content": "Bob painted a lake."}})
    rows = await graph_client.read((MENTIONED, {"id": theirs["id"]}))
    assert [(r["key"], r["namespace"]) for r in rows] == [("alice", other)]
    rows = await graph_client.read((MENTIONED, {"id": mine["id"]}))
    assert [(r["key"], r["namespace"]) for r in rows] == [("bob", namespace)]


async def test_a_successor_mentions_what_its_content_names(
        gql: GraphQLClient, graph_client: Any, namespace: str) -> None:
    old = await write(gql, namespace, "Alice lives in Paris.")
    done = (await gql.ok(SUPERSEDE, {"id": old["id"], "memory": {
        "namespace": namespace, "content": "Alice moved to Rome last week.",
        "now": "2023-07-01T00:00:00Z"}}))["supersedeMemory"]
    current = done["current"]
    assert await mentioned(graph_client, current["id"]) == ["alice", "rome"]
    # The ISO week before Saturday 1 July 2023.
    assert (current["eventStart"], current["eventEnd"]) == (day("2023-06-19"),
                                                             day("2023-06-26"))
    # The retired memory keeps what it said.
    assert await mentioned(graph_client, old["id"]) == ["alice", "paris"]


async def test_noun_phrases_become_entities_when_turned_on(
        gql: GraphQLClient, graph_client: Any, namespace: str) -> None:
    from memlattice.graph.entities import link_noun_phrases

    link_noun_phrases(True)
    try:
        first = await write(gql, namespace, "Caroline joined the support groups.")
        second = await write(gql, namespace, "Melanie found a support group too.")
    finally:
        link_noun_phrases(False)
    rows = await graph_client.read((
        "MATCH (a:Memory {id: $a})-[:MENTIONS]->(e:Entity)<-[:MENTIONS]-(b:Memory {id: $b})"
        " RETURN e.key AS key, e.kind AS kind, e.namespace AS namespace",
        {"a": first["id"], "b": second["id"]}))
    assert [(r["key"], r["kind"], r["namespace"]) for r in rows] == [
        ("support group", "phrase", namespace)]
    # Off again: a later write links names only.
    third = await write(gql, namespace, "Jon left the support group.")
    assert await mentioned(graph_client, third["id"]) == ["jon"]


async def test_facts_mention_what_their_claim_names(
        gql: GraphQLClient, graph_client: Any, namespace: str) -> None:
    from tests.integration._knowledge import STORE_FACT, fact

    stored = (await gql.ok(STORE_FACT, {"input": fact(
        namespace, "preference", "Alice prefers Lisbon to Porto.")}))["storeFact"]
    assert await mentioned(graph_client, stored["fact"]["memory"]["id"]) == [
        "alice", "lisbon", "porto"]


async def test_an_imported_memory_mentions_what_its_content_names(
        gql: GraphQLClient, graph_client: Any, session_app: tuple[Any, Any], namespace: str,
        tmp_path: Any) -> None:
    from memlattice.graph.transfer import TransferGraph
    from memlattice.portability.importer import import_export
    from memlattice.server.app import runtime_of
    from tests.integration.test_portability import export_text, wipe

    runtime = runtime_of(session_app[0])
    transfer = TransferGraph(runtime.client)
    written = await write(gql, namespace, "Alice met Bob in Paris yesterday.")
    path = tmp_path / "export.jsonl"
    path.write_text(await export_text(transfer, namespace))
    await wipe(graph_client, namespace)
    assert await mentioned(graph_client, written["id"]) == []
    await import_export(transfer, path, embedder=runtime.service.embedder,
                        dimension=runtime.service.dimension)
    assert await mentioned(graph_client, written["id"]) == ["alice", "bob", "paris"]
