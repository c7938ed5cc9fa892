"""Who is calling and what they may touch: principals and tenants (pure, no I/O).

An API key authenticates as a `Principal`: the namespaces it is bound to, the
broadest scope it may read or write, its sensitivity clearance, whether it may
write, and whether it is an operator's admin key. A principal never reaches
the graph layer directly. Every graph operation takes a `Tenant`, which only
`Principal.tenant(namespace, write=...)` hands out after authorising: it pins
one namespace, the clearance and the visible scope levels, and every Cypher
statement filters on all three. A resolver that forgets to authorise cannot
call the graph at all.

    namespaces   None = every namespace; entries are exact names (`acme/crm`)
                 or prefix patterns (`acme/*` = every namespace below `acme/`)
    max_scope    task < session < user < agent; `agent` also covers memories
                 written without a scope (they belong to the whole namespace)
    clearance    public < low < medium < high < hyper
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memlattice.core.errors import Forbidden, Unauthenticated, ValidationError
from memlattice.core.fairness import UNSET_LIMITS, KeyLimits
from memlattice.core.model import (
    NAMESPACE_SCOPE_KEY,
    SCOPE_CHAIN,
    SENSITIVITY_ORDER,
    Scope,
    Sensitivity,
    validate_namespace,
)

__all__ = [
    "Principal",
    "Scope",
    "Sensitivity",
    "Tenant",
    "namespace_pattern",
]

# Only Principal.tenant holds this; a Tenant built elsewhere refuses to exist.
_GRANT = object()


def namespace_pattern(value: str) -> str:
    """Validate one namespace binding: `acme/crm`, `acme/*`, or `*` (every namespace)."""
    if value == "*":
        return value
    base = value.removesuffix("/*")
    try:
        validate_namespace(base)
    except ValueError as exc:
        raise ValidationError(f"namespace pattern {value!r}: {exc}", field="namespace") from None
    return value


def _matches(pattern: str, namespace: str) -> bool:
    if pattern == "*":
        return True
    if pattern.endswith("/*"):
        return namespace.startswith(pattern[:-1])
    return namespace == pattern


def scope_levels(max_scope: Scope) -> tuple[str, ...] | None:
    """The stored `scope` values a key may touch; None means every one, unscoped included."""
    if max_scope is Scope.AGENT:
        return None
    return tuple(s.value for s in SCOPE_CHAIN[: SCOPE_CHAIN.index(max_scope) + 1])


@dataclass(frozen=True)
class Tenant:
    """One authorised namespace with the caller's limits: what every graph call requires.

    Obtainable only through `Principal.tenant`; `params()` are the Cypher
    parameters (`$namespace`, `$sensitivities`, `$scopes`) that the graph
    layer's visibility predicate reads.
    """

    namespace: str
    clearance: Sensitivity
    scopes: tuple[str, ...] | None
    writable: bool
    principal: str
    _grant: object = field(repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        if self._grant is not _GRANT:
            raise TypeError("a Tenant is obtained from Principal.tenant(namespace, write=...)")

    @classmethod
    def system(cls, namespace: str, *, principal: str = "system") -> Tenant:
        """The service's own jobs (scheduled consolidation, the operator's CLI): the whole
        namespace, hyper clearance, every scope, writable. Never built from a request: a
        caller's view always comes from `Principal.tenant`."""
        try:
            validate_namespace(namespace)
        except ValueError as exc:
            raise ValidationError(str(exc), field="namespace") from None
        return cls(namespace=namespace, clearance=Sensitivity.HYPER, scopes=None,
                   writable=True, principal=principal, _grant=_GRANT)

    @property
    def sensitivities(self) -> list[str]:
        """Every sensitivity the clearance admits, as stored values."""
        return [s.value for s in SENSITIVITY_ORDER if s <= self.clearance]

    @property
    def restricted(self) -> bool:
        """Whether visibility is narrower than the namespace (clearance or scope limits)."""
        return self.clearance is not Sensitivity.HYPER or self.scopes is not None

    def params(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "sensitivities": self.sensitivities,
                "scopes": list(self.scopes) if self.scopes is not None else None}

    def require_write(self) -> None:
        if not self.writable:
            raise Forbidden(f"namespace {self.namespace} was opened read-only")

    def check_scope(self, scope: Scope | None) -> None:
        """Refuse a scope level above the key's maximum (None = the whole namespace)."""
        value = scope.value if scope is not None else NAMESPACE_SCOPE_KEY
        if self.scopes is not None and value not in self.scopes:
            where = f"scope {scope.value}" if scope is not None else "namespace-wide memories"
            raise Forbidden(f"this key's maximum scope is {self.scopes[-1]}; {where} is above it",
                            scope=value)

    def check_sensitivity(self, sensitivity: Sensitivity) -> None:
        if sensitivity > self.clearance:
            raise Forbidden(f"sensitivity {sensitivity.value} is above this key's clearance"
                            f" ({self.clearance.value})", sensitivity=sensitivity.value)

    def check_record(self, *, namespace: str, scope: Scope | None,
                     sensitivity: Sensitivity) -> None:
        """A record about to be written must lie inside this tenant's bounds."""
        self.require_write()
        if namespace != self.namespace:
            raise Forbidden(f"namespace {namespace} is not the authorised {self.namespace}")
        self.check_scope(scope)
        self.check_sensitivity(sensitivity)

    def clip_scope_keys(self, keys: tuple[str, ...] | None) -> tuple[str, ...] | None:
        """Drop visibility buckets above the maximum scope (e.g. from a search's chain)."""
        if self.scopes is None or keys is None:
            return keys
        return tuple(k for k in keys if k.split(":", 1)[0] in self.scopes)


# Audit entries keep at most this many characters of an actor.
ACTOR_MAX = 256


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: an API key's bounds, or the keyless development caller."""

    key_id: str | None
    name: str
    namespaces: frozenset[str] | None
    max_scope: Scope
    clearance: Sensitivity
    can_write: bool
    admin: bool = False
    anonymous: bool = False
    # Its own request, concurrency and cost limits (memlattice.core.fairness); unset
    # ones are the server's defaults.
    limits: KeyLimits = UNSET_LIMITS

    @classmethod
    def development(cls) -> Principal:
        """Keyless mode's caller: every namespace, every scope, hyper clearance, admin."""
        return cls(key_id=None, name="keyless-dev", namespaces=None, max_scope=Scope.AGENT,
                   clearance=Sensitivity.HYPER, can_write=True, admin=True)

    @classmethod
    def nobody(cls) -> Principal:
        """A connection that has not authenticated yet: every use raises UNAUTHENTICATED."""
        return cls(key_id=None, name="anonymous", namespaces=frozenset(),
                   max_scope=Scope.TASK, clearance=Sensitivity.PUBLIC, can_write=False,
                   anonymous=True)

    def may_access(self, namespace: str) -> bool:
        if self.anonymous:
            return False
        return self.namespaces is None or any(_matches(p, namespace) for p in self.namespaces)

    def authorize(self, namespace: str, *, write: bool) -> None:
        """Raise unless this caller may read (or write) `namespace`."""
        if self.anonymous:
            raise Unauthenticated("send an API key: `Authorization: Bearer mlk_...`")
        if not self.may_access(namespace):
            raise Forbidden(f"this key is not bound to namespace {namespace}",
                            namespace=namespace)
        if write and not self.can_write:
            raise Forbidden("this key is read-only", namespace=namespace)

    def tenant(self, namespace: str, *, write: bool) -> Tenant:
        """Authorise, then hand out the value every graph operation requires."""
        try:
            validate_namespace(namespace)
        except ValueError as exc:
            raise ValidationError(str(exc), field="namespace") from None
        self.authorize(namespace, write=write)
        return Tenant(namespace=namespace, clearance=self.clearance,
                      scopes=scope_levels(self.max_scope), writable=write,
                      principal=self.name, _grant=_GRANT)

    def actor(self, declared: str | None) -> str:
        """The name audit entries and change events record for this caller.

        With keys it starts with the key that authenticated the request
        (`key:<name>#<id>`), which no caller can choose, so an audit trail
        cannot be forged by a header; the actor the caller declares
        (`x-memlattice-actor`: an agent's end user, a job) follows after `/`.
        Without a key (keyless development) the declared name is all there is.
        """
        declared = (declared or "").strip() or None
        if self.key_id is None:
            return (declared or self.name)[:ACTOR_MAX]
        key = f"key:{self.name}#{self.key_id}"
        return f"{key}/{declared}"[:ACTOR_MAX] if declared else key[:ACTOR_MAX]

    def require_admin(self) -> None:
        if self.anonymous:
            raise Unauthenticated("send an API key: `Authorization: Bearer mlk_...`")
        if not self.admin:
            raise Forbidden("this operation needs an admin key")
