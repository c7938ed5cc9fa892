"""Everything a Memlattice process opens, opened and closed in one place.

The app's lifespan, the CLI commands and the MCP server all need the same
things in the same order: a Neo4j driver (verified), the schema migrated, the
embedder behind its Neo4j-backed cache, the event bus, the services with all
their parts, and for a long-running server the background loops (access
counts, re-embedding, the consolidation schedule, the event log's outbox and
pruning). Several processes may run them against one database: access counts
are increments and re-embedding writes MERGEs (safe anywhere), index-share
counts and space states are per-process caches of what the graph holds, and
the consolidation schedule and the log's pruning are elected to one process by
a lease (memlattice.services.leases). `open_runtime` builds them once, on an exit
stack, so whatever was started is stopped in reverse order: on a normal exit
and when a later step of start-up fails (the access counts flush while the
driver is still open). `open_graph` (memlattice.server.graph_opening) is the
smaller half for commands that only need the database.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import timedelta

from memlattice.core.auth import Principal
from memlattice.core.settings import Settings
from memlattice.embeddings import CachedEmbedder, Embedder, make_embedder
from memlattice.embeddings.registry import EmbedderRegistry
from memlattice.graph.client import GraphClient
from memlattice.graph.embedding_cache import EmbeddingCacheGraph
from memlattice.graph.event_log import EventLogGraph
from memlattice.graph.keys import ApiKeyGraph
from memlattice.graph.leases import LeaseGraph
from memlattice.graph.memories import MemoryGraph
from memlattice.graph.vector_spaces import VectorSpaceGraph
from memlattice.search.rerank import RerankerRegistry, http_reranker
from memlattice.server.graph_opening import open_graph
from memlattice.server.observability.metrics import Metrics, TimedEmbedder
from memlattice.services.access import AccessRecorder
from memlattice.services.apikeys import Authenticator
from memlattice.services.consolidation import ConsolidationScheduler, consolidation_scheduler
from memlattice.services.events import EventBus
from memlattice.services.knowledge import KnowledgeService
from memlattice.services.leases import Elected
from memlattice.services.memories import MemoryService
from memlattice.services.reembed import Reembedder
from memlattice.services.session_facts import SessionFacts, session_facts
from memlattice.services.shared_events import SharedEventBus
from memlattice.services.spaces import VectorSpaces
from memlattice.services.update_judge import UpdateJudge, update_judge
from memlattice.services.updates import UpdateService

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    """What a process opens once and every request (or command) shares."""

    client: GraphClient
    service: MemoryService
    knowledge: KnowledgeService
    reembedder: Reembedder
    # The vector spaces and their embedders (memlattice.services.spaces).
    spaces: VectorSpaces | None = None
    # Committed changes, fanned out to GraphQL subscriptions (memlattice.services.events;
    # shared by every process through the log in Neo4j, memlattice.services.shared_events).
    events: EventBus = field(default_factory=EventBus)
    # API keys -> Principal (memlattice.services.apikeys); HTTP and WebSocket both use it.
    auth: Authenticator | None = None
    # Scheduled and on-demand consolidation (memlattice.services.consolidation).
    consolidation: ConsolidationScheduler | None = None
    # Facts read out of ingested sessions by the optional write-side LLM.
    session_facts: SessionFacts | None = None
    # The same model judging which earlier memories each new memory replaces.
    update_judge: UpdateJudge | None = None
    # How often a WebSocket's live subscriptions re-check its key.
    key_recheck_s: float = 30.0
    # The Bolt address the driver was opened on (for the start-up log).
    uri: str = ""

    async def authenticate(self, token: str | None) -> Principal:
        """A key (`Bearer <key>` or bare) -> its Principal; raises UNAUTHENTICATED."""
        assert self.auth is not None, "the runtime is not started"
        return await self.auth.authenticate(token)


def configured_rerankers(settings: Settings,
                         registry: RerankerRegistry | None = None) -> RerankerRegistry:
    """`registry` (an embedding program's Python rerankers) plus the HTTP reranker the
    settings name, if any."""
    registry = registry or RerankerRegistry()
    if settings.rerank.base_url:
        key = settings.rerank.api_key.get_secret_value() if settings.rerank.api_key else None
        registry.register("http", http_reranker(settings.rerank.base_url, settings.rerank.model,
                                                key))
    return registry


def cached_embedder(settings: Settings, client: GraphClient,
                    metrics: Metrics | None = None) -> Embedder | None:
    """The configured embedder (None when the provider is `none`), timed when metrics
    are kept, behind the Neo4j-backed cache."""
    embedder = make_embedder(settings.embedding)
    if embedder is None:
        return None
    if metrics is not None:
        embedder = TimedEmbedder(embedder, metrics, settings.embedding.provider)
    return CachedEmbedder(embedder, EmbeddingCacheGraph(client))


@contextlib.asynccontextmanager
async def event_bus(settings: Settings, client: GraphClient, leases: LeaseGraph, *,
                    background: bool) -> AsyncIterator[EventBus]:
    """The bus the settings choose. The shared log's outbox is drained on exit, while
    the driver is still open; a server also prunes it, from one elected process."""
    if settings.event_log == "memory":
        yield EventBus()
        return
    bus = SharedEventBus(EventLogGraph(client), poll_s=settings.event_poll_s)
    retention = timedelta(seconds=settings.event_retention_s)

    async def prune() -> None:
        pruned = await bus.prune(retention)
        if pruned:
            log.info("pruned %d events older than %s from the log", pruned, retention)

    pruning = Elected(leases, "event-log-prune", prune,
                      every_s=min(settings.event_retention_s / 4, 60.0))
    if background:
        bus.start()
        pruning.start()
    try:
        yield bus
    finally:
        await pruning.stop()
        await bus.stop()


@contextlib.asynccontextmanager
async def open_runtime(
    settings: Settings, *, background: bool = True, embed: bool = True,
    metrics: Metrics | None = None, rerankers: RerankerRegistry | None = None,
    events: EventBus | None = None,
) -> AsyncIterator[Runtime]:
    """Open everything and yield the `Runtime`; close it all in reverse order on exit.

    `background=False` (a one-shot command) builds the same services but starts no
    loop: the command drives the re-embedder or the consolidator itself, and the
    access counts are flushed once at the end. `embed=False` leaves the embedder
    out (an export needs no vectors computed). `rerankers`: a registry already
    configured (`configured_rerankers`), else the settings' own.
    """
    async with contextlib.AsyncExitStack() as started:
        graph_db = await started.enter_async_context(open_graph(
            settings, observer=metrics.observe_query if metrics is not None else None))
        client = graph_db.client
        leases = LeaseGraph(client)
        if events is None:
            events = await started.enter_async_context(event_bus(settings, client, leases,
                                                                 background=background))
        embedder = cached_embedder(settings, client, metrics) if embed else None
        graph = MemoryGraph(client)
        access = AccessRecorder(graph)
        if background:
            access.start()
        started.push_async_callback(access.stop)
        spaces = VectorSpaces(
            VectorSpaceGraph(client),
            EmbedderRegistry(settings.embedding, embedder, EmbeddingCacheGraph(client)),
            settings.vector_index,
        )
        started.push_async_callback(spaces.embedders.aclose)
        reembedder = Reembedder(spaces)
        if background:
            reembedder.start()
        started.push_async_callback(reembedder.stop)
        service = MemoryService(
            graph, embedder, dimension=settings.embedding.dimension,
            candidates=settings.search_candidates, access=access,
            rerankers=rerankers or configured_rerankers(settings), spaces=spaces, events=events,
        )
        started.push_async_callback(service.shares.stop)
        consolidation = consolidation_scheduler(service, settings.consolidation, events, leases)
        started.push_async_callback(consolidation.stop)
        if background:
            consolidation.start()
        facts = session_facts(service, settings.facts_llm,
                              count=metrics.session_facts if metrics is not None else None)
        if facts is not None:
            started.push_async_callback(facts.aclose)
        judge = update_judge(
            UpdateService(service), settings.facts_llm, leases,
            count=metrics.update_judge if metrics is not None else None,
            waiting=metrics.update_judge_waiting if metrics is not None else None)
        if judge is not None:
            started.push_async_callback(judge.aclose)
            if background:
                judge.start()
        yield Runtime(client=client, service=service, knowledge=KnowledgeService(service),
                      reembedder=reembedder, spaces=spaces, events=events,
                      auth=Authenticator(ApiKeyGraph(client), settings.auth_mode,
                                         cache_s=settings.key_cache_s),
                      consolidation=consolidation, session_facts=facts,
                      update_judge=judge,
                      key_recheck_s=settings.key_recheck_s,
                      uri=graph_db.uri)
