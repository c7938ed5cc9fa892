"""Input rules, each with the message a caller sees."""

from __future__ import annotations

import pytest

from memlattice.core.errors import ValidationError
from memlattice.core.model import (
    ForgetPredicate,
    MemoryInput,
    MemoryPatch,
    Scope,
    validate_namespace,
    validated,
)


@pytest.mark.parametrize("namespace", ["a", "team/alice/notes", "ünïcode/ok", "a.b/c-d"])
def test_relative_namespaces_are_accepted(namespace: str) -> None:
    assert validate_namespace(namespace) == namespace


@pytest.mark.parametrize(
    ("namespace", "reason"),
    [("/abs", "absolute"), ("a/../b", "'..'"), ("./a", "'.'"), ("a//b", "empty segment"),
     ("a/", "empty segment"), ("", "non-empty"), ("C:/x", "absolute"), ("a\\b", "backslash"),
     ("a\x00b", "control")],
)
def test_bad_namespaces_are_rejected_with_a_reason(namespace: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        validate_namespace(namespace)


def test_scope_needs_its_id_and_yields_a_scope_key() -> None:
    with pytest.raises(ValidationError, match="needs sessionId"):
        validated(MemoryInput, namespace="n", content="x", scope=Scope.SESSION)
    memory = validated(MemoryInput, namespace="n", content="x", scope=Scope.USER, user_id="u1")
    assert memory.scope_key() == "user:u1"
    assert validated(MemoryInput, namespace="n", content="x").scope_key() == "namespace"


def test_errors_name_fields_as_the_api_spells_them() -> None:
    with pytest.raises(ValidationError) as caught:
        validated(MemoryInput, namespace="n", content="x", source_type="s" * 500)
    assert caught.value.code == "VALIDATION"
    assert caught.value.details["fields"] == ["sourceType"]


def test_tags_are_deduplicated_in_order() -> None:
    memory = validated(MemoryInput, namespace="n", content="x", tags=("b", "a", "b"))
    assert memory.tags == ("b", "a")


def test_patch_reports_only_what_the_caller_set() -> None:
    patch = validated(MemoryPatch, summary=None, confidence=0.5)
    assert patch.changes() == {"summary": None, "confidence": 0.5}


@pytest.mark.parametrize("bad", [{}, {"tags": ()}, {"contains": "x", "key": "k"}, {"query": "?!"}])
def test_forget_predicates_must_say_something(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        validated(ForgetPredicate, **bad)


def test_embedding_must_be_finite() -> None:
    with pytest.raises(ValidationError, match="NaN"):
        validated(MemoryInput, namespace="n", content="x", embedding=(1.0, float("nan")))


def test_scope_chain_sees_broader_levels_that_the_context_names() -> None:
    from memlattice.core.model import ScopeRef, visible_scope_keys

    ctx = validated(ScopeRef, agent_id="a", user_id="u", session_id="s", task_id="t")
    assert visible_scope_keys(ctx, scope=Scope.SESSION) == (
        "session:u/s", "user:u", "agent:a", "namespace")
    assert visible_scope_keys(ctx, scope=Scope.USER) == ("user:u", "agent:a", "namespace")
    assert visible_scope_keys(ctx) == (
        "task:u/s/t", "session:u/s", "user:u", "agent:a", "namespace")
    assert visible_scope_keys(ctx, scopes=(Scope.TASK, Scope.AGENT)) == ("task:u/s/t", "agent:a")
    partial = validated(ScopeRef, user_id="u")
    assert visible_scope_keys(partial) == ("user:u", "namespace")
    assert visible_scope_keys(validated(ScopeRef)) is None
    with pytest.raises(ValidationError, match="sessionId"):
        visible_scope_keys(partial, scope=Scope.SESSION)
    with pytest.raises(ValidationError, match="scopes"):
        visible_scope_keys(partial, scopes=(Scope.AGENT,))


def test_a_session_or_task_bucket_lies_within_its_user_and_session() -> None:
    from memlattice.core.model import ScopeRef, bucket_key, visible_scope_keys

    def task(**ids: str) -> str:
        return validated(MemoryInput, namespace="n", content="x", scope=Scope.TASK,
                         **ids).scope_key()

    written = task(user_id="u1", session_id="s1", task_id="t1")
    assert written == "task:u1/s1/t1"
    # The same task id under another user or session is another bucket...
    asked = validated(ScopeRef, user_id="u2", session_id="s2", task_id="t1")
    assert written not in visible_scope_keys(asked, scope=Scope.TASK)  # type: ignore[operator]
    assert task(user_id="u2", session_id="s1", task_id="t1") != written
    # ...and naming no user or session is naming none: not a wildcard.
    assert task(task_id="t1") == "task://t1" != written
    # A separator inside an id cannot forge another path.
    assert task(user_id="u1/s1", session_id="x", task_id="t1") != task(
        user_id="u1", session_id="s1/x", task_id="t1")
    assert bucket_key(Scope.SESSION, {"user_id": "a%2Fb", "session_id": "c"}) != bucket_key(
        Scope.SESSION, {"user_id": "a/b", "session_id": "c"})
    # Agents and users are roots; an empty id is no id.
    assert bucket_key(Scope.AGENT, {"agent_id": "a", "user_id": "u"}) == "agent:a"
    assert bucket_key(Scope.SESSION, {"user_id": "", "session_id": "s"}) == bucket_key(
        Scope.SESSION, {"session_id": "s"})
