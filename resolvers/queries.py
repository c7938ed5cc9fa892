"""Read operations. Each resolver converts its input, calls one service method
and wraps the records; nothing else happens here."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from memlattice.core.errors import ValidationError
from memlattice.core.memory_fields import properties_of
from memlattice.core.model import as_utc, validate_namespace
from memlattice.core.pacing import boundary
from memlattice.resolvers import glossary as g
from memlattice.resolvers.connections import MemoryConnection, MemoryEdge, PageInfo
from memlattice.resolvers.context import Info
from memlattice.resolvers.glossary import arg
from memlattice.resolvers.inputs import MemoryFilterInput
from memlattice.resolvers.search_inputs import SearchInput
from memlattice.resolvers.selections import selected_below
from memlattice.resolvers.types import (
    AuditEntry,
    Direction,
    Edge,
    EdgeType,
    EmbeddingStatus,
    Memory,
    MemoryVersion,
    NamespaceConfig,
    SearchHit,
)
from memlattice.services.memories import SearchQuery

MAX_PAGE = 500


def _namespace(value: str) -> str:
    try:
        return validate_namespace(value)
    except ValueError as exc:
        raise ValidationError(str(exc), field="namespace") from None


@strawberry.type
class Query:
    @strawberry.field(description="One memory by id; expired memories are not found. With"
                      " `asOf`, the memory as it was then, if it was believed then (recorded,"
                      " not yet superseded, retracted, forgotten or expired).")
    async def memory(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        id: Annotated[strawberry.ID, arg(g.MEMORY_ID)],
        as_of: Annotated[datetime | None, arg(
            "Time travel: the memory as it was at this instant (system time); NOT_FOUND"
            " when it was not believed then.")] = None,
    ) -> Memory:
        m = await info.context.service.get(tenant=info.context.tenant(namespace), id=str(id),
                                           as_of=as_utc(as_of))
        return Memory.from_domain(m)

    @strawberry.field(description="The versions of a memory, newest (the current one) first,"
                      " each with the system time it was current in.")
    async def memory_history(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        id: Annotated[strawberry.ID, arg(g.MEMORY_ID)],
        limit: Annotated[int, arg("At most this many versions, newest first (1-500).")] = 100,
    ) -> list[MemoryVersion]:
        versions = await info.context.service.history(tenant=info.context.tenant(namespace),
                                                      id=str(id), limit=limit)
        return [MemoryVersion.from_domain(v) for v in versions]

    @strawberry.field(description=(
        "Memories matching a filter, newest first (createdAt, then id), as a Relay"
        " connection: `first` (and `after`) pages forward, `last` (and `before`) backward;"
        " neither gives the first 50. A page holds 1 to 500; `first` with `last`, a size"
        " outside that range or a cursor this API did not return is a VALIDATION error."))
    async def memories(
        self, info: Info,
        filter: Annotated[MemoryFilterInput, strawberry.argument(
            description="Which memories: the namespace and any narrowing.")],
        first: Annotated[int | None, strawberry.argument(description=(
            "Page forward: this many memories (1-500) after `after`, from the newest when"
            " `after` is not given. Default 50 when `last` is not given either."))] = None,
        after: Annotated[str | None, strawberry.argument(description=(
            "An edge's cursor (usually `pageInfo.endCursor`): only memories after it, i.e."
            " older."))] = None,
        last: Annotated[int | None, strawberry.argument(description=(
            "Page backward: this many memories (1-500) just before `before`, the oldest"
            " ones when `before` is not given. Not together with `first`."))] = None,
        before: Annotated[str | None, strawberry.argument(description=(
            "An edge's cursor (usually `pageInfo.startCursor`): only memories before it,"
            " i.e. newer."))] = None,
    ) -> MemoryConnection:
        flt = filter.to_domain()
        service = info.context.service
        page = await service.page(flt, tenant=info.context.tenant(flt.namespace), first=first,
                                  last=last, after=after, before=before, max_size=MAX_PAGE)
        return MemoryConnection(
            edges=[MemoryEdge(cursor=service.cursor(m), node=Memory.from_domain(m))
                   for m in page.items],
            page_info=PageInfo(has_next_page=page.has_next, has_previous_page=page.has_previous,
                               start_cursor=page.start_cursor, end_cursor=page.end_cursor),
            total_count=page.total,
        )

    @strawberry.field(description="Relationships of a memory.")
    async def edges(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        id: Annotated[strawberry.ID, arg(g.MEMORY_ID)],
        types: Annotated[list[EdgeType] | None, arg(
            "Only these relationship types; null or omitted: all.")] = None,
        direction: Annotated[Direction, arg(
            "Relationships it starts (OUT), ends (IN), or both (BOTH, the default)."
        )] = Direction.BOTH,
    ) -> list[Edge]:
        found = await info.context.service.edges(
            tenant=info.context.tenant(namespace), id=str(id), types=types or [],
            direction=direction,
        )
        return [Edge.from_domain(e) for e in found]

    @strawberry.field(description="A namespace's search defaults, if it was configured.")
    async def namespace_config(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
    ) -> NamespaceConfig | None:
        config = await info.context.service.namespaces.get(
            info.context.tenant(namespace).namespace)
        return NamespaceConfig.from_domain(config) if config else None

    @strawberry.field(description="The namespaces holding memories that the caller's key may"
                      " read, in name order (keyless development: every one); `prefix` keeps"
                      " those starting with it. For a namespace picker.")
    async def namespaces(
        self, info: Info,
        prefix: Annotated[str | None, arg("Only namespaces starting with this text.")] = None,
        limit: Annotated[int, arg("At most this many names (1-1000).")] = 200,
    ) -> list[str]:
        return await info.context.service.directory.visible(info.context.principal,
                                                            prefix=prefix, limit=limit)

    @strawberry.field(description="Which vector space a namespace searches, and how far a"
                      " re-embed into a new model has come.")
    async def embedding_status(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
    ) -> EmbeddingStatus:
        status = await info.context.service.embedding_status(tenant=info.context.tenant(namespace))
        return EmbeddingStatus.from_domain(status)

    @strawberry.field(description="Every recorded mutation of a memory, oldest first.")
    async def audit_trail(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        id: Annotated[strawberry.ID, arg(g.MEMORY_ID)],
    ) -> list[AuditEntry]:
        entries = await info.context.service.audit_trail(tenant=info.context.tenant(namespace),
                                                         id=str(id))
        return [AuditEntry.from_domain(a) for a in entries]

    @strawberry.field(
        description="Scoped recall: vector and fulltext candidates, scored, graph-expanded,"
        " every hit explained."
    )
    async def search(
        self, info: Info,
        input: Annotated[SearchInput, arg("What to look for, where, and how to score it.")],
    ) -> list[SearchHit]:
        flt = input.to_filter()
        tenant = info.context.tenant(flt.namespace)
        asked = SearchQuery(
            filter=flt, query=input.query,
            vector=input.query_vector(),
            preset=input.preset, options=input.options(),
            scopes=(*(input.scopes or ()), *([input.scope] if input.scope else [])),
            now=as_utc(input.now), notes=info.context.notes,
            record_access=info.context.record_access,
            memory_properties=properties_of(selected_below(info, ("memory",))),
        )
        hits = await info.context.service.configured_search(asked, tenant=tenant)
        info.context.notes.extend(input.deprecation_notes())
        # Serializing the hits is a search's last stretch of Python: in a crowded
        # process a heavier key's waits here for lighter keys' (memlattice.core.pacing).
        await boundary()
        return [SearchHit.from_domain(h) for h in hits]

