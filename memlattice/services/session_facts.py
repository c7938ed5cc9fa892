"""The optional write-side LLM: facts read out of each stored conversation session.

Off unless `MEMLATTICE_FACTS_LLM_MODEL` is set (core.settings.FactsLLMSettings).
After `ingestConversation` commits a session, its turns that no reading has
claimed yet (graph.session_facts) are shown to the model, numbered, and each
valid fact of its answer (core.session_facts) becomes a plain memory of type
`observation`, in the namespace, scope and session of its turns, DERIVED from
the turns it names, so that search finds it beside them.

A fact the model gives a subject and an attribute (Ines / home city) is
reconciled with the model's active facts about the same pair that the same
user and agent were told before (core.session_facts.reconcile): the same words
again reinforce the stored fact (no second memory; it is also DERIVED from the
new turns), other words make a new fact that SUPERSEDES the stored one, through
an UPDATES link confirmed like a person's confirmation (services.updates): the
old fact becomes SUPERSEDED, kept as history for `asOf` and `memoryHistory`,
audited, and announced (a SUPERSEDED event). Nothing is deleted.

It runs in the background: ingestion neither waits for the model nor fails
with it. A model that is down or answers garbage is logged and counted
(`memlattice_session_fact_answers_total{outcome}`); turns it could not be
asked about are given back, so sending the session again retries them, while
turns it answered about are never read twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from typing import Protocol

from memlattice.core.auth import Tenant
from memlattice.core.detached import DetachedTasks
from memlattice.core.duplicates import reinforcement
from memlattice.core.errors import MemlatticeError
from memlattice.core.judge_queue import MODEL_FACTS
from memlattice.core.model import EdgeType, MemoryInput, utcnow, validated
from memlattice.core.session_facts import (
    About,
    ExtractedFact,
    FactsOutcome,
    PromptTurn,
    Reconciled,
    Stated,
    fact_id,
    parse_facts,
    parts,
    prompt,
    reconcile,
    render,
)
from memlattice.core.settings import FactsLLMSettings
from memlattice.graph.codec import Memory
from memlattice.graph.session_facts import EarlierFact, SessionFactsGraph
from memlattice.services.memories import EdgeSpec, MemoryService
from memlattice.services.updates import UpdateService

log = logging.getLogger(__name__)

FACT_TYPE = "observation"
SOURCE_TYPE = MODEL_FACTS


class Chat(Protocol):
    """A chat model asked for JSON (memlattice.services.llm_extract.JsonChat)."""

    model: str

    async def ask(self, system: str, user: str) -> str: ...

    async def aclose(self) -> None: ...


class SessionFacts:
    """Reads stored sessions with a chat model and files what it finds as memories."""

    def __init__(self, memories: MemoryService, chat: Chat, settings: FactsLLMSettings, *,
                 count: Callable[[FactsOutcome, int], None] | None = None) -> None:
        self.memories = memories
        self.graph = SessionFactsGraph(memories.graph.client)
        self.chat = chat
        self.settings = settings
        # (outcome, how many): answered, malformed, model_error, write_error, written.
        self.count = count or (lambda outcome, n: None)
        self._limit = asyncio.Semaphore(settings.concurrency)
        self._background = DetachedTasks()

    def schedule(self, session: str, turns: Sequence[Memory], *, tenant: Tenant,
                 actor: str) -> None:
        """Read the session's `turns` (as stored, in order) after the caller returns."""
        self._background.start(self._run(session, list(turns), tenant, actor))

    async def drain(self) -> None:
        """Wait until every scheduled reading has ended (tests, and a caller that
        wants the facts before it searches)."""
        await self._background.drain()

    async def aclose(self) -> None:
        """Stop readings in progress (their turns are given back) and close the client."""
        await self._background.cancel()
        await self.chat.aclose()

    async def _run(self, session: str, turns: list[Memory], tenant: Tenant,
                   actor: str) -> None:
        try:
            async with self._limit:
                await self.extract(session, turns, tenant=tenant, actor=actor)
        except Exception:  # the background must not die with one session
            log.exception("reading session facts failed in %s", tenant.namespace)

    async def extract(self, session: str, turns: Sequence[Memory], *, tenant: Tenant,
                      actor: str) -> list[Memory]:
        """Ask about the turns no reading has claimed, write the facts; the facts
        written (none when every turn was read before, or the model failed)."""
        claimed = set(await self.graph.claim(tenant=tenant, session=session,
                                             ids=[t.id for t in turns]))
        if not claimed:
            return []
        unread = [t for t in turns if t.id in claimed]
        try:
            facts = await self._ask(unread, tenant.namespace)
        except BaseException:
            await self._give_back(tenant, session, sorted(claimed))
            raise
        if facts is None:  # the model could not be asked: try again on the next sending
            await self._give_back(tenant, session, sorted(claimed))
            return []
        try:
            written = await self._write(session, facts, unread, tenant=tenant, actor=actor)
        except BaseException:
            self.count("write_error", 1)
            await self._give_back(tenant, session, sorted(claimed))
            raise
        self.count("written", len(written))
        return written

    async def _ask(self, turns: Sequence[Memory], namespace: str) -> list[ExtractedFact] | None:
        """Every valid fact of the model's answers about `turns` (one answer per part
        of the session); None when the endpoint failed for any part."""
        # Imported here, not with the module: a process without a facts model (every
        # CLI command, most servers) never pays for loading `openai`.
        import openai

        cap, limit = self.settings.max_facts, self.settings.max_prompt_chars
        shown = [PromptTurn(id=t.id, content=t.content, at=t.created_at) for t in turns]
        found: list[ExtractedFact] = []
        for part in parts(shown, limit):
            try:
                answer = await self.chat.ask(prompt(cap), render(part, limit))
            except openai.OpenAIError as exc:  # down, refusing, too slow, not a chat API
                self.count("model_error", 1)
                log.warning("the facts model failed for a session in %s: %s", namespace,
                            type(exc).__name__)
                return None
            facts = parse_facts(answer, [t.id for t in part], cap)
            if facts is None:
                self.count("malformed", 1)
                log.warning("the facts model answered no facts JSON for a session in %s",
                            namespace)
                continue
            self.count("answered", 1)
            found += facts
        return found

    async def _write(self, session: str, facts: Sequence[ExtractedFact],
                     turns: Sequence[Memory], *, tenant: Tenant, actor: str) -> list[Memory]:
        by_id = {t.id: t for t in turns}
        inputs: dict[str, MemoryInput] = {}
        about: dict[str, About] = {}
        for fact in facts:
            sources = [by_id[i] for i in fact.turn_ids]
            id = fact_id(tenant.namespace, session, fact.text)
            inputs.setdefault(id, self._memory(id, session, fact, sources))
            if fact.about is not None:
                about.setdefault(id, fact.about)
        if not inputs:
            return []
        known = await self.memories.existing_ids(tenant.namespace, list(inputs), tenant=tenant)
        fresh = {id: m for id, m in inputs.items() if id not in known}
        plan, earlier = await self._reconcile(fresh, about, tenant)
        creating = [m for id, m in fresh.items() if id not in plan.reinforce]
        written = (await self.memories.write(creating, tenant=tenant, actor=actor)
                   if creating else [])
        # A plain write that repeated another memory names that one: follow it.
        stored = {m.id: w.id for m, w in zip(creating, written, strict=True)
                  if m.id is not None}
        stored.update(plan.reinforce)
        await self._reinforce(plan, earlier, fresh, session, tenant=tenant, actor=actor)
        edges: list[EdgeSpec] = [
            (stored.get(id, id), turn, EdgeType.DERIVED, {"derivation": SOURCE_TYPE})
            for fact in facts
            for id in [fact_id(tenant.namespace, session, fact.text)]
            for turn in fact.turn_ids]
        await self.memories.add_edges(tenant=tenant, edges=edges, actor=actor)
        await self._supersede(plan, stored, about, earlier, tenant=tenant, actor=actor)
        return written

    async def _reconcile(self, fresh: dict[str, MemoryInput], about: dict[str, About],
                         tenant: Tenant) -> tuple[Reconciled, dict[str, EarlierFact]]:
        """What the new facts that name a subject and attribute do to the stored ones
        (one read for the batch), and the stored ones it found by id."""
        named = {id: m for id, m in fresh.items() if id in about}
        if not named:
            return Reconciled(), {}
        found = await self.graph.earlier(
            tenant=tenant, about=[(*about[id].keys, m.agent_id, m.user_id)
                                  for id, m in named.items()],
            memory_type=FACT_TYPE, source_type=SOURCE_TYPE, exclude=list(fresh),
            now=utcnow())
        earlier = {f.id: f for f in found}
        new = [Stated(id=id, text=m.content, keys=about[id].keys, at=m.now or utcnow(),
                      known=False) for id, m in named.items()]
        known = [Stated(id=f.id, text=f.text, keys=f.keys, at=f.at, known=True)
                 for f in found]
        return reconcile(new, known), earlier

    async def _reinforce(self, plan: Reconciled, earlier: dict[str, EarlierFact],
                         fresh: dict[str, MemoryInput], session: str, *, tenant: Tenant,
                         actor: str) -> None:
        """The stored facts said again are reinforced, as a repeated write would be."""
        repeats: dict[str, list[MemoryInput]] = {}
        for new, old in plan.reinforce.items():
            repeats.setdefault(old, []).append(fresh[new])
        kept = [(old, reinforcement(earlier[old].kept, inputs), session)
                for old, inputs in repeats.items()]
        reinforced = await self.graph.reinforce(tenant=tenant, kept=kept, actor=actor,
                                                now=utcnow())
        if reinforced:
            await self.memories.events.updated(reinforced, actor)

    async def _supersede(self, plan: Reconciled, stored: dict[str, str],
                         about: dict[str, About], earlier: dict[str, EarlierFact], *,
                         tenant: Tenant, actor: str) -> None:
        """Each replacing fact SUPERSEDES the one it replaces: an UPDATES link (the
        write's own detection may have made it already), confirmed as a person would
        confirm it, so the old fact is kept as history, audited and announced. A pair
        someone rejected stays as it is."""
        def named(id: str) -> tuple[str, str]:
            return about[id].keys if id in about else earlier[id].keys

        pairs = [(stored.get(newer, newer), stored.get(older, older), named(newer))
                 for newer, older in plan.supersede]
        pairs = [p for p in pairs if p[0] != p[1]]
        if not pairs:
            return
        links = await self.graph.propose(tenant=tenant, pairs=pairs, now=utcnow())
        updates = UpdateService(self.memories)
        for link in links:
            if link.status != "candidate":
                continue  # confirmed already (the namespace supersedes on its own), or rejected
            try:
                await updates.confirm(tenant=tenant, id=link.id, actor=actor)
            except MemlatticeError as exc:  # replaced meanwhile by another reading
                log.warning("a fact of the model could not supersede %s in %s (%s)",
                            link.older, tenant.namespace, exc.code)

    def _memory(self, id: str, session: str, fact: ExtractedFact,
                sources: Sequence[Memory]) -> MemoryInput:
        """A fact filed like its turns: their namespace and scope, the highest of their
        sensitivities, and the time of the latest of them."""
        first = sources[0]
        return validated(
            MemoryInput, namespace=first.namespace, id=id, content=fact.text,
            memory_type=FACT_TYPE, scope=first.scope, agent_id=first.agent_id,
            user_id=first.user_id, session_id=first.session_id or session,
            task_id=first.task_id, tags=first.tags,
            sensitivity=max((s.sensitivity for s in sources), key=lambda s: s.rank),
            source=first.source, source_type=SOURCE_TYPE, extraction_method="llm",
            metadata=_about_metadata(fact.about),
            provenance={"session": session, "turns": list(fact.turn_ids),
                        "model": self.chat.model},
            now=max(s.created_at for s in sources),
        )

    async def _give_back(self, tenant: Tenant, session: str, ids: list[str]) -> None:
        with contextlib.suppress(Exception):  # Neo4j down too: the turns stay claimed
            await self.graph.release(tenant=tenant, session=session, ids=ids)


def _about_metadata(about: About | None) -> dict[str, str]:
    """The subject and attribute as the model named them, and folded for look-ups
    (and for a caller's metadata filter)."""
    if about is None:
        return {}
    subject_key, attribute_key = about.keys
    return {"subject": about.subject, "attribute": about.attribute,
            "subjectKey": subject_key, "attributeKey": attribute_key}


def session_facts(memories: MemoryService, settings: FactsLLMSettings, *,
                  count: Callable[[FactsOutcome, int], None] | None = None) -> SessionFacts | None:
    """The fact reader for the configured model, or None when none is configured."""
    if not settings.model:
        return None
    from memlattice.services.llm_extract import write_side_chat

    return SessionFacts(memories, write_side_chat(settings), settings, count=count)
