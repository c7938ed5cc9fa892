"""API keys at rest: one `(:ApiKey)` node per key, holding only a hash of its secret.

    (:ApiKey {id, name, secretHash, namespaces, maxScope, clearance, canWrite,
              admin, createdAt, revokedAt,
              rate, burst, concurrent, streams, costRate, costBurst})

The limits (memlattice.core.fairness) are absent where the key uses the
server's defaults; `set_limits` changes them on a live key, which the next
request sees (keys are read on every request, never cached).

`namespaces` is absent for a key bound to every namespace. Lookups are by id
(the id is part of the secret a client sends), so authentication is one
indexed read; revocation stamps `revokedAt` and the next lookup refuses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memlattice.core.fairness import UNSET_LIMITS, KeyLimits
from memlattice.graph.client import GraphClient, Query
from memlattice.graph.codec import to_datetime

_PROJECT = ("k {.id, .name, .secretHash, .namespaces, .maxScope, .clearance, .canWrite,"
            " .admin, .createdAt, .revokedAt, .rate, .burst, .concurrent, .streams,"
            " .costRate, .costBurst}")
# KeyLimits' fields by their property names.
LIMIT_PROPERTIES = {"rate": "rate", "burst": "burst", "concurrent": "concurrent",
                    "streams": "streams", "cost_rate": "costRate", "cost_burst": "costBurst"}


def create_key(props: dict[str, Any]) -> Query:
    return ("CYPHER 25\nCREATE (k:ApiKey) SET k = $props\nRETURN " + _PROJECT + " AS k",
            {"props": {k: v for k, v in props.items() if v is not None}})


def get_key(key_id: str) -> Query:
    return ("CYPHER 25\nMATCH (k:ApiKey {id: $id})\nRETURN " + _PROJECT + " AS k",
            {"id": key_id})


def list_keys() -> Query:
    return ("CYPHER 25\nMATCH (k:ApiKey)\nRETURN " + _PROJECT + " AS k ORDER BY k.createdAt, k.id",
            {})


def set_key_limits(key_id: str, limits: dict[str, float | int | None]) -> Query:
    """Set the given limit properties (by property name); None removes one (default)."""
    return ("CYPHER 25\nMATCH (k:ApiKey {id: $id})\nSET k += $limits\nRETURN " + _PROJECT
            + " AS k", {"id": key_id, "limits": limits})


def revoke_key(key_id: str, now: datetime) -> Query:
    """Stamp the revocation once; revoking again keeps the first time."""
    return ("CYPHER 25\nMATCH (k:ApiKey {id: $id})\n"
            "SET k.revokedAt = coalesce(k.revokedAt, $now)\nRETURN " + _PROJECT + " AS k",
            {"id": key_id, "now": now})


@dataclass(frozen=True)
class StoredKey:
    id: str
    name: str
    secret_hash: str
    namespaces: tuple[str, ...] | None
    max_scope: str
    clearance: str
    can_write: bool
    admin: bool
    created_at: datetime
    revoked_at: datetime | None
    limits: KeyLimits = UNSET_LIMITS


def limit_properties(limits: KeyLimits) -> dict[str, float | int | None]:
    return {prop: getattr(limits, name) for name, prop in LIMIT_PROPERTIES.items()}


def _stored(props: Mapping[str, Any]) -> StoredKey:
    namespaces = props.get("namespaces")
    return StoredKey(
        id=props["id"], name=props["name"], secret_hash=props["secretHash"],
        namespaces=tuple(namespaces) if namespaces is not None else None,
        max_scope=props["maxScope"], clearance=props["clearance"],
        can_write=bool(props["canWrite"]), admin=bool(props.get("admin")),
        created_at=to_datetime(props["createdAt"]),  # type: ignore[arg-type]
        revoked_at=to_datetime(props.get("revokedAt")),
        limits=KeyLimits(**{name: props.get(prop) for name, prop in LIMIT_PROPERTIES.items()}),
    )


class ApiKeyGraph:
    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def create(self, *, id: str, name: str, secret_hash: str,
                     namespaces: tuple[str, ...] | None, max_scope: str, clearance: str,
                     can_write: bool, admin: bool, now: datetime,
                     limits: KeyLimits = UNSET_LIMITS) -> StoredKey:
        records = await self.client.write(create_key({
            "id": id, "name": name, "secretHash": secret_hash,
            "namespaces": list(namespaces) if namespaces is not None else None,
            "maxScope": max_scope, "clearance": clearance, "canWrite": can_write,
            "admin": admin, "createdAt": now, **limit_properties(limits),
        }))
        return _stored(records[0]["k"])

    async def get(self, key_id: str) -> StoredKey | None:
        records = await self.client.read(get_key(key_id))
        return _stored(records[0]["k"]) if records else None

    async def list(self) -> list[StoredKey]:
        return [_stored(r["k"]) for r in await self.client.read(list_keys())]

    async def set_limits(self, key_id: str, limits: dict[str, float | int | None]
                         ) -> StoredKey | None:
        records = await self.client.write(set_key_limits(key_id, limits))
        return _stored(records[0]["k"]) if records else None

    async def revoke(self, key_id: str, *, now: datetime) -> StoredKey | None:
        records = await self.client.write(revoke_key(key_id, now))
        return _stored(records[0]["k"]) if records else None
