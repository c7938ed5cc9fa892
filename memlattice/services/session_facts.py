"""The optional write-side LLM: facts read out of each stored conversation session.

Off unless `MEMLATTICE_FACTS_LLM_MODEL` is set (core.settings.FactsLLMSettings).
After `ingestConversation` commits a session, its turns that no reading has
claimed yet (graph.session_facts) are shown to the model, numbered, and each
valid fact of its answer (core.session_facts) becomes a plain memory of type
`observation`, in the namespace, scope and session of its turns, DERIVED from
the turns it names, so that search finds it beside them.

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

import openai

from memlattice.core.auth import Tenant
from memlattice.core.model import EdgeType, MemoryInput, validated
from memlattice.core.session_facts import (
    ExtractedFact,
    PromptTurn,
    fact_id,
    parse_facts,
    parts,
    prompt,
    render,
)
from memlattice.core.settings import FactsLLMSettings
from memlattice.graph.codec import Memory
from memlattice.graph.session_facts import SessionFactsGraph
from memlattice.services.memories import EdgeSpec, MemoryService

log = logging.getLogger(__name__)

FACT_TYPE = "observation"
SOURCE_TYPE = "session_facts"


class Chat(Protocol):
    """A chat model asked for JSON (memlattice.services.llm_extract.JsonChat)."""

    model: str

    async def ask(self, system: str, user: str) -> str: ...

    async def aclose(self) -> None: ...


class SessionFacts:
    """Reads stored sessions with a chat model and files what it finds as memories."""

    def __init__(self, memories: MemoryService, chat: Chat, settings: FactsLLMSettings, *,
                 count: Callable[[str, int], None] | None = None) -> None:
        self.memories = memories
        self.graph = SessionFactsGraph(memories.graph.client)
        self.chat = chat
        self.settings = settings
        # (outcome, how many): answered, malformed, model_error, write_error, written.
        self.count = count or (lambda outcome, n: None)
        self._limit = asyncio.Semaphore(settings.concurrency)
        self._pending: set[asyncio.Task[None]] = set()

    def schedule(self, session: str, turns: Sequence[Memory], *, tenant: Tenant,
                 actor: str) -> None:
        """Read the session's `turns` (as stored, in order) after the caller returns."""
        task = asyncio.ensure_future(self._run(session, list(turns), tenant, actor))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def drain(self) -> None:
        """Wait until every scheduled reading has ended (tests, and a caller that
        wants the facts before it searches)."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    async def aclose(self) -> None:
        """Stop readings in progress (their turns are given back) and close the client."""
        pending = list(self._pending)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
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
        for fact in facts:
            sources = [by_id[i] for i in fact.turn_ids]
            id = fact_id(tenant.namespace, session, fact.text)
            inputs.setdefault(id, self._memory(id, session, fact, sources))
        if not inputs:
            return []
        known = await self.memories.existing_ids(tenant.namespace, list(inputs), tenant=tenant)
        fresh = [m for id, m in inputs.items() if id not in known]
        written = await self.memories.write(fresh, tenant=tenant, actor=actor) if fresh else []
        edges: list[EdgeSpec] = [
            (fact_id(tenant.namespace, session, fact.text), turn, EdgeType.DERIVED,
             {"derivation": SOURCE_TYPE})
            for fact in facts for turn in fact.turn_ids]
        await self.memories.add_edges(tenant=tenant, edges=edges, actor=actor)
        return written

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
            provenance={"session": session, "turns": list(fact.turn_ids),
                        "model": self.chat.model},
            now=max(s.created_at for s in sources),
        )

    async def _give_back(self, tenant: Tenant, session: str, ids: list[str]) -> None:
        with contextlib.suppress(Exception):  # Neo4j down too: the turns stay claimed
            await self.graph.release(tenant=tenant, session=session, ids=ids)


def session_facts(memories: MemoryService, settings: FactsLLMSettings, *,
                  count: Callable[[str, int], None] | None = None) -> SessionFacts | None:
    """The fact reader for the configured model, or None when none is configured."""
    if not settings.model:
        return None
    from memlattice.services.llm_extract import JsonChat

    key = settings.api_key.get_secret_value() if settings.api_key else "unused"
    chat = JsonChat(settings.model, settings.base_url, key, timeout_s=settings.timeout_s)
    return SessionFacts(memories, chat, settings, count=count)
