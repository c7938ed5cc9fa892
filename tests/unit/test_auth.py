"""Principals, tenants and key secrets: the pure half of authorisation."""

from __future__ import annotations

import pytest

from memlattice.core.auth import Principal, Tenant, namespace_pattern
from memlattice.core.errors import Forbidden, Unauthenticated, ValidationError
from memlattice.core.model import Scope, Sensitivity
from memlattice.services.apikeys import KeySpec, bearer, digest, mint


def key(namespaces: set[str] | None = frozenset({"acme/crm"}), *, write: bool = True,
        max_scope: Scope = Scope.AGENT,
        clearance: Sensitivity = Sensitivity.MEDIUM) -> Principal:
    return Principal(key_id="k1", name="k1",
                     namespaces=frozenset(namespaces) if namespaces is not None else None,
                     max_scope=max_scope, clearance=clearance, can_write=write)


def test_sensitivity_orders_by_rank_not_alphabet() -> None:
    assert Sensitivity.PUBLIC < Sensitivity.LOW < Sensitivity.MEDIUM < Sensitivity.HIGH \
        < Sensitivity.HYPER
    assert sorted([Sensitivity.HYPER, Sensitivity.HIGH, Sensitivity.LOW]) == [
        Sensitivity.LOW, Sensitivity.HIGH, Sensitivity.HYPER]


@pytest.mark.parametrize(("pattern", "namespace", "allowed"), [
    ("acme/crm", "acme/crm", True),
    ("acme/crm", "acme/crm/sub", False),
    ("acme/crm", "acme/crmx", False),
    ("acme/*", "acme/crm", True),
    ("acme/*", "acme/crm/deep", True),
    ("acme/*", "acme", False),
    ("acme/*", "acmeinc/crm", False),
])
def test_namespace_bindings(pattern: str, namespace: str, allowed: bool) -> None:
    principal = key({pattern})
    assert principal.may_access(namespace) is allowed
    if allowed:
        principal.authorize(namespace, write=True)
    else:
        with pytest.raises(Forbidden):
            principal.authorize(namespace, write=False)


def test_read_only_keys_cannot_open_for_writing() -> None:
    principal = key(write=False)
    assert principal.tenant("acme/crm", write=False).writable is False
    with pytest.raises(Forbidden):
        principal.tenant("acme/crm", write=True)
    with pytest.raises(Forbidden):
        principal.tenant("acme/crm", write=False).require_write()


def test_tenants_come_only_from_a_principal() -> None:
    with pytest.raises(TypeError):
        Tenant(namespace="acme/crm", clearance=Sensitivity.HYPER, scopes=None, writable=True,
               principal="forged")


def test_tenant_params_encode_clearance_and_scopes() -> None:
    tenant = key(max_scope=Scope.SESSION, clearance=Sensitivity.LOW).tenant("acme/crm",
                                                                              write=True)
    assert tenant.params() == {"namespace": "acme/crm", "sensitivities": ["public", "low"],
                               "scopes": ["task", "session"]}
    assert tenant.restricted
    everything = Principal.development().tenant("x", write=True)
    assert everything.params()["scopes"] is None and not everything.restricted


def test_records_outside_the_bounds_are_refused() -> None:
    tenant = key(max_scope=Scope.SESSION, clearance=Sensitivity.MEDIUM).tenant("acme/crm",
                                                                                 write=True)
    tenant.check_record(namespace="acme/crm", scope=Scope.TASK, sensitivity=Sensitivity.MEDIUM)
    for namespace, scope, sensitivity in [
            ("acme/other", Scope.TASK, Sensitivity.LOW),
            ("acme/crm", Scope.USER, Sensitivity.LOW),
            ("acme/crm", None, Sensitivity.LOW),
            ("acme/crm", Scope.TASK, Sensitivity.HIGH)]:
        with pytest.raises(Forbidden):
            tenant.check_record(namespace=namespace, scope=scope, sensitivity=sensitivity)


def test_scope_chains_are_clipped_to_the_maximum() -> None:
    tenant = key(max_scope=Scope.SESSION).tenant("acme/crm", write=False)
    assert tenant.clip_scope_keys(
        ("task:u/s/t", "session:u/s", "user:u", "agent:a", "namespace")) == (
        "task:u/s/t", "session:u/s")
    assert key().tenant("acme/crm", write=False).clip_scope_keys(("user:u", "namespace")) == (
        "user:u", "namespace")


def test_nobody_is_unauthenticated_and_malformed_namespaces_are_validation() -> None:
    with pytest.raises(Unauthenticated):
        Principal.nobody().tenant("acme/crm", write=False)
    with pytest.raises(ValidationError):
        key().tenant("../etc", write=False)
    with pytest.raises(Forbidden):
        key().require_admin()
    Principal.development().require_admin()


def test_secrets_are_random_prefixed_and_hashed() -> None:
    key_id, secret = mint()
    other_id, other = mint()
    assert secret.startswith(f"mlk_{key_id}_") and len(secret) > 50
    assert key_id != other_id and secret != other
    assert digest(secret) != secret and len(digest(secret)) == 64
    assert bearer(f"Bearer {secret}") == secret == bearer(f"  bearer   {secret} ")
    assert bearer(secret) == secret and bearer("") is None and bearer(None) is None


def test_key_specs_are_validated() -> None:
    with pytest.raises(ValidationError):
        KeySpec(name="x", namespaces=None).validated()
    with pytest.raises(ValidationError):
        KeySpec(name="x", namespaces=("/abs",)).validated()
    with pytest.raises(ValidationError):
        KeySpec(name=" ", namespaces=("a",)).validated()
    assert KeySpec(name="x", namespaces=("a/*", "*")).validated().namespaces is None
    admin = KeySpec(name="ops", namespaces=("a",), clearance=Sensitivity.PUBLIC,
                    admin=True).validated()
    assert admin.namespaces is None and admin.clearance is Sensitivity.HYPER and admin.can_write
    assert namespace_pattern("acme/*") == "acme/*"


def test_the_system_tenant_sees_and_writes_the_whole_namespace() -> None:
    tenant = Tenant.system("acme/crm")
    assert tenant.namespace == "acme/crm" and tenant.writable and not tenant.restricted
    assert tenant.clearance is Sensitivity.HYPER and tenant.scopes is None
    tenant.check_record(namespace="acme/crm", scope=None, sensitivity=Sensitivity.HYPER)
    with pytest.raises(ValidationError):
        Tenant.system("/absolute")


def test_the_actor_starts_with_the_key_whatever_the_caller_declares() -> None:
    principal = key()
    assert principal.actor(None) == "key:k1#k1"
    assert principal.actor("  ") == "key:k1#k1"
    assert principal.actor("alice") == "key:k1#k1/alice"
    # A declared name that looks like another key stays behind the real one.
    assert principal.actor("key:root#000000000000") == "key:k1#k1/key:root#000000000000"
    assert len(principal.actor("x" * 1000)) == 256
    assert principal.actor("x" * 1000).startswith("key:k1#k1/")


def test_keyless_development_records_the_declared_actor() -> None:
    assert Principal.development().actor("alice") == "alice"
    assert Principal.development().actor(None) == "keyless-dev"
