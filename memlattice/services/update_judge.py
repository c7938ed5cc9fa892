"""The optional write-side LLM judges which earlier memories a new memory replaces.

On with the write-side LLM (`MEMLATTICE_FACTS_LLM_MODEL`, core.settings.
FactsLLMSettings.judge_updates). After any write commits (`writeMemory`,
`writeMemories`, `ingestConversation`, the MCP `remember`), each memory it
created is given its offers, as `Memory.mayReplace` gives them to its writer
(services.updates.offered: the nearest earlier memories by meaning and by words,
active, visible to the writer's key, no rejected pair), and the chat model is
asked which of them it replaces (core.update_judging). Each pair it names gets
the link `proposeUpdate` makes: a candidate of kind update, reason "judged by
model <name>", with the model's confidence; recall marks the older memory as
outdated and puts the newer first, as for a writer's own statement
(services.outdating.asked_about). A namespace with `autoSupersede` confirms a
link whose confidence reaches its threshold at once (the older memory becomes
SUPERSEDED, kept as history), as it does the rule set's. A candidate the rule
set found between a new memory and an offer the model was shown and did not
name is disputed: recall ignores it until a person confirms it (the rules'
wrong links are what costs a reader most: a statement that still holds marked
outdated).

Why a model and not more rules: seven rounds of rules link about a third of the
updates on scenarios nobody tuned them on, right two times in five; with the
right pair judged among the first three offers, current@1 on those scenarios goes
from 0.45 to 0.64 and stale-above from 0.40 to 0.13 (docs/benchmarks.md, round
eight's ceiling). A model reads what the rules cannot: that "mornings are green
tea for me these days" replaces "my go-to drink is a flat white every morning".

It runs in the background: no write waits for the model or fails with it. The
write's new memories are queued in the graph by its own transaction and judged
by one process at a time (services.judge_queue), so a model that is down or answers garbage, or a
restart, only delays their judging: they are asked about again, with backoff. It
is logged and counted (`memlattice_update_judge_answers_total{outcome}`); the
writer can still judge with `mayReplace` and `proposeUpdate`. The model can only name offers it was
shown, so it never links a memory the writer's key may not see, and every link
goes through `proposeUpdate`'s refusals (order, cycles, rejected pairs).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Literal

from memlattice.core.auth import Tenant
from memlattice.core.errors import MemlatticeError
from memlattice.core.settings import FactsLLMSettings
from memlattice.core.update_judging import (
    PROMPT,
    Judged,
    JudgeOutcome,
    Shown,
    Verdict,
    parse_verdicts,
    parts,
    render,
)
from memlattice.graph.codec import Memory
from memlattice.graph.judge_queue import JudgeQueueGraph
from memlattice.graph.leases import LeaseGraph
from memlattice.services.judge_queue import Judgement, JudgeQueue
from memlattice.services.session_facts import Chat
from memlattice.services.updates import UpdateService

log = logging.getLogger(__name__)


def _shown(memory: Memory) -> Shown:
    return Shown(id=memory.id, content=memory.content, at=memory.created_at)


class UpdateJudge:
    """Asks a chat model which offered earlier memories each new memory replaces."""

    def __init__(self, updates: UpdateService, chat: Chat, settings: FactsLLMSettings,
                 leases: LeaseGraph, *, count: Callable[[JudgeOutcome, int], None] | None = None,
                 waiting: Callable[[int], None] | None = None) -> None:
        self.updates = updates
        self.chat = chat
        self.settings = settings
        # (outcome, how many): answered, malformed, model_error, linked, refused,
        # disputed; and the queue's retried and abandoned.
        self.count = count or (lambda outcome, n: None)
        self.queue = JudgeQueue(JudgeQueueGraph(updates.memories.graph.client), leases,
                                self._judge, settings, count=self.count, waiting=waiting)

    def start(self) -> None:
        """Start judging what waits in the graph (a server's loop; a one-shot command
        only marks, and a server judges its writes later)."""
        self.queue.start()

    def follow(self, written: Sequence[Memory], tenant: Tenant, actor: str) -> None:
        """A committed write's new memories wait in the graph, marked by its own
        transaction (graph.judge_queue.mark_in; the model's own facts are not): wake
        the loop that judges them."""
        self.queue.wake()

    async def drain(self) -> None:
        """In the process that judges, try every memory due once (tests, and a caller
        that wants the links before it searches): writes mark theirs as they commit."""
        await self.queue.drain()

    async def aclose(self) -> None:
        """Stop judging (what is left waits in the graph) and close the client."""
        await self.queue.stop()
        await self.chat.aclose()

    async def _judge(self, written: Sequence[Shown], tenant: Tenant,
                     actor: str) -> Judgement:
        done = Judgement()
        await self.judge(written, tenant=tenant, actor=actor, outcome=done)
        return done

    async def judge(self, written: Sequence[Shown], *, tenant: Tenant, actor: str,
                    outcome: Judgement | None = None) -> list[Verdict]:
        """Offer, ask, link; the verdicts that became links (or were links already).
        `outcome` is told which memories were judged, and which the model could not
        be asked about or answered garbage about (to be asked again)."""
        outcome = outcome if outcome is not None else Judgement()
        offered = [await self._offers(m, tenant) for m in written]
        items = [item for item, _ in offered if item.offers]
        outcome.judged += [item.memory.id for item, _ in offered if not item.offers]
        guessed = {pair for _, pairs in offered for pair in pairs}
        if not items:
            return []
        auto = await self.updates.memories.auto_supersede(tenant.namespace)
        linked: list[Verdict] = []
        for part in parts(items, self.settings.max_prompt_chars):
            verdicts = await self._ask(part, tenant.namespace)
            if not isinstance(verdicts, list):
                failed = outcome.failed if verdicts == "model_error" else outcome.malformed
                failed += [item.memory.id for item in part]
                continue
            for verdict in verdicts:
                if await self._link(verdict, auto, tenant=tenant, actor=actor):
                    linked.append(verdict)
            if self.settings.judge_disputes:
                named = {(v.newer, v.older) for v in verdicts}
                shown = {(item.memory.id, offer.id) for item in part for offer in item.offers}
                wrong = sorted((shown & guessed) - named)
                disputed = await self.updates.dispute(
                    tenant=tenant, pairs=wrong, by=f"model {self.chat.model}", actor=actor)
                self.count("disputed", len(disputed))
            outcome.judged += [item.memory.id for item in part]
        self.count("linked", len(linked))
        return linked

    async def _offers(self, memory: Shown, tenant: Tenant
                      ) -> tuple[Judged, set[tuple[str, str]]]:
        """The memory's offers, less those already decided (a confirmed or rejected
        link) and episodes, which nothing replaces; and the pairs among them that the
        rule set linked as a candidate nobody stated or disputed yet."""
        found = await self.updates.may_replace(tenant=tenant, id=memory.id,
                                               text=memory.content,
                                               first=self.settings.judge_offers)
        open_ = [r for r in found if r.memory.memory_type != "episodic"
                 and (r.update is None or r.update.status == "candidate")]
        guessed = {(memory.id, r.memory.id) for r in open_ if r.update is not None
                   and r.update.kind == "update" and r.update.proposed_by is None
                   and r.update.disputed_by is None}
        return (Judged(memory=memory, offers=tuple(_shown(r.memory) for r in open_)),
                guessed)

    async def _ask(self, part: Sequence[Judged], namespace: str
                   ) -> list[Verdict] | Literal["model_error", "malformed"]:
        """The model's verdicts on `part`; or why there are none: it could not be asked,
        or answered no JSON (then nothing it was shown is disputed either, and `part`
        is asked about again later)."""
        # Imported here: a process without a model never loads `openai`.
        import openai

        try:
            answer = await self.chat.ask(PROMPT, render(part))
        except openai.OpenAIError as exc:  # down, refusing, too slow, not a chat API
            self.count("model_error", 1)
            log.warning("the update judge's model failed in %s: %s", namespace,
                        type(exc).__name__)
            return "model_error"
        verdicts = parse_verdicts(answer, part)
        if verdicts is None:
            self.count("malformed", 1)
            log.warning("the update judge's model answered no replaces JSON in %s", namespace)
            return "malformed"
        self.count("answered", 1)
        return verdicts

    async def _link(self, verdict: Verdict, auto: float | None, *, tenant: Tenant,
                    actor: str) -> bool:
        """The verdict as an update link (confirmed when the namespace lets one this
        confident supersede); False when it is refused (say, a memory changed since)."""
        try:
            await self.updates.propose(
                tenant=tenant, newer=verdict.newer, older=verdict.older, actor=actor,
                attribute=verdict.attribute, confidence=verdict.confidence,
                said=f"judged by model {self.chat.model}",
                confirm=auto is not None and verdict.confidence >= auto)
        except MemlatticeError as exc:
            self.count("refused", 1)
            log.info("the update judge's link %s -> %s was refused: %s", verdict.newer,
                     verdict.older, exc.code)
            return False
        return True


def update_judge(updates: UpdateService, settings: FactsLLMSettings, leases: LeaseGraph, *,
                 count: Callable[[JudgeOutcome, int], None] | None = None,
                 waiting: Callable[[int], None] | None = None) -> UpdateJudge | None:
    """The update judge for the configured model, or None when none is configured
    or judging is off (then no write is queued for judging, now or later); it follows
    every write of `updates.memories`."""
    if not settings.model or not settings.judge_updates:
        return None
    from memlattice.services.llm_extract import write_side_chat

    judge = UpdateJudge(updates, write_side_chat(settings), settings, leases, count=count,
                        waiting=waiting)
    updates.memories.judged = True
    updates.memories.followers.append(judge.follow)
    return judge
