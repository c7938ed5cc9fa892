"""Randomised tenant isolation: thousands of operations from tenant A never touch tenant B.

Tenant B (another namespace) holds memories, relationships, superseded and
forgotten versions and audit trails; tenant A's own namespace also holds
HIGH/HYPER memories that A's `medium` key may not see. A seeded generator
then sends A's key through every operation (writes, updates, supersedes,
forgets, deletes, edges, lists with counts, searches with graph expansion,
gets and audit trails), aiming many of them at B's ids, B's namespace and
A's hidden ids. Afterwards:

- no response ever contained a B id, B edge id, B content token or a hidden
  A id, except an id the request itself sent, echoed in an error message;
- every refusal has an expected code, and B's namespace is always FORBIDDEN;
- `totalCount` always equals what the graph says A's key may see;
- B's nodes, relationships and audit entries are byte-for-byte unchanged,
  and no relationship joins the two namespaces.

`MEMLATTICE_ISOLATION_SEED` / `_OPS` / `_BUDGET_S` change the run (2000 operations,
or as many as fit in 40 s but at least 600, with seed 20261121 by default).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
import uuid
from typing import Any

from memlattice.core.model import Sensitivity
from tests.conftest import GraphQLClient
from tests.integration._keys import as_key, make_key
from tests.integration._support import seeded

SEED = int(os.environ.get("MEMLATTICE_ISOLATION_SEED", "20261121"))
OPS = int(os.environ.get("MEMLATTICE_ISOLATION_OPS", "2000"))
# A loaded machine stops early, but never before MIN_OPS operations.
BUDGET_S = float(os.environ.get("MEMLATTICE_ISOLATION_BUDGET_S", "40"))
MIN_OPS = min(OPS, 600)
CONCURRENCY = 8
WORDS = ["orchard", "lisbon", "rocket", "budget", "harbor", "piano", "quantum", "river",
         "garden", "ledger", "falcon", "meadow"]
FIELDS = "id namespace content sensitivity status version key tags"
W = f"mutation($input: MemoryInput!) {{ writeMemory(input: $input) {{ {FIELDS} }} }}"
WM = (f"mutation($inputs: [MemoryInput!]!) {{ writeMemories(inputs: $inputs)"
      f" {{ {FIELDS} }} }}")
U = (f"mutation($ns: String!, $id: ID!, $patch: MemoryPatchInput!, $v: Int) {{"
     f" updateMemory(namespace: $ns, id: $id, patch: $patch, expectedVersion: $v)"
     f" {{ {FIELDS} }} }}")
S = (f"mutation($id: ID!, $memory: MemoryInput!) {{ supersedeMemory(id: $id, memory: $memory)"
     f" {{ previous {{ {FIELDS} }} current {{ {FIELDS} }} }} }}")
F = ("mutation($ns: String!, $p: ForgetPredicateInput!) {"
     " forget(namespace: $ns, predicate: $p) { count ids } }")
D = "mutation($ns: String!, $id: ID!) { deleteMemory(namespace: $ns, id: $id) }"
E = ("mutation($input: EdgeInput!) { addEdge(input: $input)"
     " { id type sourceId targetId metadata } }")
ES = ("mutation($ns: String!, $inputs: [EdgeSpecInput!]!) { addEdges(namespace: $ns,"
      " inputs: $inputs) { id sourceId targetId } }")
DE = "mutation($ns: String!, $id: ID!) { deleteEdge(namespace: $ns, id: $id) }"
G = f"query($ns: String!, $id: ID!) {{ memory(namespace: $ns, id: $id) {{ {FIELDS} embedding }} }}"
L = (f"query($filter: MemoryFilterInput!, $first: Int!) {{ memories(filter: $filter,"
     f" first: $first) {{ totalCount edges {{ node {{ {FIELDS} }} }} }} }}")
Q = (f"query($input: SearchInput!) {{ search(input: $input) {{ score expanded"
     f" path {{ sourceId targetId }} conflicts {{ {FIELDS} }} memory {{ {FIELDS} }} }} }}")
ED = ("query($ns: String!, $id: ID!) { edges(namespace: $ns, id: $id)"
      " { id type sourceId targetId } }")
A = ("query($ns: String!, $id: ID!) { auditTrail(namespace: $ns, id: $id)"
     " { id memoryId operation actor details } }")
NC = "query($ns: String!) { namespaceConfig(namespace: $ns) { version } }"
ALL_STATUSES = ["ACTIVE", "SUPERSEDED", "FORGOTTEN"]
EXPECTED = {"NOT_FOUND", "FORBIDDEN", "CONFLICT", "VALIDATION", "VERSION_CONFLICT"}


def _content(rng: random.Random, token: str) -> str:
    return " ".join(rng.sample(WORDS, 3)) + f" {token}"


def _namespaces(value: Any) -> set[str]:
    """Every namespace an operation's variables name (`namespace` or `ns`)."""
    if isinstance(value, dict):
        found = {v for k, v in value.items() if k in ("namespace", "ns") and isinstance(v, str)}
        return found.union(*(_namespaces(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_namespaces(v) for v in value))
    return set()


async def _snapshot(graph_client: Any, namespace: str) -> str:
    """Every node of `namespace` and every relationship touching one, canonical JSON."""
    records = await graph_client.read(("""
        MATCH (n) WHERE n.namespace = $ns
        OPTIONAL MATCH (n)-[r]-(o)
        WITH n, collect(DISTINCT {type: type(r), props: properties(r),
             start: startNode(r).id, end: endNode(r).id}) AS rels
        RETURN labels(n) AS labels, properties(n) AS props, rels
        """, {"ns": namespace}))
    rows = [{"labels": sorted(r["labels"]), "props": r["props"],
             "rels": sorted((x for x in r["rels"] if x["type"] is not None),
                            key=lambda x: json.dumps(x, sort_keys=True, default=str))}
            for r in records]
    return json.dumps(sorted(rows, key=lambda x: json.dumps(x, sort_keys=True, default=str)),
                      sort_keys=True, default=str)


async def _seed_b(gql: GraphQLClient, ns_b: str,
                  rng: random.Random) -> tuple[set[str], set[str], set[str]]:
    """Tenant B's store; returns (memory ids, edge ids, content tokens)."""
    tokens = [f"btok{uuid.uuid4().hex[:10]}" for _ in range(24)]
    levels = [s.name for s in Sensitivity]
    inputs = [{"namespace": ns_b, "content": _content(rng, t), "key": f"k{i % 5}",
               "tags": rng.sample(WORDS, 2), "sensitivity": levels[i % 5],
               "embedding": seeded(i), "metadata": {"tenant": "b"}}
              for i, t in enumerate(tokens[:20])]
    written = (await gql.ok(WM, {"inputs": inputs}))["writeMemories"]
    ids = [m["id"] for m in written]
    edges = (await gql.ok(ES, {"ns": ns_b, "inputs": [
        {"sourceId": ids[i], "targetId": ids[(i * 7 + 3) % 20],
         "type": rng.choice(["RELATED", "SUPPORTS", "CONTRADICTS", "DERIVED"])}
        for i in range(20)]}))["addEdges"]
    superseded = (await gql.ok(S, {"id": ids[0], "memory": {
        "namespace": ns_b, "content": _content(rng, tokens[20]),
        "embedding": seeded(100)}}))["supersedeMemory"]
    await gql.ok(F, {"ns": ns_b, "p": {"id": ids[1]}})
    await gql.ok(U, {"ns": ns_b, "id": ids[2], "patch": {"summary": tokens[21]}})
    return ({*ids, superseded["current"]["id"]}, {e["id"] for e in edges},
            {*tokens[:22], ns_b})


async def test_tenant_a_never_sees_or_touches_tenant_b(
    gql: GraphQLClient, session_app: Any, graph_client: Any, namespace: str,
) -> None:
    rng = random.Random(SEED)
    ns_a, ns_b = f"{namespace}/a", f"{namespace}/b"
    b_ids, b_edges, b_tokens = await _seed_b(gql, ns_b, rng)
    # A's own secrets, above its key's clearance.
    hidden_tokens = [f"htok{uuid.uuid4().hex[:10]}" for _ in range(4)]
    hidden = (await gql.ok(WM, {"inputs": [
        {"namespace": ns_a, "content": _content(rng, t), "sensitivity": lvl,
         "embedding": seeded(200 + i), "tags": rng.sample(WORDS, 2)}
        for i, (t, lvl) in enumerate(zip(hidden_tokens, ["HIGH", "HYPER"] * 2))]}))[
        "writeMemories"]
    hidden_ids = {m["id"] for m in hidden}
    forbidden = b_ids | b_edges | hidden_ids
    forbidden_text = b_tokens | set(hidden_tokens)
    before_b = await _snapshot(graph_client, ns_b)
    before_hidden = await graph_client.read((
        "MATCH (m:Memory) WHERE m.id IN $ids RETURN m.id AS id, properties(m) AS p ORDER BY id",
        {"ids": sorted(hidden_ids)}))

    secret = await make_key(graph_client, ns_a, clearance=Sensitivity.MEDIUM)
    a_ids: list[str] = []
    a_edges: list[str] = []
    foreign = sorted(b_ids | hidden_ids)
    foreign_edges = sorted(b_edges)
    stats: dict[str, int] = {}
    timings: dict[str, list[Any]] = {}

    def any_id(foreign_share: float = 0.45) -> str:
        if rng.random() < foreign_share or not a_ids:
            return rng.choice(foreign)
        return rng.choice(a_ids)

    def memory_input(ns: str = ns_a) -> dict[str, Any]:
        item: dict[str, Any] = {"namespace": ns, "content": _content(rng, "atok"),
                                "tags": rng.sample(WORDS, 2),
                                "sensitivity": rng.choice(["PUBLIC", "LOW", "MEDIUM"]),
                                "embedding": seeded(rng.randrange(1000))}
        if rng.random() < 0.1:
            item["id"] = rng.choice(foreign)  # collide with a foreign id
        if rng.random() < 0.2:
            item["key"] = f"k{rng.randrange(5)}"
        return item

    def namespace_choice() -> str:
        return ns_b if rng.random() < 0.12 else ns_a

    def operation() -> tuple[str, str, dict[str, Any]]:
        ns = namespace_choice()
        kind = rng.choice(["write", "write", "writes", "update", "supersede", "forget",
                           "delete", "edge", "edges", "unedge", "get", "get", "list", "list",
                           "search", "search", "search", "neighbours", "audit", "config"])
        if kind == "write":
            return kind, W, {"input": memory_input(ns)}
        if kind == "writes":
            return kind, WM, {"inputs": [memory_input(ns) for _ in range(rng.randint(1, 4))]}
        if kind == "update":
            patch = rng.choice([{"summary": "s"}, {"tags": rng.sample(WORDS, 2)},
                                {"content": _content(rng, "atok"), "embedding": seeded(5)},
                                {"sensitivity": rng.choice(["LOW", "HIGH"])}])
            return kind, U, {"ns": ns, "id": any_id(), "patch": patch,
                             "v": rng.choice([None, 1, 2])}
        if kind == "supersede":
            return kind, S, {"id": any_id(), "memory": memory_input(ns)}
        if kind == "forget":
            predicate = rng.choice([{"id": any_id()}, {"contains": rng.choice(WORDS)},
                                    {"contains": rng.choice(sorted(forbidden_text))},
                                    {"query": rng.choice(WORDS), "tag": rng.choice(WORDS)},
                                    {"key": f"k{rng.randrange(5)}"}])
            return kind, F, {"ns": ns, "p": predicate}
        if kind == "delete":
            return kind, D, {"ns": ns, "id": any_id()}
        if kind == "edge":
            return kind, E, {"input": {"namespace": ns, "sourceId": any_id(0.15),
                                       "targetId": any_id(0.15),
                                       "type": rng.choice(["RELATED", "CONTRADICTS"])}}
        if kind == "edges":
            return kind, ES, {"ns": ns, "inputs": [
                {"sourceId": any_id(0.1), "targetId": any_id(0.1), "type": "SUPPORTS"}
                for _ in range(rng.randint(1, 3))]}
        if kind == "unedge":
            edge = (rng.choice(a_edges) if a_edges and rng.random() < 0.5
                    else rng.choice(foreign_edges))
            return kind, DE, {"ns": ns, "id": edge}
        if kind == "get":
            return kind, G, {"ns": ns, "id": any_id()}
        if kind == "list":
            flt: dict[str, Any] = {"namespace": ns, "statuses": ALL_STATUSES}
            if rng.random() < 0.3:
                flt["tagsAny"] = rng.sample(WORDS, 2)
            if rng.random() < 0.2:
                flt["key"] = f"k{rng.randrange(5)}"
            return kind, L, {"filter": flt, "first": rng.choice([5, 50, 500])}
        if kind == "search":
            search: dict[str, Any] = {
                "filter": {"namespace": ns,
                           "statuses": rng.choice([["ACTIVE"], ALL_STATUSES])},
                "mode": rng.choice(["LEXICAL", "SEMANTIC", "HYBRID"]),
                "query": " ".join(rng.sample(WORDS, 2) + [rng.choice(sorted(forbidden_text))]),
                "vector": seeded(rng.choice([rng.randrange(20), 100, 200, 201])),
                "limit": 20, "candidates": 50,
            }
            if rng.random() < 0.7:
                search["expansion"] = {"maxExpand": 20, "depth": rng.randint(1, 3),
                                       "direction": rng.choice(["OUT", "IN", "BOTH"])}
            return kind, Q, {"input": search}
        if kind == "neighbours":
            return kind, ED, {"ns": ns, "id": any_id()}
        if kind == "audit":
            return kind, A, {"ns": ns, "id": any_id()}
        return kind, NC, {"ns": ns_b if rng.random() < 0.7 else ns_a}

    async def run_one(key: GraphQLClient, kind: str, query: str,
                      variables: dict[str, Any]) -> None:
        began = time.monotonic()
        body = await key.raw(query, variables)
        took = timings.setdefault(kind, [0, 0.0])
        took[0] += 1
        took[1] += time.monotonic() - began
        sent = json.dumps(variables)
        data_text = json.dumps(body.get("data"))
        leaked = {x for x in forbidden | forbidden_text if x in data_text}
        assert not leaked, (kind, variables, body)
        targets_b = ns_b in _namespaces(variables)
        for error in body.get("errors") or []:
            error_code = (error.get("extensions") or {}).get("code")
            assert error_code in EXPECTED, (kind, variables, error)
            text = json.dumps(error)
            leaked = {x for x in forbidden | forbidden_text if x in text and x not in sent}
            assert not leaked, (kind, variables, error)
            stats[error_code] = stats.get(error_code, 0) + 1
        if targets_b and kind != "config":
            assert body.get("errors") and body["errors"][0]["extensions"]["code"] in {
                "FORBIDDEN", "VALIDATION"}, (kind, variables, body)
        if kind == "config" and targets_b:
            assert body["errors"][0]["extensions"]["code"] == "FORBIDDEN"
        data = body.get("data") or {}
        for name in ("writeMemory", "updateMemory"):
            if data.get(name):
                a_ids.append(data[name]["id"])
        for m in data.get("writeMemories") or []:
            a_ids.append(m["id"])
        if data.get("supersedeMemory"):
            a_ids.append(data["supersedeMemory"]["current"]["id"])
        if data.get("addEdge"):
            a_edges.append(data["addEdge"]["id"])
        for e in data.get("addEdges") or []:
            a_edges.append(e["id"])
        for m in [data.get("memory")] + [x["node"] for x in
                                         (data.get("memories") or {}).get("edges", [])]:
            if m:
                assert m["namespace"] == ns_a and m["sensitivity"] in {"PUBLIC", "LOW",
                                                                       "MEDIUM"}
        for hit in data.get("search") or []:
            for m in [hit["memory"], *hit["conflicts"]]:
                assert m["namespace"] == ns_a and m["sensitivity"] != "HIGH"
                assert m["sensitivity"] != "HYPER"

    async def check_count(key: GraphQLClient) -> None:
        listed = (await key.ok(L, {"filter": {"namespace": ns_a, "statuses": ALL_STATUSES},
                                   "first": 1}))["memories"]
        (record,) = await graph_client.read((
            ("MATCH (m:Memory) WHERE m.namespace = $ns AND m.sensitivity IN"
            " ['public', 'low', 'medium'] RETURN count(m) AS n"), {"ns": ns_a}))
        assert listed["totalCount"] == record["n"]

    started = time.monotonic()
    async with as_key(session_app, secret, actor="tenant-a") as key:
        done = 0
        while done < OPS and (done < MIN_OPS or time.monotonic() - started < BUDGET_S):
            batch = [operation() for _ in range(min(CONCURRENCY, OPS - done))]
            await asyncio.gather(*(run_one(key, *op) for op in batch))
            done += len(batch)
            if done % 400 < CONCURRENCY:
                await check_count(key)
        await check_count(key)
    elapsed = time.monotonic() - started

    # B (and A's hidden records) are exactly as they were; nothing joins A to B.
    await asyncio.sleep(1.2)  # let access counts flush: a leak would show up in them too
    assert await _snapshot(graph_client, ns_b) == before_b
    after_hidden = await graph_client.read((
        "MATCH (m:Memory) WHERE m.id IN $ids RETURN m.id AS id, properties(m) AS p ORDER BY id",
        {"ids": sorted(hidden_ids)}))
    assert [(r["id"], r["p"]) for r in after_hidden] == [(r["id"], r["p"]) for r in before_hidden]
    (crossing,) = await graph_client.read((
        "MATCH (a)-[r]-(b) WHERE a.namespace = $a AND b.namespace <> $a RETURN count(r) AS n",
        {"a": ns_a}))
    assert crossing["n"] == 0
    # The run did real work: A wrote, linked, and was refused plenty.
    assert len(a_ids) > done // 20 and a_edges
    assert stats.get("FORBIDDEN", 0) > done // 20 and stats.get("NOT_FOUND", 0) > done // 20
    print(f"\nisolation: {done} operations (seed {SEED}) in {elapsed:.1f}s; refusals {stats};"
          f" A wrote {len(a_ids)} memories and {len(a_edges)} edges; mean ms per kind "
          + ", ".join(f"{k} {1000 * t / n:.0f}" for k, (n, t) in sorted(timings.items())))
