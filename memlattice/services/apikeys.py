"""API keys: minting, storing hashed, revoking, and turning a presented key into a Principal.

A key reads `mlk_<id>_<secret>`: `mlk_` makes a leaked key recognisable to
secret scanners, `<id>` (12 hex characters) is the lookup handle that
`keys list` and `keys revoke` show, `<secret>` is 256 random bits. The graph
stores only the SHA-256 of the whole key (a high-entropy secret needs no slow
hash) and the comparison is constant-time.

Lookups are not cached: every request reads its key node (one indexed read),
so a revocation takes effect on the very next request, in every process.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from memlattice.core.auth import Principal, namespace_pattern
from memlattice.core.errors import NotFound, Unauthenticated, ValidationError
from memlattice.core.fairness import UNSET_LIMITS, KeyLimits
from memlattice.core.model import Scope, Sensitivity, utcnow
from memlattice.core.remembered import Remembered
from memlattice.graph.keys import LIMIT_PROPERTIES, ApiKeyGraph, StoredKey

log = logging.getLogger(__name__)

PREFIX = "mlk_"
_TOKEN = re.compile(r"^mlk_([0-9a-f]{12})_([A-Za-z0-9_-]{20,128})$")
AuthMode = Literal["keys", "keyless"]


def mint() -> tuple[str, str]:
    """A new (key id, full secret key)."""
    key_id = secrets.token_hex(6)
    return key_id, f"{PREFIX}{key_id}_{secrets.token_urlsafe(32)}"


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def key_id_of(token: str | None) -> str | None:
    """The key id a presented key names (`Bearer mlk_<id>_...`), unchecked; None if
    it has not the shape of a key."""
    key = bearer(token)
    match = _TOKEN.match(key) if key else None
    return match.group(1) if match else None


def bearer(value: str | None) -> str | None:
    """The key from an `Authorization` value (`Bearer <key>`) or a bare key."""
    if value is None:
        return None
    value = value.strip()
    scheme, _, rest = value.partition(" ")
    if rest and scheme.lower() == "bearer":
        value = rest.strip()
    return value or None


@dataclass(frozen=True)
class KeySpec:
    """What a new key may do; validated before anything is stored."""

    name: str
    namespaces: tuple[str, ...] | None
    max_scope: Scope = Scope.AGENT
    clearance: Sensitivity = Sensitivity.LOW
    can_write: bool = False
    admin: bool = False
    # Its own limits (memlattice.core.fairness); None: the server's default, 0: none.
    limits: KeyLimits = UNSET_LIMITS

    def validated(self) -> KeySpec:
        if not self.name.strip() or len(self.name) > 128:
            raise ValidationError("a key needs a name of 1 to 128 characters", field="name")
        if self.admin:
            # An operator's key: every namespace, every scope, full clearance, writes.
            return KeySpec(name=self.name, namespaces=None, max_scope=Scope.AGENT,
                           clearance=Sensitivity.HYPER, can_write=True, admin=True,
                           limits=checked_limits(self.limits))
        if not self.namespaces:
            raise ValidationError("a key must be bound to at least one namespace"
                                  " (or be an --admin key)", field="namespace")
        patterns = tuple(dict.fromkeys(namespace_pattern(n) for n in self.namespaces))
        return KeySpec(name=self.name, namespaces=None if "*" in patterns else patterns,
                       max_scope=self.max_scope, clearance=self.clearance,
                       can_write=self.can_write, admin=False,
                       limits=checked_limits(self.limits))


def checked_limits(limits: KeyLimits) -> KeyLimits:
    """Refuse a negative limit (0 is none, None the server's default)."""
    for name, value in vars(limits).items():
        if value is not None and value < 0:
            raise ValidationError(f"the limit {name} must be 0 (no limit) or more",
                                  field=name)
    return limits


def principal_of(key: StoredKey) -> Principal:
    return Principal(
        key_id=key.id, name=key.name,
        namespaces=frozenset(key.namespaces) if key.namespaces is not None else None,
        max_scope=Scope(key.max_scope), clearance=Sensitivity(key.clearance),
        can_write=key.can_write, admin=key.admin, limits=key.limits,
    )


async def create_key(graph: ApiKeyGraph, spec: KeySpec) -> tuple[StoredKey, str]:
    """Store a new key; the returned secret is shown once and never stored."""
    spec = spec.validated()
    key_id, token = mint()
    stored = await graph.create(
        id=key_id, name=spec.name, secret_hash=digest(token), namespaces=spec.namespaces,
        max_scope=spec.max_scope.value, clearance=spec.clearance.value,
        can_write=spec.can_write, admin=spec.admin, now=utcnow(), limits=spec.limits,
    )
    log.info("created API key %s", key_id)
    return stored, token


async def list_keys(graph: ApiKeyGraph) -> list[StoredKey]:
    return await graph.list()


async def set_key_limits(graph: ApiKeyGraph, key_id: str, changes: KeyLimits,
                         *, reset: Sequence[str] = ()) -> StoredKey:
    """Change a live key's limits: the fields `changes` sets, and those named in `reset`
    back to the server's default; the next request of the key sees them."""
    checked_limits(changes)
    props = {prop: getattr(changes, name) for name, prop in LIMIT_PROPERTIES.items()
             if getattr(changes, name) is not None}
    props.update({LIMIT_PROPERTIES[name]: None for name in reset})
    stored = await graph.set_limits(key_id, props)
    if stored is None:
        raise NotFound(f"no API key {key_id}", id=key_id)
    log.info("changed the limits of API key %s", key_id)
    return stored


async def revoke_key(graph: ApiKeyGraph, key_id: str) -> StoredKey:
    stored = await graph.revoke(key_id, now=utcnow())
    if stored is None:
        raise NotFound(f"no API key {key_id}", id=key_id)
    log.info("revoked API key %s", key_id)
    return stored


class Authenticator:
    """Turns what a request presents into a Principal; shared as `runtime.auth`.

    In `keyless` mode every caller is `Principal.development()` (a key that is
    sent anyway is still checked, so a client can test its key locally).
    """

    def __init__(self, graph: ApiKeyGraph, mode: AuthMode = "keys", *,
                 cache_s: float = 0.0) -> None:
        self.graph = graph
        self.mode = mode
        # A key read less than `cache_s` ago is not read again (MEMLATTICE_KEY_CACHE_S).
        # Off (0) by default: every request reads its key, so a revocation holds at the
        # very next request in every process. On, a key in use is read once per
        # `cache_s` per process, not on every request (a read costs Neo4j about a sixth
        # of the CPU a small search does); a revocation or a change of limits then
        # reaches a process within `cache_s`. Keys not found are never remembered.
        self._known: Remembered[str, StoredKey] | None = (
            Remembered(cache_s, max_entries=10_000) if cache_s > 0 else None)

    async def authenticate(self, token: str | None) -> Principal:
        """`token` is a key, `Bearer <key>`, or None; raises Unauthenticated."""
        key = bearer(token)
        if key is None:
            if self.mode == "keyless":
                return Principal.development()
            raise Unauthenticated(
                "this server needs an API key: send `Authorization: Bearer mlk_...`"
                " (create one with `memlattice keys create`)")
        match = _TOKEN.match(key)
        stored = await self._stored(match.group(1)) if match else None
        if stored is None or not hmac.compare_digest(stored.secret_hash, digest(key)):
            raise Unauthenticated("the API key is not valid")
        if stored.revoked_at is not None:
            raise Unauthenticated("the API key has been revoked")
        return principal_of(stored)

    async def _stored(self, key_id: str) -> StoredKey | None:
        known = self._known
        if known is not None and not known.due(key_id):
            cached = known.get(key_id)
            if cached is not None:
                return cached
        stored = await self.graph.get(key_id)
        if known is not None and stored is not None:
            known.put(key_id, stored)
        return stored


def describe(keys: Sequence[StoredKey]) -> list[dict[str, str]]:
    """Rows for `keys list`: everything but the hash."""
    return [{
        "id": k.id, "name": k.name,
        "namespaces": "*" if k.namespaces is None else ",".join(k.namespaces),
        "max_scope": k.max_scope, "clearance": k.clearance,
        "access": "admin" if k.admin else ("read-write" if k.can_write else "read-only"),
        "created": k.created_at.isoformat(timespec="seconds"),
        "revoked": k.revoked_at.isoformat(timespec="seconds") if k.revoked_at else "-",
        "limits": describe_limits(k.limits),
    } for k in keys]


def describe_limits(limits: KeyLimits) -> str:
    """`rate=5,burst=10` for the limits a key sets itself; `default` when none."""
    own = [f"{name}={value:g}" for name, value in vars(limits).items() if value is not None]
    return ",".join(own) or "default"
