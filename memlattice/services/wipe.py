"""Wiping a namespace: an operator's way to erase everything a namespace holds.

Only an admin key may wipe (a key bound to the namespace, even with write access,
may not: forgetting and deleting memories is what such keys are for). A dry run
counts what would go and changes nothing, so an operator sees the size of the
wipe before making it. The wipe is logged and recorded (memlattice.graph.wipe),
and this process's short-lived caches of the namespace are dropped, so its next
write starts from defaults.

Writes that reach the namespace while a wipe runs may survive it: stop the
namespace's writers first.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from memlattice.core.auth import Principal
from memlattice.core.model import utcnow
from memlattice.graph.memories import new_id
from memlattice.graph.wipe import NamespaceWipeGraph, WipeCounts
from memlattice.services.memories import MemoryService

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WipeReport:
    namespace: str
    dry_run: bool
    counts: WipeCounts
    # The NamespaceWipe record's id; None for a dry run.
    wipe_id: str | None = None


async def wipe_namespace(service: MemoryService, *, principal: Principal, namespace: str,
                         dry_run: bool, actor: str) -> WipeReport:
    """Count (dry run) or erase every node and relationship of `namespace`."""
    principal.require_admin()
    tenant = principal.tenant(namespace, write=True)  # validates the namespace
    graph = NamespaceWipeGraph(service.graph.client)
    if dry_run:
        return WipeReport(tenant.namespace, True, await graph.count(tenant.namespace))
    wipe_id = new_id()
    counts = await graph.wipe(tenant.namespace, id=wipe_id, actor=actor, at=utcnow())
    service.namespaces.forget_cached(tenant.namespace)
    if service.spaces is not None:
        service.spaces.forget_cached(tenant.namespace)
    log.warning("namespace %s wiped by %s: %d memories, %d nodes, %d relationships (wipe %s)",
                tenant.namespace, actor, counts.memories, sum(counts.nodes.values()),
                counts.relationships, wipe_id)
    return WipeReport(tenant.namespace, False, counts, wipe_id)
