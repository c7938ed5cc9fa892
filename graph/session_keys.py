"""A session's extractive keys, kept on its node so the session is a retrievable unit.

Each time turns are stored into a session (graph.conversations.link_session),
a turn's content changes (updateMemory) or turns are forgotten, the same
transaction re-derives, from the session's active turns:

    (:Session {namespace, id,
               startedAt, endedAt,          first and last turn time (a re-sent
                                            turn, which carries no time, moves neither)
               eventStart, eventEnd,        the span of the turns' event times
               entities: [key, ...],        what its turns mention and who spoke,
                                            most turns first
               keyphrases: [phrase, ...],   RAKE over the turns (core.keyphrases)
               keyedAt})                    when these were derived
    (:Session)-[:COVERS {turns: n}]->(:Entity)   n: how many active turns are about it

`entities` and `COVERS` say the same thing twice on purpose: a list to read
beside a session in one property access, relationships to walk from an entity
to the sessions about it. All of it is derived (re-sent or extended sessions
re-derive it, never on the search path); none of it is the caller's input.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction

from memlattice.core.auth import Tenant
from memlattice.core.keyphrases import keyphrases
from memlattice.core.messages import speaker_key
from memlattice.graph.client import GraphClient, Query, run
from memlattice.graph.codec import to_datetime
from memlattice.graph.entities import ABOUT
from memlattice.graph.visibility import allowed


@dataclass(frozen=True)
class SessionKeys:
    """What a session is about and when, as derived from its turns."""

    id: str
    entities: tuple[str, ...]
    keyphrases: tuple[str, ...]
    started_at: datetime | None
    ended_at: datetime | None
    event_start: datetime | None
    event_end: datetime | None
    # Whether the caller may see every turn they were derived from: a session's keys
    # are derived from all its turns, so a caller who may not is not shown them.
    complete: bool = True


def turn_texts(*, namespace: str, session: str) -> Query:
    """The session's active turns, in time order, with who spoke each."""
    query = (
        "CYPHER 25\n"
        "MATCH (:Session {namespace: $namespace, id: $session})<-[:IN_SESSION]-(m:Memory)\n"
        "WHERE m.status = 'active'\n"
        "RETURN m.content AS content,"
        " head([(m)-[:SPOKEN_BY]->(e:Entity) | e.key]) AS speaker\n"
        "ORDER BY m.createdAt, m.id"
    )
    return query, {"namespace": namespace, "session": session}


def store_keys(*, tenant: Tenant, session: str, phrases: list[str], now: datetime) -> Query:
    """Re-derive the session's entities (COVERS and `entities`), turn-time span and
    event span from its active turns, and store `phrases` as its keyphrases; `hidden`
    counts the active turns the tenant may not see."""
    query = (
        "CYPHER 25\n"
        "MATCH (s:Session {namespace: $namespace, id: $session})\n"
        "CALL (s) { MATCH (s)-[old:COVERS]->(:Entity) DELETE old }\n"
        "CALL (s) {\n"
        f"  MATCH (s)<-[:IN_SESSION]-(m:Memory {{status: 'active'}})-[:{ABOUT}]->(e:Entity)\n"
        "  WITH e, count(DISTINCT m) AS turns ORDER BY turns DESC, e.key\n"
        "  CREATE (s)-[:COVERS {turns: turns}]->(e)\n"
        "  RETURN collect(e.key) AS entities\n"
        "}\n"
        "CALL (s) {\n"
        "  MATCH (s)<-[:IN_SESSION]-(m:Memory {status: 'active'})\n"
        "  RETURN min(m.createdAt) AS startedAt, max(m.createdAt) AS endedAt,\n"
        "         min(m.eventStart) AS eventStart, max(m.eventEnd) AS eventEnd\n"
        "}\n"
        "CALL (s) {\n"
        "  MATCH (s)<-[:IN_SESSION]-(m:Memory {status: 'active'})\n"
        f"  WHERE NOT ({allowed('m')})\n"
        "  RETURN count(m) AS hidden\n"
        "}\n"
        "SET s.entities = entities, s.keyphrases = $phrases, s.eventStart = eventStart,\n"
        "    s.eventEnd = eventEnd, s.keyedAt = $now,\n"
        "    s.startedAt = coalesce(startedAt, s.startedAt), s.endedAt = coalesce(endedAt, s.endedAt)\n"
        "RETURN s.id AS id, s.entities AS entities, s.keyphrases AS keyphrases,"
        " s.startedAt AS startedAt, s.endedAt AS endedAt, s.eventStart AS eventStart,"
        " s.eventEnd AS eventEnd, hidden"
    )
    return query, {**tenant.params(), "session": session, "phrases": phrases, "now": now}


def spoken_text(content: str, speaker: str | None) -> str:
    """A turn's words without the `speaker: ` its memory starts with
    (core.messages.turn_content): a speaker is an entity, not a keyphrase.
    `speaker` is the speaker's entity key: the entity's stored name may be another
    memory's spelling of it ("Alice" mentioned before "alice" spoke)."""
    head, colon, rest = content.partition(": ")
    if speaker and colon and speaker_key(head) == speaker:
        return rest
    return content


async def refresh_keys(tx: AsyncManagedTransaction, *, tenant: Tenant, session: str,
                       now: datetime) -> SessionKeys:
    """Derive and store the session (of the tenant's namespace)'s keys inside the
    write's transaction (two round trips: its turns' texts, then the keys)."""
    rows = await run(tx, turn_texts(namespace=tenant.namespace, session=session))
    phrases = keyphrases(spoken_text(str(r["content"] or ""), r["speaker"]) for r in rows)
    (row,) = await run(tx, store_keys(tenant=tenant, session=session, phrases=phrases,
                                      now=now))
    return keys_from_row(row)


def keys_from_row(row: Any) -> SessionKeys:
    """The keys `store_keys` returns."""
    instant = to_datetime
    return SessionKeys(
        id=str(row["id"]), entities=tuple(row["entities"] or ()),
        keyphrases=tuple(row["keyphrases"] or ()), started_at=instant(row["startedAt"]),
        ended_at=instant(row["endedAt"]), event_start=instant(row["eventStart"]),
        event_end=instant(row["eventEnd"]), complete=not row["hidden"])


def sessions_of(namespace: str, ids: list[str]) -> Query:
    """The sessions the memories `ids` of `namespace` are turns of."""
    return ("CYPHER 25\nUNWIND $ids AS id\nMATCH (m:Memory {id: id})-[:IN_SESSION]->(s:Session)\n"
            "WHERE m.namespace = $namespace RETURN DISTINCT s.id AS id ORDER BY id",
            {"namespace": namespace, "ids": ids})


async def refresh_sessions_of(tx: AsyncManagedTransaction, *, tenant: Tenant, ids: list[str],
                              now: datetime) -> None:
    """Re-derive the keys of every session the memories `ids` are turns of, inside the
    transaction that changed their content or status (memories outside sessions cost
    one read)."""
    if not ids:
        return
    for row in await run(tx, sessions_of(tenant.namespace, ids)):
        await refresh_keys(tx, tenant=tenant, session=str(row["id"]), now=now)


def read_keys(*, tenant: Tenant, session: str) -> Query:
    """A session's stored keys and how many of its active turns the tenant may not see."""
    query = (
        "CYPHER 25\n"
        "MATCH (s:Session {namespace: $namespace, id: $session})\n"
        "CALL (s) {\n"
        "  OPTIONAL MATCH (s)<-[:IN_SESSION]-(m:Memory {status: 'active'})\n"
        f"  WHERE NOT ({allowed('m')})\n"
        "  RETURN count(m) AS hidden\n"
        "}\n"
        "RETURN s.id AS id, s.entities AS entities, s.keyphrases AS keyphrases,"
        " s.startedAt AS startedAt, s.endedAt AS endedAt, s.eventStart AS eventStart,"
        " s.eventEnd AS eventEnd, hidden"
    )
    return query, {**tenant.params(), "session": session}


class SessionKeyGraph:
    """Reads of sessions' stored keys."""

    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def get(self, *, tenant: Tenant, session: str) -> SessionKeys | None:
        """The session's keys, or None: no such session in the tenant's namespace."""
        rows = await self.client.read(read_keys(tenant=tenant, session=session))
        return keys_from_row(rows[0]) if rows else None

