"""Consolidation: turn successful episodes into knowledge, on demand and on a schedule.

`Consolidator.consolidate(tenant)` plans with the pure rules of
`memlattice.core.records.consolidation` and applies the plan in one transaction
under the namespace's consolidation lock, then decays salience and prunes
episodes by policy. `ConsolidationScheduler` runs it for every namespace
that holds episodes every `interval_hours` (started in the app lifespan).

Consolidation acts for a whole namespace (it reads every episode and decays
and prunes every record), so it runs only for a tenant that sees all of it:
the scheduler and the CLI pass `Tenant.system(namespace)`, and a key with
less than hyper clearance or every scope is refused (FORBIDDEN) rather than
let it change records it cannot see.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime

from neo4j import AsyncManagedTransaction

from memlattice.core.auth import Tenant
from memlattice.core.background import BackgroundTask
from memlattice.core.errors import Forbidden, MemlatticeError
from memlattice.core.model import MemoryInput, as_utc, utcnow
from memlattice.core.records.config import ConsolidationSettings
from memlattice.core.records.consolidation import Derived, plan
from memlattice.core.records.text import describe
from memlattice.graph.codec import Edge, Memory
from memlattice.graph.consolidation import ConsolidationGraph
from memlattice.graph.leases import LeaseGraph
from memlattice.graph.records import RecordGraph
from memlattice.services.change_events import ChangeEvents
from memlattice.services.events import EventBus
from memlattice.services.leases import Elected
from memlattice.services.llm_extract import Extractor
from memlattice.services.memories import MemoryService

log = logging.getLogger(__name__)

ACTOR = "consolidation"


@dataclass(frozen=True)
class Report:
    """What one consolidation of a namespace did."""

    namespace: str
    created: dict[str, list[str]] = field(default_factory=dict)
    reinforced: dict[str, list[str]] = field(default_factory=dict)
    decayed: int = 0
    pruned: tuple[str, ...] = ()
    # For the event bus, not for the caller: the derived records created, and the
    # DERIVED relationships created to their episodes.
    written: tuple[Memory, ...] = field(default=(), repr=False)
    edges: tuple[Edge, ...] = field(default=(), repr=False)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.reinforced or self.decayed or self.pruned)


class Consolidator:
    def __init__(self, memories: MemoryService, settings: ConsolidationSettings,
                 extractor: Extractor | None = None, events: EventBus | None = None) -> None:
        self.memories = memories
        self.settings = settings
        self.extractor = extractor
        self.client = memories.graph.client
        self.graph = ConsolidationGraph(self.client, RecordGraph(self.client))
        self.events = ChangeEvents(self.client, events) if events is not None else memories.events

    async def namespaces(self) -> list[str]:
        return await self.graph.namespaces()

    async def aclose(self) -> None:
        if self.extractor is not None:
            await self.extractor.aclose()

    async def consolidate(self, tenant: Tenant, *, actor: str = ACTOR,
                          now: datetime | None = None) -> Report:
        tenant.require_write()
        if tenant.restricted:
            raise Forbidden("consolidation changes every record of the namespace; it needs a"
                            " key with hyper clearance and every scope",
                            namespace=tenant.namespace)
        namespace = tenant.namespace
        at = as_utc(now) or utcnow()

        async def work(tx: AsyncManagedTransaction) -> Report:
            await self.graph.lock(tx, namespace)
            episodes = await self.graph.episodes(tx, namespace)
            if self.extractor is not None:
                episodes = await self.graph.with_extracted(tx, namespace, episodes,
                                                           self.extractor)
            draft = plan(namespace, episodes, {})
            existing = await self.graph.existing(tx, namespace, [a.id for a in draft.actions])
            actions = plan(namespace, episodes, existing).actions
            created: dict[str, list[str]] = {}
            reinforced: dict[str, list[str]] = {}
            written: list[Memory] = []
            edges: list[Edge] = []
            for action in actions:
                if action.create:
                    (prepared,) = await self.memories.prepare([self._memory(namespace, action,
                                                                            at)])
                    record, derived = await self.graph.create(tx, action, prepared, actor)
                    written.append(record.memory)
                    created.setdefault(action.type.value, []).append(action.id)
                else:
                    derived = await self.graph.reinforce(tx, namespace, action, actor, at)
                    reinforced.setdefault(action.type.value, []).append(action.id)
                edges += derived
            decayed = await self.graph.decay(tx, namespace, at,
                                             self.settings.salience_half_life_days)
            pruned = await self.graph.prune(tx, namespace, at, self.settings.prune_below,
                                            self.settings.prune_min_age_days, actor)
            return Report(namespace=namespace, created=created, reinforced=reinforced,
                          decayed=decayed, pruned=tuple(pruned), written=tuple(written),
                          edges=tuple(edges))

        report: Report = await self.client.transaction(work)
        await self.events.written(report.written, actor)
        await self.events.updated_ids(
            namespace, [i for ids in report.reinforced.values() for i in ids], actor)
        await self.events.forgotten_ids(namespace, report.pruned, actor)
        await self.events.edges_added(namespace, report.edges, actor, known=report.written)
        if report.changed:
            log.info("consolidated %s: created %s, reinforced %s, decayed %s, pruned %s",
                     namespace, sum(map(len, report.created.values())),
                     sum(map(len, report.reinforced.values())), report.decayed,
                     len(report.pruned))
        return report

    @staticmethod
    def _memory(namespace: str, action: Derived, now: datetime) -> MemoryInput:
        return MemoryInput(
            namespace=namespace, id=action.id, content=describe(action.payload),
            memory_type=action.type.value, confidence=action.confidence, salience=0.5,
            sensitivity=action.sensitivity, source_type="consolidation",
            extraction_method=ACTOR, now=now,
            provenance={"episodes": list(action.episodes)},
        )


class ConsolidationScheduler:
    """Consolidates every namespace with episodes every `interval_hours`.

    With `leases` (a server), of all the processes sharing the database only the
    one holding the `consolidation` lease runs the schedule (memlattice.services.leases),
    so N processes do not consolidate and decay N times a period."""

    def __init__(self, consolidator: Consolidator, interval_hours: float,
                 leases: LeaseGraph | None = None) -> None:
        self.consolidator = consolidator
        self.interval_s = interval_hours * 3600
        self._plain = BackgroundTask("memlattice-consolidation", self._loop)
        self._schedule: BackgroundTask | Elected = (
            self._plain if leases is None
            else Elected(leases, "consolidation", self._run_all,
                         every_s=max(self.interval_s, 1.0)))

    def start(self) -> None:
        if self.interval_s > 0:
            self._schedule.start()

    async def stop(self) -> None:
        """Stop the schedule and close what the consolidator holds (the LLM client)."""
        await self._schedule.stop()
        await self.consolidator.aclose()

    async def run_once(self) -> list[Report]:
        reports = []
        for namespace in await self.consolidator.namespaces():
            try:
                reports.append(await self.consolidator.consolidate(Tenant.system(namespace)))
            except MemlatticeError as exc:  # one namespace's failure must not stop the rest
                log.warning("consolidation of %s failed: %s", namespace, exc.code)
        return reports

    async def _run_all(self) -> None:
        await self.run_once()

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            await self._plain.step(self.run_once())


def consolidation_scheduler(service: MemoryService, settings: ConsolidationSettings,
                            events: EventBus | None = None,
                            leases: LeaseGraph | None = None) -> ConsolidationScheduler:
    """A consolidator for on-demand runs and its schedule, not yet started (the runtime
    starts it in a server; a one-shot command only runs the consolidator)."""
    from memlattice.services.llm_extract import openai_extractor

    scheduler = ConsolidationScheduler(
        Consolidator(service, settings, extractor=openai_extractor(settings), events=events),
        settings.interval_hours, leases)
    return scheduler
