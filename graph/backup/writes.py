"""Recreate a backup's nodes and relationships in a fresh database (`memlattice restore`).

Nodes are created with their labels and properties plus a temporary label and
key (`MemlatticeRestoring`, `__restoreKey`: the node's element id in the
backed-up database), indexed, so that relationships find their endpoints by
the key; both are removed at the end. Labels and relationship types are
dynamic (`$(...)`), so nothing here names what Memlattice stores.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from memlattice.core.errors import Conflict
from memlattice.graph.client import GraphClient, Query

RESTORING = "MemlatticeRestoring"
RESTORE_KEY = "__restoreKey"
RESTORE_INDEX = "memlattice_restore_key"
# What a database that `memlattice migrate` (or `./dev up`) has just prepared
# holds, and the leases a stopped service released: the restore replaces them.
BOOKKEEPING = ("Migration", "Lease")


def foreign_nodes(bookkeeping: Sequence[str] = BOOKKEEPING) -> Query:
    """Count the nodes other than bookkeeping, by label: a restore needs none."""
    return ("MATCH (n) WHERE none(l IN labels(n) WHERE l IN $bookkeeping)"
            " UNWIND CASE labels(n) WHEN [] THEN ['(no label)'] ELSE labels(n) END AS label"
            " RETURN label, count(*) AS n ORDER BY label LIMIT 20",
            {"bookkeeping": list(bookkeeping)})


def clear_bookkeeping(bookkeeping: Sequence[str] = BOOKKEEPING) -> Query:
    return ("MATCH (n) WHERE any(l IN labels(n) WHERE l IN $bookkeeping) DETACH DELETE n",
            {"bookkeeping": list(bookkeeping)})


RESTORE_KEY_INDEX: Query = (
    f"CREATE INDEX {RESTORE_INDEX} IF NOT EXISTS FOR (n:{RESTORING}) ON (n.`{RESTORE_KEY}`)", {})
AWAIT_INDEXES: Query = ("CALL db.awaitIndexes(600)", {})


def create_nodes(rows: list[dict[str, Any]]) -> Query:
    """rows: {key, labels, props}; `props` already decoded to driver values.

    CYPHER 25 UNWIND $rows AS row
    CREATE (n:$(row.labels + ['MemlatticeRestoring'])) SET n = row.props, n.`__restoreKey` = row.key
    """
    return ("CYPHER 25 UNWIND $rows AS row"
            f" CREATE (n:$(row.labels + ['{RESTORING}']))"
            f" SET n = row.props, n.`{RESTORE_KEY}` = row.key"
            " RETURN count(n) AS n", {"rows": rows})


def create_relationships(rows: list[dict[str, Any]]) -> Query:
    """rows: {type, start, end, props}; a row whose endpoint is absent creates nothing."""
    return ("CYPHER 25 UNWIND $rows AS row"
            f" MATCH (a:{RESTORING} {{`{RESTORE_KEY}`: row.start}})"
            f" MATCH (b:{RESTORING} {{`{RESTORE_KEY}`: row.end}})"
            " CREATE (a)-[r:$(row.type)]->(b) SET r = row.props"
            " RETURN count(r) AS n", {"rows": rows})


def unmark(batch: int) -> Query:
    return (f"MATCH (n:{RESTORING}) WITH n LIMIT $batch"
            f" REMOVE n:{RESTORING}, n.`{RESTORE_KEY}` RETURN count(n) AS n", {"batch": batch})


DROP_RESTORE_KEY_INDEX: Query = (f"DROP INDEX {RESTORE_INDEX} IF EXISTS", {})
EXISTING_INDEXES: Query = ("SHOW INDEXES YIELD name RETURN name", {})
EXISTING_CONSTRAINTS: Query = ("SHOW CONSTRAINTS YIELD name RETURN name", {})
# A lease some process holds now (graph.leases): a service serves this database.
LIVE_LEASES: Query = ("MATCH (l:Lease) WHERE l.expires > datetime()"
                      " RETURN l.name AS name, toString(l.expires) AS expires"
                      " ORDER BY l.expires DESC LIMIT 5", {})


class StoreLoader:
    """Writes one backup into a database that holds nothing but bookkeeping."""

    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def foreign_labels(self) -> dict[str, int]:
        return {r["label"]: int(r["n"]) for r in await self.client.read(foreign_nodes())}

    async def refuse_unless_fresh(self, *, ignore_leases: bool = False) -> None:
        """Refuse a database holding data, or one a service serves: every serving process
        holds or renews leases, which the restore replaces, so a renewal in the middle
        of the load would collide with the backup's lease of that name (Lease.name is
        unique) and leave a half-filled store, and the service's own writes would be
        mixed into the restored one. A service stopped cleanly releases its leases;
        `ignore_leases` is for one killed outright (its leases outlive it by up to a
        term: 9 hours for consolidation's)."""
        live = [] if ignore_leases else await self.client.read(LIVE_LEASES)
        if live:
            held = ", ".join(f"{r['name']} until {r['expires']}" for r in live)
            raise Conflict(f"a Memlattice service is serving this database (it holds the leases"
                           f" {held}): stop every service process first, then restore; if none"
                           " runs (one was killed without a clean shutdown), --ignore-leases")
        found = await self.foreign_labels()
        if found:
            listed = ", ".join(f"{n} {label}" for label, n in found.items())
            hint = (" (a restore was interrupted: start again on a fresh database)"
                    if RESTORING in found else "")
            raise Conflict(f"the database already holds data ({listed}){hint}; restore only"
                           " into a fresh one (`./dev up` on an empty data folder, or a new"
                           " Neo4j), never over a live store")

    async def prepare(self, *, ignore_leases: bool = False) -> None:
        """Refuse a database with data; clear migrations and leases; index the keys."""
        await self.refuse_unless_fresh(ignore_leases=ignore_leases)
        await self.client.write(clear_bookkeeping())
        await self.client.write(RESTORE_KEY_INDEX)
        await self.client.write(AWAIT_INDEXES)

    async def nodes(self, rows: list[dict[str, Any]]) -> int:
        (record,) = await self.client.write(create_nodes(rows))
        return int(record["n"])

    async def relationships(self, rows: list[dict[str, Any]]) -> int:
        (record,) = await self.client.write(create_relationships(rows))
        return int(record["n"])

    async def create_schema(self, statements: Iterable[tuple[str, str]]) -> list[str]:
        """(name, statement) pairs whose name the database lacks; returns those created."""
        existing = {r["name"] for query in (EXISTING_INDEXES, EXISTING_CONSTRAINTS)
                    for r in await self.client.read(query)}
        created = []
        for name, statement in statements:
            if name not in existing:
                await self.client.write((statement, {}))
                created.append(name)
        await self.client.write(AWAIT_INDEXES)
        return created

    async def finish(self, batch: int = 10_000) -> None:
        """Remove the temporary label, key and index."""
        while True:
            (record,) = await self.client.write(unmark(batch))
            if not record["n"]:
                break
        await self.client.write(DROP_RESTORE_KEY_INDEX)
