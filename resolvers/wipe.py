"""wipeNamespace: an admin erases a namespace (memlattice.services.wipe)."""

from __future__ import annotations

from typing import Annotated

import strawberry

from memlattice.resolvers import glossary as g
from memlattice.resolvers.context import Info
from memlattice.resolvers.glossary import arg
from memlattice.services.wipe import WipeReport, wipe_namespace


@strawberry.type(description="How many nodes of one label a wipe removes (or removed).")
class LabelCount:
    label: str = strawberry.field(
        description="A node label (Memory, MemoryRevision, AuditEntry, ...).")
    count: int = strawberry.field(description="How many nodes with it.")


@strawberry.type(description="What a wipe removed, or with dryRun what it would remove.")
class NamespaceWipeResult:
    namespace: str = strawberry.field(description="The namespace wiped.")
    dry_run: bool = strawberry.field(
        description="True when nothing was removed: the counts say what would be.")
    memories: int = strawberry.field(description="Memories, records and facts included.")
    nodes: int = strawberry.field(description="Every node: memories, revisions, audit entries,"
                                  " evidence, sessions, configuration, ...")
    relationships: int = strawberry.field(description="Relationships removed (or that would be).")
    by_label: list[LabelCount] = strawberry.field(
        description="Nodes removed (or that would be) per label.")
    wipe_id: strawberry.ID | None = strawberry.field(
        description="The id of the (:NamespaceWipe) record the wipe left; null for a dry run.")

    @classmethod
    def from_domain(cls, report: WipeReport) -> NamespaceWipeResult:
        counts = report.counts
        return cls(namespace=report.namespace, dry_run=report.dry_run,
                   memories=counts.memories, nodes=sum(counts.nodes.values()),
                   relationships=counts.relationships,
                   by_label=[LabelCount(label=k, count=v) for k, v in counts.nodes.items()],
                   wipe_id=strawberry.ID(report.wipe_id) if report.wipe_id else None)


@strawberry.type
class WipeMutation:
    @strawberry.mutation(
        description="Erase everything a namespace holds: memories, records, facts, their"
        " relationships, revisions, audit entries and configuration. Admin keys only"
        " (FORBIDDEN otherwise). dryRun counts what would go and changes nothing. The wipe"
        " is recorded as a (:NamespaceWipe) node that no wipe removes."
    )
    async def wipe_namespace(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        dry_run: Annotated[bool, arg("Only count what would be removed; nothing changes.")] = False,
    ) -> NamespaceWipeResult:
        report = await wipe_namespace(info.context.service, principal=info.context.principal,
                                      namespace=namespace, dry_run=dry_run,
                                      actor=info.context.actor)
        return NamespaceWipeResult.from_domain(report)
