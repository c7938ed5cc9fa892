"""Update links in the graph: recorded on write, listed, confirmed, rejected.

`detect_in` runs inside a write's own transaction (plain writes, conversation
turns, records and facts), after the memories are created: it locks the
attributes the batch states, reads the latest earlier statements of each,
decides the links (memlattice.core.statements.linking, pure) and writes them.
Nothing of this runs on the search path.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from neo4j import AsyncManagedTransaction

from memlattice.core.auth import Tenant
from memlattice.core.entities import entity_key, mentions
from memlattice.core.errors import Conflict, EpisodicImmutable, NotFound
from memlattice.core.judge_queue import WriterView
from memlattice.core.lucene import any_terms
from memlattice.core.rank_fusion import order_by, reciprocal_rank_fusion
from memlattice.core.statements.contrast import Profile, contrast, profile
from memlattice.core.statements.extract import Statement
from memlattice.core.statements.linking import Link, Stated, links
from memlattice.core.statements.of_memory import (
    reports_in,
    statements_of,
    told_statements,
    without_speaker,
)
from memlattice.core.statements.reports import in_their_voice
from memlattice.graph.client import GraphClient, run
from memlattice.graph.codec import Memory, memory_from_properties, to_datetime
from memlattice.graph.indexes import fenced_lucene
from memlattice.graph.judge_queue import mark_in
from memlattice.graph.prepared_memory import PreparedMemory, new_id
from memlattice.graph.updates import queries
from memlattice.graph.updates.links import UpdateLink, link_from

STATUSES = ("candidate", "confirmed", "rejected")
# A batch with more memories to read by contrast than this (a bulk load) is read by
# frames only: each contrast look-up is a fulltext query, as a near-duplicate check
# is a vector query (graph.duplicates.MAX_NEAR_DUPLICATE_CHECKS, the same bound).
MAX_CONTRAST_CHECKS = 64
# Two memories of one session said less than this apart are one conversation, one
# sitting (the contrast reading asks more of them); a session that is a channel or
# a log kept for weeks holds many sittings, and a change between them is a change.
ONE_SITTING = timedelta(hours=6)


@dataclass(frozen=True)
class Written:
    """A memory just written, with what it states (memlattice.core.statements) and
    its words in its speaker's voice (read by contrast when no frame reads it)."""

    id: str
    at: datetime
    source: str | None
    statements: tuple[Statement, ...]
    text: str = ""
    stating: bool = True
    # A conversation's turn; and the person it reports on, who speaks there
    # (memlattice.core.statements.reports).
    spoken: bool = False
    reported: str | None = None
    # Its words put in that person's voice ("I handed in my notice").
    told: str | None = None
    # The session it was said in, (user, session): the contrast reading asks more
    # of two memories of one conversation (memlattice.core.statements.contrast).
    session: tuple[str | None, str] | None = None


def written_of(memories: Sequence[PreparedMemory],
               payload: Mapping[str, Any] | None = None, *,
               id: str | None = None) -> list[Written]:
    """What each memory about to be written states (memlattice.core.statements); a
    record's `payload` states its triple; `id` when it was stored under another."""
    out = []
    for m in memories:
        source, text, statements = statements_of(m.input, payload)
        out.append(Written(id=id or m.id, at=m.now, source=source, statements=statements,
                           text=text, stating=m.input.memory_type != "episodic",
                           spoken=bool((m.input.metadata or {}).get("speaker")),
                           session=_session(m.input.user_id, m.input.session_id)))
    return out


def _statement_props(s: Statement, source: str | None) -> dict[str, Any]:
    return {"owner": s.owner, "thing": list(s.thing), "attribute": s.attribute,
            "value": s.value, "kind": s.kind, "negated": s.negated, "change": s.change,
            "framed": s.framed, "words": list(s.words), "thingText": s.thing_text,
            "source": source}


def _statement_of(props: Any) -> Statement:
    return Statement(owner=props.get("owner"), thing=tuple(props.get("thing") or ()),
                     attribute=str(props["attribute"]), value=str(props["value"]),
                     kind=str(props.get("kind") or "text"), negated=bool(props.get("negated")),
                     change=bool(props.get("change")), framed=bool(props.get("framed")),
                     words=tuple(props.get("words") or ()),
                     thing_text=str(props.get("thingText") or ""))


async def detect_in(tx: AsyncManagedTransaction, written: Sequence[Written], *, tenant: Tenant,
                    now: datetime, auto_supersede: float | None = None,
                    actor: str = "system", judge: WriterView | None = None) -> list[Link]:
    """Record what the batch states and link it to what was stated before (frames
    first, then contrast for a memory no frame linked); with `auto_supersede`,
    confident updates are confirmed at once; with `judge` (the writer's view), the
    batch is marked for the update judge in the same transaction. The links made."""
    await mark_in(tx, namespace=tenant.namespace, ids=[w.id for w in written], view=judge,
                  now=now)
    written = await _reports(tx, written, namespace=tenant.namespace)
    made = await _framed(tx, [w for w in written if w.statements], tenant=tenant, now=now)
    linked = {link.newer for link in made}
    made += await _contrasted(tx, [w for w in written if w.stating], linked, tenant=tenant,
                              now=now)
    if not made:
        return []
    made_rows: list[dict[str, Any]] = [{"id": new_id(), "newer": link.newer, "older": link.older, "kind": link.verdict.kind,
             "confidence": link.verdict.confidence, "reason": link.verdict.reason,
             "subject": link.verdict.subject, "attribute": link.verdict.attribute,
             "matched": list(link.verdict.matched), "contradictsId": new_id()} for link in made]
    await run(tx, queries.create_links(made_rows, namespace=tenant.namespace, now=now))
    if auto_supersede is not None:
        for row in made_rows:
            if row["kind"] == "update" and row["confidence"] >= auto_supersede:
                await confirm_in(tx, tenant=tenant, id=row["id"], actor=actor, now=now,
                                  quiet=True)
    return made


async def _reports(tx: AsyncManagedTransaction, written: Sequence[Written], *,
                   namespace: str) -> list[Written]:
    """The batch's turns that report on someone who speaks in the namespace, each
    with what it says of them in their voice (memlattice.core.statements.reports)."""
    if not any(w.spoken for w in written):
        return list(written)
    turns = [(w.source, w.text, w.spoken) for w in written]
    speakers = {w.source for w in written if w.spoken and w.source}
    # Only names that are not the batch's own speakers need the namespace asked.
    firsts = sorted({m.key.split()[0] for w in written if w.spoken for m in mentions(w.text)}
                    - {s.split()[0] for s in speakers})
    people = frozenset(speakers | ({
        str(r["key"]) for r in await run(tx, queries.speakers_named(namespace, firsts))}
        if firsts else set()))
    return [_told(w, person) if person is not None else w
            for w, person in zip(written, reports_in(turns, people))]


def _told(w: Written, person: str) -> Written:
    """`w` as a report on `person`: its words in their voice, and what those state."""
    told = in_their_voice(w.text, person)
    return replace(w, reported=person, told=told,
                   statements=w.statements + tuple(told_statements(told, person)))


async def _framed(tx: AsyncManagedTransaction, stating: Sequence[Written], *, tenant: Tenant,
                  now: datetime) -> list[Link]:
    """The frame reading: statements recorded under their attributes, which are
    locked first (concurrent updates of one attribute serialise)."""
    if not stating:
        return []
    keys = sorted({s.key for w in stating for s in w.statements})
    ids = [w.id for w in stating]
    await run(tx, queries.lock_attributes(tenant.namespace, keys, now))
    rows = await run(tx, queries.earlier_statements(keys, ids, tenant=tenant, now=now))
    earlier = [Stated(memory_id=str(r["id"]), at=_at(r["at"]),
                      source=r["statement"].get("source"),
                      statement=_statement_of(r["statement"]), linked=frozenset(r["linked"]))
               for r in rows if r["id"] is not None]
    new = [Stated(memory_id=w.id, at=w.at, source=w.source, statement=s)
           for w in stating for s in w.statements]
    await run(tx, queries.record_statements(
        [{"id": w.id, "key": s.key, "statement": _statement_props(s, w.source)}
         for w in stating for s in w.statements], namespace=tenant.namespace))
    return links(new, earlier)


async def _contrasted(tx: AsyncManagedTransaction, batch: Sequence[Written],
                      framed: set[str], *, tenant: Tenant, now: datetime) -> list[Link]:
    """The contrast reading (memlattice.core.statements.contrast) of the batch's
    memories that no frame linked and that say something changed: each against its
    candidates and the batch's earlier memories; the most confident verdict wins
    (the latest on a tie). A stored memory of the same speaker is read only when it
    is the new memory's nearest earlier memory (`_nearest`)."""
    profiles = {w.id: profile(w.text, speaker=w.source) for w in batch}
    fresh = [w for w in batch if w.id not in framed and profiles[w.id].change
             and not profiles[w.id].blocked]
    if not fresh or len(fresh) > MAX_CONTRAST_CHECKS:
        return []
    # A report is also read in the voice of the person it is about, against what
    # they said (memlattice.core.statements.reports).
    told = {w.id: profile(w.told, speaker=w.reported)
            for w in fresh if w.told is not None}
    rows = await run(tx, queries.contrast_candidates(
        [*({"id": w.id, "lucene": _lucene(profiles[w.id], tenant.namespace),
            "speaker": w.source} for w in fresh),
         *({"id": w.id, "lucene": _lucene(told[w.id], tenant.namespace),
            "speaker": w.reported} for w in fresh if w.id in told)],
        [w.id for w in batch], tenant=tenant, now=now))
    earlier: dict[str, list[tuple[str, datetime, str | None, Profile, frozenset[str],
                                  tuple[str | None, str] | None]]] = {}
    for r in rows:
        if r["other"] is None:
            continue
        speaker = r["speaker"] or entity_key(r["userId"] or r["agentId"] or "self")
        text = without_speaker(str(r["content"] or ""), spoken=r["speaker"] is not None)
        earlier.setdefault(str(r["id"]), []).append(
            (str(r["other"]), _at(r["at"]), speaker, profile(text, speaker=speaker),
             frozenset(r["linked"]), _session(r["userId"], r["session"])))
    nearest: dict[str, str | None] = {}  # asked only of a memory that needs it
    in_batch = {w.id for w in batch}
    # Everyone who speaks in the batch or its candidates is who, never what changed.
    participants = frozenset({w.source for w in batch if w.source} | {
        speaker for options in earlier.values() for _, _, speaker, *_ in options if speaker})
    made: list[Link] = []
    for w in fresh:
        options = list(earlier.get(w.id, ()))
        options += [(b.id, b.at, b.source, profiles[b.id], frozenset(), b.session)
                    for b in batch if b.at < w.at]
        best: tuple[float, datetime, Link] | None = None
        for other, at, speaker, seen, linked, session in options:
            mine = speaker is not None and speaker == w.source
            if at >= w.at or w.id in linked:
                continue
            if mine and other not in in_batch:
                if w.id not in nearest:
                    nearest[w.id] = await _nearest(tx, w, tenant=tenant, now=now)
                if other != nearest[w.id]:
                    continue
            together = (w.session is not None and session == w.session
                        and w.at - at < ONE_SITTING)
            verdict = contrast(seen, profiles[w.id], same_source=mine,
                               participants=participants, same_conversation=together)
            if verdict is None and w.id in told and speaker == w.reported:
                verdict = contrast(seen, told[w.id], same_source=True,
                                   participants=participants, same_conversation=together)
                if verdict is not None:
                    verdict = replace(verdict, reason=f"{w.source} tells of {w.reported}:"
                                                      f" {verdict.reason}")
            if verdict is not None and (best is None or (verdict.confidence, at) > best[:2]):
                best = (verdict.confidence, at, Link(w.id, other, verdict))
        if best is not None:
            made.append(best[2])
    return made


async def _nearest(tx: AsyncManagedTransaction, w: Written, *, tenant: Tenant,
                   now: datetime) -> str | None:
    """The stored earlier memory most like `w`: the first of its offers
    (`Memory.mayReplace`: the vector index's and the fulltext index's orders fused by
    reciprocal rank). A speaker is the subject of nearly all they say, so their own
    earlier memory with another value of a kind is no sign of one subject: an update
    restates a fact, so what it replaces is the earlier memory most like it, and where
    another one is nearer the new memory goes on from that one (on the blind scenario
    sets, such links between one speaker's memories were right 3 times in 36 when the
    older was not the first offer, 31 in 55 when it was)."""
    rows = await run(tx, queries.nearest_earlier(tenant=tenant, id=w.id, now=now,
                                                 lucene=any_terms(w.text), ids_only=True))
    fused = reciprocal_rank_fusion([
        order_by(rows, lambda r: r["vectorScore"], lambda r: str(r["id"])),
        order_by(rows, lambda r: r["textScore"], lambda r: str(r["id"]))])
    return fused[0] if fused else None


def _session(user: str | None, session: str | None) -> tuple[str | None, str] | None:
    """Which conversation a memory was said in (a session id names one per user)."""
    return None if session is None else (user, session)


def _lucene(read: Profile, namespace: str) -> str | None:
    terms = any_terms(" ".join(sorted(read.search_words())))
    return fenced_lucene(terms, namespace, None) if terms else None


def _at(micros: Any) -> datetime:
    at = to_datetime(micros)
    assert at is not None
    return at


async def confirm_in(tx: AsyncManagedTransaction, *, tenant: Tenant, id: str, actor: str,
                      now: datetime, quiet: bool = False
                      ) -> tuple[UpdateLink, Memory, Memory] | None:
    """Confirm inside `tx`; `quiet` skips (instead of refusing) a link that cannot be
    confirmed, as automatic superseding must."""
    found = await run(tx, queries.locked_link(tenant=tenant, id=id))
    if not found:
        if quiet:
            return None
        raise NotFound(f"no update candidate {id}")
    row = found[0]
    link = row["link"]
    problem = None
    if link["status"] == "rejected":
        problem = Conflict(f"update candidate {id} was rejected", id=id)
    elif row["olderType"] == "episodic":
        problem = EpisodicImmutable("an episodic record cannot be superseded")
    elif row["cycle"]:
        problem = Conflict(f"confirming {id} would make a SUPERSEDES cycle", id=id,
                           reason="SUPERSEDES_CYCLE")
    elif link["status"] != "confirmed" and (row["newerStatus"] != "active"
                                           or row["olderStatus"] != "active"):
        problem = Conflict(f"update candidate {id} joins a memory that is no longer active",
                           id=id)
    if problem is not None:
        if quiet:
            return None
        raise problem
    if link["status"] == "confirmed":  # confirming twice changes nothing
        return None
    record = (await run(tx, queries.confirm_link(
        tenant=tenant, id=id, edge_id=new_id(), actor=actor, now=now,
        audit_ids=(new_id(), new_id()))))[0]
    previous = memory_from_properties(record["previous"])
    current = memory_from_properties(record["current"])
    return link_from({**link, "status": "confirmed"}, current, previous), previous, current


class UpdateGraph:
    """Listing and deciding update candidates (see the module docstring)."""

    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def listed(self, *, tenant: Tenant, statuses: Sequence[str], memory_id: str | None,
                   first: int) -> list[UpdateLink]:
        rows = await self.client.read(queries.list_links(
            tenant=tenant, statuses=statuses, memory_id=memory_id, first=first))
        return [link_from(r["link"], memory_from_properties(r["newer"]),
                          memory_from_properties(r["older"])) for r in rows]

    async def auto_superseded(self, *, tenant: Tenant, newer_ids: Sequence[str],
                              ) -> builtins.list[tuple[Memory, Memory]]:
        """(superseded, successor) for what `newer_ids` superseded as they were written
        (a namespace's `autoSupersede`), so the write can announce it."""
        if not newer_ids:
            return []
        rows = await self.client.read(queries.auto_superseded(tenant=tenant,
                                                              newer_ids=newer_ids))
        return [(memory_from_properties(r["previous"]), memory_from_properties(r["current"]))
                for r in rows]

    async def confirm(self, *, tenant: Tenant, id: str, actor: str,
                      now: datetime) -> tuple[UpdateLink, Memory | None, Memory | None]:
        """(the link, the memory superseded, its successor); the memories are None
        when the link was confirmed already (nothing changed)."""
        tenant.require_write()

        async def work(tx: AsyncManagedTransaction
                       ) -> tuple[UpdateLink, Memory | None, Memory | None]:
            done = await confirm_in(tx, tenant=tenant, id=id, actor=actor, now=now)
            if done is not None:
                return done[0], done[1], done[2]
            (current,) = await self._one(tx, tenant, id)
            return current, None, None

        return await self.client.transaction(work)

    async def reject(self, *, tenant: Tenant, id: str, note: str | None, actor: str,
                     now: datetime) -> tuple[UpdateLink, bool]:
        """(the link, whether this call rejected it); a confirmed link cannot be
        rejected (the superseding is a revision of its own, undone by a person)."""
        tenant.require_write()

        async def work(tx: AsyncManagedTransaction) -> tuple[UpdateLink, bool]:
            found = await run(tx, queries.locked_link(tenant=tenant, id=id))
            if not found:
                raise NotFound(f"no update candidate {id}")
            status = found[0]["link"]["status"]
            if status == "confirmed":
                raise Conflict(f"update {id} is confirmed already; it cannot be rejected",
                               id=id)
            if status == "rejected":
                (current,) = await self._one(tx, tenant, id)
                return current, False
            r = (await run(tx, queries.reject_link(tenant=tenant, id=id, note=note, actor=actor,
                                                   now=now, audit_id=new_id())))[0]
            return link_from(r["link"], memory_from_properties(r["newer"]),
                             memory_from_properties(r["older"])), True

        return await self.client.transaction(work)

    async def _one(self, tx: AsyncManagedTransaction, tenant: Tenant,
                   id: str) -> builtins.list[UpdateLink]:
        rows = await run(tx, queries.list_links(tenant=tenant, statuses=STATUSES,
                                                memory_id=None, first=1, link_id=id))
        return [link_from(r["link"], memory_from_properties(r["newer"]),
                          memory_from_properties(r["older"])) for r in rows]
