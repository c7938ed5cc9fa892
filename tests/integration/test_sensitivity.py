"""Sensitivity and clearance: a key sees records up to its clearance, in every query.

An admin writes one memory per level (public..hyper) joined by relationships,
then a `medium` key reads, searches, expands, lists edges and audit trails:
HIGH and HYPER memories must never appear, not even as an id on a path.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from memlattice.core.model import Sensitivity
from tests.conftest import GraphQLClient
from tests.integration._keys import as_key, make_key
from tests.integration._support import (
    ADD_EDGE,
    AUDIT,
    DELETE,
    EDGES,
    FORGET,
    GET,
    UPDATE,
    WRITE,
    code,
    count_memories,
    mem,
    seeded,
)

LEVELS = [s.name for s in Sensitivity]
SEARCH = """
query($input: SearchInput!) {
  search(input: $input) {
    memory { id sensitivity content }
    expanded path { sourceId targetId }
    conflicts { id sensitivity }
  }
}
"""
LIST_ALL = """
query($ns: String!) {
  memories(filter: {namespace: $ns, statuses: [ACTIVE, SUPERSEDED, FORGOTTEN]}, first: 100) {
    totalCount edges { node { id sensitivity } }
  }
}
"""


async def _store(gql: GraphQLClient, namespace: str) -> dict[str, str]:
    """One memory per level, a chain public-low-medium-high-hyper of RELATED edges, and
    CONTRADICTS from every level to `low`. Returns level -> id."""
    ids: dict[str, str] = {}
    for level in LEVELS:
        written = (await gql.ok(WRITE, {"input": mem(
            namespace, f"orchard report {level.lower()}", sensitivity=level,
            embedding=seeded(7))}))["writeMemory"]
        assert written["sensitivity"] == level
        ids[level] = written["id"]
    for a, b in itertools.pairwise(LEVELS):
        await gql.ok(ADD_EDGE, {"input": {"namespace": namespace, "sourceId": ids[a],
                                          "targetId": ids[b], "type": "RELATED"}})
    for level in ("MEDIUM", "HIGH", "HYPER"):
        await gql.ok(ADD_EDGE, {"input": {"namespace": namespace, "sourceId": ids[level],
                                          "targetId": ids["LOW"], "type": "CONTRADICTS"}})
    return ids


def _leaks(payload: Any, hidden: set[str]) -> set[str]:
    text = json.dumps(payload)
    return {i for i in hidden if i in text}


async def test_reads_never_show_records_above_the_clearance(
    gql: GraphQLClient, session_app: Any, graph_client: Any, namespace: str,
) -> None:
    ids = await _store(gql, namespace)
    hidden = {ids["HIGH"], ids["HYPER"]}
    beyond = (await gql.ok(WRITE, {"input": mem(namespace, "orchard annex",
                                                embedding=seeded(7))}))["writeMemory"]["id"]
    await gql.ok(ADD_EDGE, {"input": {"namespace": namespace, "sourceId": ids["HIGH"],
                                      "targetId": beyond, "type": "RELATED"}})
    secret = await make_key(graph_client, namespace, clearance=Sensitivity.MEDIUM)
    async with as_key(session_app, secret) as key:
        for level in ("PUBLIC", "LOW", "MEDIUM"):
            got = (await key.ok(GET, {"ns": namespace, "id": ids[level]}))["memory"]
            assert got["sensitivity"] == level
        for level in ("HIGH", "HYPER"):
            assert code(await key.error(GET, {"ns": namespace, "id": ids[level]})) == "NOT_FOUND"

        listed = (await key.ok(LIST_ALL, {"ns": namespace}))["memories"]
        assert listed["totalCount"] == 4
        assert {e["node"]["sensitivity"] for e in listed["edges"]} == {"PUBLIC", "LOW", "MEDIUM"}

        for mode in ("LEXICAL", "SEMANTIC", "HYBRID"):
            found = (await key.ok(SEARCH, {"input": {
                "filter": {"namespace": namespace}, "query": "orchard report",
                "vector": seeded(7), "mode": mode, "limit": 20,
                "expansion": {"maxExpand": 10, "depth": 3}}}))["search"]
            assert found and not _leaks(found, hidden), mode
            assert {h["memory"]["sensitivity"] for h in found} <= {"PUBLIC", "LOW", "MEDIUM"}
            low = next(h for h in found if h["memory"]["id"] == ids["LOW"])
            assert [c["id"] for c in low["conflicts"]] == [ids["MEDIUM"]]

        # Expansion from MEDIUM reaches LOW and PUBLIC, never HIGH or HYPER, and not the
        # LOW memory that only a path through HIGH leads to (the admin reaches them all).
        expand = {"input": {"filter": {"namespace": namespace}, "query": "medium",
                            "mode": "LEXICAL", "limit": 20,
                            "expansion": {"maxExpand": 10, "depth": 2,
                                          "types": ["RELATED"]}}}
        found = (await key.ok(SEARCH, expand))["search"]
        assert [h["memory"]["id"] for h in found if not h["expanded"]] == [ids["MEDIUM"]]
        assert {h["memory"]["id"] for h in found if h["expanded"]} == {ids["LOW"],
                                                                       ids["PUBLIC"]}
        assert not _leaks(found, hidden | {beyond})
    admin_found = (await gql.ok(SEARCH, expand))["search"]
    assert {h["memory"]["id"] for h in admin_found if h["expanded"]} == {
        ids["PUBLIC"], ids["LOW"], ids["HIGH"], ids["HYPER"], beyond}
    async with as_key(session_app, secret) as key:
        edges = (await key.ok(EDGES, {"ns": namespace, "id": ids["MEDIUM"], "types": None,
                                      "direction": "BOTH"}))["edges"]
        assert {(e["sourceId"], e["targetId"]) for e in edges} == {
            (ids["LOW"], ids["MEDIUM"]), (ids["MEDIUM"], ids["LOW"])}
        assert code(await key.error(EDGES, {"ns": namespace, "id": ids["HIGH"], "types": None,
                                            "direction": "BOTH"})) == "NOT_FOUND"

        trail = (await key.ok(AUDIT, {"ns": namespace, "id": ids["MEDIUM"]}))["auditTrail"]
        assert trail[0]["operation"] == "write"
        assert code(await key.error(AUDIT, {"ns": namespace, "id": ids["HIGH"]})) == "NOT_FOUND"

    # Once deleted, a HIGH memory's trail stays hidden from the medium key (the delete
    # entry remembers its sensitivity) and visible to the admin.
    await gql.ok(DELETE, {"ns": namespace, "id": ids["HIGH"]})
    async with as_key(session_app, secret) as key:
        assert code(await key.error(AUDIT, {"ns": namespace, "id": ids["HIGH"]})) == "NOT_FOUND"
    trail = (await gql.ok(AUDIT, {"ns": namespace, "id": ids["HIGH"]}))["auditTrail"]
    assert trail[-1]["operation"] == "delete"


async def test_writes_and_changes_stay_within_the_clearance(
    gql: GraphQLClient, session_app: Any, graph_client: Any, namespace: str,
) -> None:
    ids = await _store(gql, namespace)
    before = await graph_client.read((
        ("MATCH (m:Memory) WHERE m.namespace = $ns AND m.sensitivity IN ['high', 'hyper']"
        " RETURN m.id AS id, properties(m) AS p, COUNT { (m)--() } AS rels ORDER BY id"),
        {"ns": namespace}))
    secret = await make_key(graph_client, namespace, clearance=Sensitivity.MEDIUM)
    async with as_key(session_app, secret) as key:
        for level in ("HIGH", "HYPER"):
            error = await key.error(WRITE, {"input": mem(namespace, "too secret",
                                                         sensitivity=level)})
            assert code(error) == "FORBIDDEN"
            error = await key.error(UPDATE, {"ns": namespace, "id": ids["LOW"],
                                             "patch": {"sensitivity": level}})
            assert code(error) == "FORBIDDEN"
            for query, variables in [
                (UPDATE, {"ns": namespace, "id": ids[level], "patch": {"summary": "x"}}),
                (DELETE, {"ns": namespace, "id": ids[level]}),
                (ADD_EDGE, {"input": {"namespace": namespace, "sourceId": ids["LOW"],
                                      "targetId": ids[level], "type": "SUPPORTS"}}),
            ]:
                assert code(await key.error(query, variables)) == "NOT_FOUND"
        # The default is LOW, and a medium key may raise a record to medium.
        written = (await key.ok(WRITE, {"input": mem(namespace, "plain")}))["writeMemory"]
        assert written["sensitivity"] == "LOW"
        raised = (await key.ok(UPDATE, {"ns": namespace, "id": written["id"],
                                        "patch": {"sensitivity": "MEDIUM"}}))["updateMemory"]
        assert raised["sensitivity"] == "MEDIUM"
        cleared = await key.error(UPDATE, {"ns": namespace, "id": written["id"],
                                           "patch": {"sensitivity": None}})
        assert code(cleared) == "VALIDATION"
        # forget matches every record's text, but only touches what the key can see.
        forgotten = (await key.ok(FORGET, {"ns": namespace, "p": {"contains": "orchard"}}))
        assert sorted(forgotten["forget"]["ids"]) == sorted(
            ids[level] for level in ("PUBLIC", "LOW", "MEDIUM"))
    after = await graph_client.read((
        ("MATCH (m:Memory) WHERE m.namespace = $ns AND m.sensitivity IN ['high', 'hyper']"
        " RETURN m.id AS id, properties(m) AS p, COUNT { (m)--() } AS rels ORDER BY id"),
        {"ns": namespace}))
    assert [(r["id"], r["p"], r["rels"]) for r in after] == [
        (r["id"], r["p"], r["rels"]) for r in before]
    assert await count_memories(graph_client, namespace) == 6


async def test_memories_written_before_sensitivity_count_as_low(
    gql: GraphQLClient, session_app: Any, graph_client: Any, namespace: str,
) -> None:
    written = (await gql.ok(WRITE, {"input": mem(namespace, "legacy note")}))["writeMemory"]
    await graph_client.write(("MATCH (m:Memory {id: $id}) REMOVE m.sensitivity",
                              {"id": written["id"]}))
    assert (await gql.ok(GET, {"ns": namespace, "id": written["id"]}))["memory"][
        "sensitivity"] == "LOW"
    public = await make_key(graph_client, namespace, clearance=Sensitivity.PUBLIC)
    low = await make_key(graph_client, namespace, clearance=Sensitivity.LOW)
    async with as_key(session_app, public) as key:
        assert code(await key.error(GET, {"ns": namespace, "id": written["id"]})) == "NOT_FOUND"
    async with as_key(session_app, low) as key:
        await key.ok(GET, {"ns": namespace, "id": written["id"]})
