"""A conversation's structure in the graph: its session, the order of its turns,
and who spoke them.

Each turn is a memory (written by `graph.queries.create_memories`, with its
audit entry); on top of that one session stores:

    (:Memory)-[:IN_SESSION]->(:Session {namespace, id, startedAt, endedAt})
    (:Memory)-[:NEXT]->(:Memory)          consecutive turns, in the order sent
    (:Memory)-[:SPOKEN_BY]->(:Entity {namespace, key, name, kind: 'speaker'})

Every step MERGEs, so sending a session again changes nothing, and sending its
continuation later joins the new turns after the chain's last one. The same
transaction then re-derives the session's keys (its entities, keyphrases and
time spans: graph.session_keys).
"""

from __future__ import annotations

from typing import Any

from memlattice.core.auth import Tenant
from memlattice.graph.client import GraphClient, Query
from memlattice.graph.projections import project
from memlattice.graph.visibility import owned

TURN_EDGES = ("IN_SESSION", "NEXT", "SPOKEN_BY")


def existing(namespace: str, ids: list[str]) -> Query:
    """Which of `ids` the namespace already holds (a re-sent turn is not written again)."""
    return ("CYPHER 25\nMATCH (m:Memory) WHERE m.id IN $ids AND m.namespace = $namespace"
            " RETURN m.id AS id", {"namespace": namespace, "ids": ids})


def stored_hashes(namespace: str, ids: list[str]) -> Query:
    """The content hash of each of `ids` the namespace holds (a re-sent message's
    id must still name the same words)."""
    return ("CYPHER 25\nMATCH (m:Memory) WHERE m.id IN $ids AND m.namespace = $namespace"
            " RETURN m.id AS id, m.contentHash AS hash", {"namespace": namespace, "ids": ids})


async def turn_hashes(client: GraphClient, namespace: str, ids: list[str]) -> dict[str, str]:
    """`stored_hashes` as a map, id to hash."""
    if not ids:
        return {}
    return {str(r["id"]): str(r["hash"]) for r in await client.read(stored_hashes(namespace, ids))}


def link_session(*, namespace: str, session: str, turns: list[dict[str, Any]],
                 now: Any) -> Query:
    """Join `turns` (`{id, speakerKey, speakerName, at}`, in order) to their session,
    to each other and to their speakers:

        MERGE (s:Session {namespace: $namespace, id: $session})
        // the chain's last turn before this call, if the session had turns
        OPTIONAL MATCH (s)<-[:IN_SESSION]-(tail:Memory)
          WHERE NOT (tail)-[:NEXT]->() AND NOT tail.id IN $ids
        UNWIND range(0, size($turns) - 1) AS i
        MATCH (m:Memory {id: $turns[i].id}) MERGE (m)-[:IN_SESSION]->(s)
        MERGE (previous)-[:NEXT]->(m)   // previous: turn i - 1, or the tail for i = 0
        MERGE (e:Entity {namespace: $namespace, key: ...}) MERGE (m)-[:SPOKEN_BY]->(e)
    """
    query = (
        "CYPHER 25\n"
        "MERGE (s:Session {namespace: $namespace, id: $session})\n"
        "ON CREATE SET s.createdAt = $now\n"
        "SET s.startedAt = CASE WHEN s.startedAt IS NULL OR $startedAt < s.startedAt"
        " THEN $startedAt ELSE s.startedAt END,\n"
        "    s.endedAt = CASE WHEN s.endedAt IS NULL OR $endedAt > s.endedAt"
        " THEN $endedAt ELSE s.endedAt END\n"
        "WITH s\n"
        "OPTIONAL MATCH (s)<-[:IN_SESSION]-(tail:Memory)\n"
        "  WHERE NOT (tail)-[:NEXT]->() AND NOT tail.id IN $ids\n"
        "WITH s, head(collect(tail)) AS tail\n"
        "UNWIND range(0, size($turns) - 1) AS i\n"
        "WITH s, tail, i, $turns[i] AS t\n"
        "MATCH (m:Memory {id: t.id}) WHERE m.namespace = $namespace\n"
        "MERGE (m)-[:IN_SESSION]->(s)\n"
        "WITH s, tail, i, t, m\n"
        "CALL (s, tail, i, m) {\n"
        "  OPTIONAL MATCH (p:Memory {id: $turns[i - 1].id}) WHERE i > 0\n"
        "  WITH coalesce(p, CASE WHEN i = 0 THEN tail END) AS previous, m\n"
        "  WHERE previous IS NOT NULL AND previous <> m\n"
        "  MERGE (previous)-[:NEXT]->(m)\n"
        "}\n"
        "CALL (m, t) {\n"
        "  WITH m, t WHERE t.speakerKey IS NOT NULL\n"
        "  MERGE (e:Entity {namespace: $namespace, key: t.speakerKey})\n"
        "  ON CREATE SET e.name = t.speakerName, e.kind = 'speaker', e.createdAt = $now\n"
        "  MERGE (m)-[:SPOKEN_BY]->(e)\n"
        "}\n"
        "RETURN count(*) AS linked"
    )
    times = [t["at"] for t in turns]
    return query, {"namespace": namespace, "session": session, "turns": turns, "now": now,
                   "ids": [t["id"] for t in turns], "startedAt": min(times),
                   "endedAt": max(times)}


def turns(*, tenant: Tenant, ids: list[str]) -> Query:
    """The turns of `ids` the tenant may see, as stored."""
    return (f"CYPHER 25\nUNWIND $ids AS id\nMATCH (m:Memory {{id: id}}) WHERE {owned()}\n"
            f"RETURN {project()} AS m", {**tenant.params(), "ids": ids})
