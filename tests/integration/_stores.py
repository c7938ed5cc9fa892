"""Whole databases for the backup, restore and upgrade tests: empty one, fill one with
every kind of state the service writes, and describe one so that two compare.

A database is described by what it holds, never by where: each node by its
labels and every property (vectors bit for bit, through the backup's own value
encoding, which round-trips exactly: tests/unit/test_backup_values.py), each
relationship by its type, properties and the descriptions of its two ends.
Element ids differ between two databases and are left out. Nothing here lists
Memlattice's labels or types: whatever the database holds is described.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from memlattice.graph.client import GraphClient
from memlattice.portability.backup_values import encode_properties


def client_for(settings: Any) -> GraphClient:
    return GraphClient.connect(settings.neo4j.uri or "", settings.neo4j.user,
                               settings.neo4j.password.get_secret_value(),
                               settings.neo4j.database)


async def reset(client: GraphClient) -> None:
    """Back to an empty database: no node, no index, no constraint."""
    while (await client.write(("MATCH (n) WITH n LIMIT 5000 DETACH DELETE n"
                               " RETURN count(*) AS n", {})))[0]["n"]:
        pass
    for record in await client.read(("SHOW CONSTRAINTS YIELD name", {})):
        await client.write((f"DROP CONSTRAINT `{record['name']}`", {}))
    for record in await client.read(("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP'"
                                     " RETURN name", {})):
        await client.write((f"DROP INDEX `{record['name']}`", {}))


def _digest(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Described:
    """A database's content: node and relationship descriptions, as multisets."""

    nodes: Counter[str]
    relationships: Counter[str]
    labels: Counter[str]
    types: Counter[str]
    node_text: dict[str, str]  # description -> readable text, for failure messages

    def why(self, descriptions: Counter[str], limit: int = 5) -> str:
        return "\n".join(self.node_text.get(d, d)[:400] for d in list(descriptions)[:limit])


async def describe(client: GraphClient) -> Described:
    nodes: Counter[str] = Counter()
    labels: Counter[str] = Counter()
    by_key: dict[str, str] = {}
    text: dict[str, str] = {}
    for r in await client.read(("MATCH (n) RETURN elementId(n) AS k, labels(n) AS l,"
                                " properties(n) AS p", {})):
        data = {"l": sorted(r["l"]), "p": encode_properties(dict(r["p"]))}
        digest = _digest(data)
        nodes[digest] += 1
        labels.update(r["l"])
        by_key[r["k"]] = digest
        text[digest] = json.dumps(data, sort_keys=True)
    rels: Counter[str] = Counter()
    types: Counter[str] = Counter()
    for r in await client.read(("MATCH (a)-[r]->(b) RETURN type(r) AS t, elementId(a) AS a,"
                                " elementId(b) AS b, properties(r) AS p", {})):
        data = {"t": r["t"], "a": by_key[r["a"]], "b": by_key[r["b"]],
                "p": encode_properties(dict(r["p"]))}
        digest = _digest(data)
        rels[digest] += 1
        types[r["t"]] += 1
        text[digest] = json.dumps(data, sort_keys=True)
    return Described(nodes, rels, labels, types, text)


async def schema_names(client: GraphClient) -> set[str]:
    records = await client.read(("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP'"
                                 " RETURN name", {}))
    records += await client.read(("SHOW CONSTRAINTS YIELD name RETURN name", {}))
    return {r["name"] for r in records}
