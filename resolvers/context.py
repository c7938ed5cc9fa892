"""The typed per-request context every resolver receives.

Resolvers reach the app's services through it (built once, shared by every
request), never the graph. DataLoaders are created here, per request, never
at module level: a loader's cache must not outlive the request that filled it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from strawberry.dataloader import DataLoader
from strawberry.types import Info as _Info

from memlattice.core.auth import Principal, Tenant
from memlattice.core.gate import Gate
from memlattice.services.consolidation import ConsolidationScheduler
from memlattice.services.events import EventBus
from memlattice.services.knowledge import KnowledgeService
from memlattice.services.memories import MemoryService
from memlattice.services.session_facts import SessionFacts


@dataclass
class Context:
    service: MemoryService
    # Typed records and facts (memlattice.services.knowledge), on the same memory service.
    knowledge: KnowledgeService
    # Who audit entries and events name (Principal.actor): on a WebSocket, set
    # again once `connection_init` has authenticated the key.
    actor: str
    declared_actor: str | None = None
    # Whether this request's searches count as recalls (accessCount, popularity):
    # a person browsing sends `x-memlattice-record-access: false` (the explorer does).
    record_access: bool = True
    # The change-event bus (subscriptions) and, on a WebSocket, the
    # graphql-transport-ws `connection_init` payload.
    events: EventBus | None = None
    connection_params: dict[str, Any] | None = None
    # Who is calling (memlattice.core.auth); until a WebSocket authenticates, nobody.
    principal: Principal = field(default_factory=Principal.nobody)
    # A WebSocket's way to authenticate its key again (set at connection_init),
    # and how often a live subscription does (Settings.key_recheck_s).
    reauthenticate: Callable[[], Awaitable[Principal]] | None = None
    key_recheck_s: float = 30.0
    # On-demand consolidation (memlattice.services.consolidation); None outside a running app.
    consolidation: ConsolidationScheduler | None = None
    # The optional write-side LLM that reads ingested sessions for facts; None when off.
    session_facts: SessionFacts | None = None
    embedding_loaders: dict[str, DataLoader[str, list[float] | None]] = field(
        default_factory=dict
    )
    # The process's per-key limits (memlattice.core.fairness): the cost analysis
    # (resolvers.limits) charges each operation's cost to the caller's key; None: off.
    gate: Gate | None = None
    # What the operation's resolvers tell the caller beside the data
    # (`extensions.notes`, resolvers.notes).
    notes: list[str] = field(default_factory=list)

    async def recheck_key(self) -> None:
        """Authenticate a WebSocket's key again, so that revoking it ends what the
        connection may still do; raises UNAUTHENTICATED. An HTTP request is
        authenticated as it arrives, so for it this does nothing."""
        if self.reauthenticate is not None:
            self.principal = await self.reauthenticate()

    def tenant(self, namespace: str, *, write: bool = False) -> Tenant:
        """Authorise the caller for `namespace`: the value every graph operation requires.
        Raises UNAUTHENTICATED, FORBIDDEN, or VALIDATION for a malformed namespace."""
        return self.principal.tenant(namespace, write=write)

    def embedding_loader(self, namespace: str) -> DataLoader[str, list[float] | None]:
        """Batch `Memory.embedding` lookups of one response into one query per namespace."""
        loader = self.embedding_loaders.get(namespace)
        if loader is None:
            tenant = self.tenant(namespace)

            async def load(ids: Sequence[str]) -> list[list[float] | None]:
                found = await self.service.embeddings(tenant=tenant, ids=ids)
                return [found.get(i) for i in ids]

            loader = DataLoader(load_fn=load)
            self.embedding_loaders[namespace] = loader
        return loader


Info = _Info[Context, None]
