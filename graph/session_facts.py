"""Which turns of a session the write-side LLM has read (memlattice.services.session_facts).

The session node keeps the ids of its turns already given to the model:

    (:Session {namespace, id, factTurns: [turn id, ...]})

`claim` takes the turns not read yet and marks them in one transaction, under
the session's write lock, so that a session sent twice (even at once) is read
once; `release` gives turns back when the model could not be asked, so the
next sending of the session tries again. The facts themselves are plain
memories, written with their DERIVED relationships through the memory service.
"""

from __future__ import annotations

from memlattice.core.auth import Tenant
from memlattice.graph.client import GraphClient, Query
from memlattice.graph.visibility import owned


def claim(*, tenant: Tenant, session: str, ids: list[str]) -> Query:
    """Mark the turns of `ids` (in order) that the tenant sees, belong to the session
    and were not read yet; returns them. Writing the lock property first makes
    concurrent claims of one session wait for each other before they read."""
    return (
        "CYPHER 25\n"
        "MATCH (s:Session {namespace: $namespace, id: $session})\n"
        "SET s.factsLock = true\n"
        "WITH s, coalesce(s.factTurns, []) AS done\n"
        "CALL (s, done) {\n"
        "  UNWIND range(0, size($ids) - 1) AS i\n"
        "  WITH i, $ids[i] AS id WHERE NOT id IN done\n"
        "  MATCH (m:Memory {id: id})-[:IN_SESSION]->(s)\n"
        f"  WHERE {owned()}\n"
        "  WITH i, m ORDER BY i\n"
        "  RETURN collect(m.id) AS claimed\n"
        "}\n"
        "SET s.factTurns = done + claimed\n"
        "REMOVE s.factsLock\n"
        "RETURN claimed",
        {**tenant.params(), "session": session, "ids": ids},
    )


def release(*, namespace: str, session: str, ids: list[str]) -> Query:
    """Forget that `ids` were read, so that they are read again."""
    return (
        "CYPHER 25\n"
        "MATCH (s:Session {namespace: $namespace, id: $session})\n"
        "SET s.factTurns = [t IN coalesce(s.factTurns, []) WHERE NOT t IN $ids]\n"
        "RETURN size(s.factTurns) AS kept",
        {"namespace": namespace, "session": session, "ids": ids},
    )


class SessionFactsGraph:
    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def claim(self, *, tenant: Tenant, session: str, ids: list[str]) -> list[str]:
        """The turns of `ids` this call may give to the model (none: read already)."""
        tenant.require_write()
        records = await self.client.write(claim(tenant=tenant, session=session, ids=ids))
        return [str(i) for i in records[0]["claimed"]] if records else []

    async def release(self, *, tenant: Tenant, session: str, ids: list[str]) -> None:
        await self.client.write(release(namespace=tenant.namespace, session=session, ids=ids))
