"""A `MemoryFilter` fenced to its tenant, and as Cypher WHERE conditions with their parameters."""

from __future__ import annotations

from typing import Any

from memlattice.core.auth import Tenant
from memlattice.core.errors import Forbidden
from memlattice.core.model import MemoryFilter
from memlattice.graph.codec import meta_value
from memlattice.graph.visibility import believed


def filter_conditions(f: MemoryFilter, var: str = "m", state: str | None = None, *,
                      leads: bool = False) -> tuple[list[str], dict[str, Any]]:
    """WHERE conditions (beyond namespace and expiry) for a MemoryFilter.

    With `as_of`, `state` names the node holding `var`'s state then (`state_at`):
    the time rules test `var` (the current node knows when it was retired), every
    other condition tests the state then, so `tags`, `metadata` etc. match as of then.
    With `leads` (a search, never with `as_of`), a superseded memory that a confirmed
    update replaced passes whatever `statuses` say: it leads the search to the state
    that replaced it (services.recall decides whether it is shown).
    """
    conds = []
    params: dict[str, Any] = {"statuses": [s.value for s in f.statuses]}
    if f.as_of is not None:
        conds.append(believed(var))
        params["asOf"] = f.as_of
    var = state or var
    if leads:
        conds.append(f"({var}.status IN $statuses OR {var}.status = 'superseded' AND EXISTS"
                     f" {{ ({var})<-[:UPDATES {{kind: 'update', status: 'confirmed'}}]-(:Memory) }})")
    else:
        conds.append(f"{var}.status IN $statuses")
    if f.scope_keys is not None:
        conds.append(f"{var}.scopeKey IN $scopeKeys")
        params["scopeKeys"] = list(f.scope_keys)
    if f.scope is not None:
        # A level; the ids below narrow it (see MemoryFilter.indexed_scope_keys).
        conds.append(f"{var}.scope = $scopeLevel")
        params["scopeLevel"] = f.scope.value
    for field, prop in (("agent_id", "agentId"), ("user_id", "userId"),
                        ("session_id", "sessionId"), ("task_id", "taskId")):
        value = getattr(f, field)
        if value is not None:
            conds.append(f"{var}.{prop} = ${prop}")
            params[prop] = value
    if f.key is not None:
        conds.append(f"{var}.key = $key")
        params["key"] = f.key
    if f.tags_any:
        conds.append(f"any(t IN {var}.tags WHERE t IN $tagsAny)")
        params["tagsAny"] = list(f.tags_any)
    if f.tags_all:
        conds.append(f"all(t IN $tagsAll WHERE t IN {var}.tags)")
        params["tagsAll"] = list(f.tags_all)
    if f.metadata:
        conds.append(f"all(k IN keys($meta) WHERE {var}['meta.' + k] = $meta[k])")
        params["meta"] = {k: meta_value(v) for k, v in f.metadata.items()}
    if f.source_type is not None:
        conds.append(f"{var}.sourceType = $sourceType")
        params["sourceType"] = f.source_type
    if f.memory_types:
        conds.append(f"{var}.memoryType IN $memoryTypes")
        params["memoryTypes"] = list(f.memory_types)
    if f.min_confidence is not None:
        conds.append(f"{var}.confidence >= $minConfidence")
        params["minConfidence"] = f.min_confidence
    if f.created_after is not None:
        conds.append(f"{var}.createdAt >= $createdAfter")
        params["createdAfter"] = f.created_after
    if f.created_before is not None:
        conds.append(f"{var}.createdAt < $createdBefore")
        params["createdBefore"] = f.created_before
    # Event time: the memory's range [eventStart, eventEnd) overlaps the window.
    if f.event_after is not None:
        conds.append(f"{var}.eventEnd > $eventAfter")
        params["eventAfter"] = f.event_after
    if f.event_before is not None:
        conds.append(f"{var}.eventStart < $eventBefore")
        params["eventBefore"] = f.event_before
    return conds, params


def fenced(flt: MemoryFilter, tenant: Tenant) -> MemoryFilter:
    """A filter of the tenant's own namespace, its scope chain clipped to the key's maximum.

    An explicit scope above the maximum is refused; the broader levels a scope
    chain would add on its own are dropped silently.
    """
    if flt.namespace != tenant.namespace:
        raise Forbidden(f"the filter names namespace {flt.namespace}, not the authorised"
                        f" {tenant.namespace}")
    if flt.scope is not None:
        tenant.check_scope(flt.scope)
    if flt.scope_keys is not None and tenant.scopes is not None:
        return flt.model_copy(update={"scope_keys": tenant.clip_scope_keys(flt.scope_keys)})
    return flt
