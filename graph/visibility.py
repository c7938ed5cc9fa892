"""What a tenant may see of a node, as Cypher conditions.

Every read names `$namespace` and applies the expiry rule (`visible`); every
builder that takes a `Tenant` also applies its clearance and scopes (`allowed`),
with `$namespace`, `$sensitivities` and `$scopes` coming from `Tenant.params()`
only. Kept apart from the statements so each statement module states its
fence by name instead of re-deriving it.
"""

from __future__ import annotations

from typing import Any

from memlattice.core.model import Sensitivity

# A memory is visible in `$namespace` at `$now` when it belongs there and has not expired.
_VISIBLE = "{m}.namespace = $namespace AND ({m}.expiresAt IS NULL OR {m}.expiresAt > $now)"


def visible(var: str = "m") -> str:
    return _VISIBLE.format(m=var)


# What a tenant may see of a node in its namespace: sensitivity up to its clearance
# (unset counts as low) and scope levels up to its key's maximum (`$scopes` null =
# every level; unscoped memories belong to the whole namespace). Every builder that
# takes a `Tenant` applies it, with `$namespace`, `$sensitivities` and `$scopes`
# coming from `Tenant.params()` only.
_ALLOWED = ("coalesce({m}.sensitivity, 'low') IN $sensitivities"
            " AND ($scopes IS NULL OR coalesce({m}.scope, 'namespace') IN $scopes)")


def allowed(var: str = "m") -> str:
    return _ALLOWED.format(m=var)


def owned(var: str = "m") -> str:
    """In the tenant's namespace and within its clearance and scopes (expired or not)."""
    return f"{var}.namespace = $namespace AND {allowed(var)}"


def tenant_visible(var: str = "m") -> str:
    """`visible` and `allowed`: what a tenant's reads return."""
    return f"{visible(var)} AND {allowed(var)}"


def unrestricted() -> dict[str, Any]:
    """`$sensitivities` and `$scopes` that admit everything: for statements that act
    for the whole namespace (a job, an event snapshot filtered per subscriber later)
    but project memories, whose projection applies them (`shown_successor`)."""
    return {"sensitivities": [s.value for s in Sensitivity], "scopes": None}


def shown_successor(var: str = "m") -> str:
    """`var.supersededBy`, or null unless the successor it names is `owned` by the
    tenant: a memory the caller may not see must not be named by one it may (and a
    successor erased since is named by nothing). An expression, so every projection
    redacts in the same round trip; it reads `$namespace`, `$sensitivities`, `$scopes`."""
    return (f"CASE WHEN {var}.supersededBy IS NOT NULL AND EXISTS {{"
            f" MATCH (successor:Memory {{id: {var}.supersededBy}})"
            f" WHERE {owned('successor')} }} THEN {var}.supersededBy END")


def believed(var: str = "m") -> str:
    """Believed at `$asOf`: recorded by then, not yet retired then (see MemoryFilter.as_of)."""
    return f"{var}.createdAt <= $asOf" + "".join(
        f" AND ({var}.{p} IS NULL OR {var}.{p} > $asOf)"
        for p in ("supersededAt", "retractedAt", "forgottenAt", "expiresAt"))
