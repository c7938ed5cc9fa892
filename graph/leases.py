"""Leases: which process runs a job that must run in one process at a time.

A `(:Lease {name})` node names its holder and when the lease expires. Taking
it is one conditional statement: the MERGE locks the node (its name is
unique), and the holder changes only when the lease is free, expired or
already ours, so of several processes asking at once exactly one gets it.
A holder renews well before expiry; a crashed holder's lease lapses and
another process takes over within one term.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from memlattice.graph.client import GraphClient, Query


def take_lease(*, name: str, holder: str, now: datetime, until: datetime) -> Query:
    query = (
        "CYPHER 25\n"
        "MERGE (l:Lease {name: $name})\n"
        "ON CREATE SET l.holder = $holder, l.expires = $until\n"
        "WITH l, (l.holder = $holder OR l.expires < $now) AS ours\n"
        "SET l.holder = CASE WHEN ours THEN $holder ELSE l.holder END,\n"
        "    l.expires = CASE WHEN ours THEN $until ELSE l.expires END\n"
        "RETURN ours"
    )
    return query, {"name": name, "holder": holder, "now": now, "until": until}


def release_lease(*, name: str, holder: str) -> Query:
    query = ("CYPHER 25\nMATCH (l:Lease {name: $name}) WHERE l.holder = $holder\n"
             "SET l.expires = datetime({epochMillis: 0})")
    return query, {"name": name, "holder": holder}


class LeaseGraph:
    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def take(self, name: str, holder: str, now: datetime, term: timedelta) -> bool:
        """Take or renew the lease for `term`; False when another holder has it."""
        records = await self.client.write(take_lease(name=name, holder=holder, now=now,
                                                     until=now + term))
        return bool(records and records[0]["ours"])

    async def release(self, name: str, holder: str) -> None:
        """Let another process take the lease at once (a clean shutdown)."""
        await self.client.write(release_lease(name=name, holder=holder))
