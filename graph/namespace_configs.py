"""Per-namespace search defaults, one `NamespaceConfig` node per namespace."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memlattice.graph.client import GraphClient, Query
from memlattice.graph.codec import canonical_json


def configure_namespace(*, namespace: str, settings_json: str, actor: str, now: datetime) -> Query:
    """Record a namespace's search defaults; the latest configuration wins."""
    query = (
        "CYPHER 25\n"
        "MERGE (c:NamespaceConfig {namespace: $namespace})\n"
        "ON CREATE SET c.version = 0\n"
        "SET c.version = c.version + 1, c.settingsJson = $settingsJson, c.updatedAt = $now,\n"
        "    c.updatedBy = $actor\n"
        "RETURN c {.*} AS c"
    )
    return query, {"namespace": namespace, "settingsJson": settings_json, "actor": actor,
                   "now": now}


def get_namespace_config(*, namespace: str) -> Query:
    query = ("CYPHER 25\nMATCH (c:NamespaceConfig {namespace: $namespace})\n"
             "RETURN c {.*} AS c")
    return query, {"namespace": namespace}


@dataclass(frozen=True)
class NamespaceConfig:
    namespace: str
    version: int
    settings: dict[str, Any]
    updated_at: datetime
    updated_by: str


def _namespace_config(props: Mapping[str, Any]) -> NamespaceConfig:
    updated = props["updatedAt"]
    return NamespaceConfig(
        namespace=props["namespace"], version=int(props["version"]),
        settings=json.loads(props["settingsJson"]),
        updated_at=updated.to_native() if hasattr(updated, "to_native") else updated,
        updated_by=props.get("updatedBy", ""),
    )


class NamespaceConfigGraph:
    """Per-namespace search defaults, one node per namespace."""

    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def put(self, *, namespace: str, settings: Mapping[str, Any], actor: str,
                  now: datetime) -> NamespaceConfig:
        records = await self.client.write(configure_namespace(
            namespace=namespace, settings_json=canonical_json(dict(settings)), actor=actor,
            now=now,
        ))
        return _namespace_config(records[0]["c"])

    async def get(self, *, namespace: str) -> NamespaceConfig | None:
        records = await self.client.read(get_namespace_config(namespace=namespace))
        return _namespace_config(records[0]["c"]) if records else None
