"""Wiping a namespace: every node that carries it, in batches, and a record of the wipe.

Every node a namespace owns carries its `namespace` property (memories and their
labels, revisions, vectors of side spaces, audit entries, evidence, tool calls,
plan nodes, sessions, speakers, configuration, vector-space state, locks), and
every relationship joins two of them, so `DETACH DELETE` of those nodes removes
the namespace entirely. Deletes run label by label (the indexed labels first),
`BATCH` nodes per transaction, so a large namespace never becomes one huge
transaction; a last pass without a label catches any other node that carries the
namespace. Nodes of other namespaces are never matched: every query is bound to
the one namespace.

The wipe itself is recorded as a `(:NamespaceWipe {id, namespace, actor, at,
detailsJson})` node, which no wipe deletes: the audit trail of wipes outlives
what they erased.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from memlattice.graph.client import GraphClient, Query

BATCH = 1_000

# Deleted in this order; the catch-all pass (no label) follows.
LABELS = ("MemoryVector", "MemoryRevision", "AuditEntry", "Evidence", "ToolCall", "PlanNode",
          "Session", "Entity", "Memory", "NamespaceConfig", "VectorSpaceState",
          "ConsolidationLock")

WIPE_LABEL = "NamespaceWipe"


@dataclass(frozen=True)
class WipeCounts:
    """What a namespace holds (a dry run) or held (a wipe): nodes by label, relationships."""

    nodes: dict[str, int]
    relationships: int

    @property
    def memories(self) -> int:
        return self.nodes.get("Memory", 0)


def count_nodes(namespace: str) -> Query:
    return (
        "CYPHER 25\nMATCH (n) WHERE n.namespace = $namespace AND NOT n:" + WIPE_LABEL + "\n"
        "RETURN labels(n) AS labels, count(*) AS n",
        {"namespace": namespace},
    )


def count_relationships(namespace: str) -> Query:
    return (
        "CYPHER 25\nMATCH (n)-[r]-() WHERE n.namespace = $namespace AND NOT n:" + WIPE_LABEL
        + "\nRETURN count(DISTINCT r) AS n",
        {"namespace": namespace},
    )


def delete_batch(namespace: str, label: str | None, limit: int) -> Query:
    """Up to `limit` nodes of the namespace (of `label`, or of any label but the wipe
    records), detached and deleted; returns how many."""
    if label is not None and label not in LABELS:
        raise ValueError(f"not a namespace label: {label}")  # an allow-list, like EdgeType
    match = f"MATCH (n:{label})" if label else "MATCH (n)"
    return (
        f"CYPHER 25\n{match} WHERE n.namespace = $namespace AND NOT n:{WIPE_LABEL}\n"
        "WITH n LIMIT $limit\nDETACH DELETE n\nRETURN count(*) AS n",
        {"namespace": namespace, "limit": limit},
    )


def record_wipe(*, id: str, namespace: str, actor: str, at: datetime,
                counts: WipeCounts) -> Query:
    details = json.dumps({"nodes": counts.nodes, "relationships": counts.relationships},
                         sort_keys=True)
    return (
        f"CYPHER 25\nCREATE (w:{WIPE_LABEL} {{id: $id, namespace: $namespace, actor: $actor,"
        " at: $at, detailsJson: $details})\nRETURN w.id AS id",
        {"id": id, "namespace": namespace, "actor": actor, "at": at, "details": details},
    )


def primary_label(labels: list[str]) -> str:
    """A memory is counted as a Memory whatever its record label (Fact, Semantic, ...)."""
    return "Memory" if "Memory" in labels else (min(labels) if labels else "(none)")


class NamespaceWipeGraph:
    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def count(self, namespace: str) -> WipeCounts:
        nodes: Counter[str] = Counter()
        for record in await self.client.read(count_nodes(namespace)):
            nodes[primary_label(list(record["labels"]))] += int(record["n"])
        (rels,) = await self.client.read(count_relationships(namespace))
        return WipeCounts(nodes=dict(sorted(nodes.items())), relationships=int(rels["n"]))

    async def wipe(self, namespace: str, *, id: str, actor: str, at: datetime,
                   batch: int = BATCH) -> WipeCounts:
        """Count, delete in batches, record the wipe; the counts of what was there."""
        counts = await self.count(namespace)
        for label in (*LABELS, None):
            while True:
                (deleted,) = await self.client.write(delete_batch(namespace, label, batch))
                if int(deleted["n"]) < batch:
                    break
        await self.client.write(record_wipe(id=id, namespace=namespace, actor=actor, at=at,
                                            counts=counts))
        return counts
