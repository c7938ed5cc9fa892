"""Both spellings of a renamed input become one value (docs/api.md, One vocabulary).

The input types map the deprecated `vector`, `context` and `input.namespace`
onto what the current spellings give, so resolvers and services never see the
difference; giving both is VALIDATION. Pure conversion, no server.
"""

from __future__ import annotations

from typing import Any

import pytest

from memlattice.core.errors import ValidationError
from memlattice.resolvers.edge_inputs import EdgeInput
from memlattice.resolvers.inputs import MemoryFilterInput
from memlattice.resolvers.search_inputs import SearchContextInput, SearchInput
from memlattice.resolvers.spellings import either
from memlattice.resolvers.types import EdgeType, Scope


def _search(**fields: Any) -> SearchInput:
    return SearchInput(filter=MemoryFilterInput(namespace="team/a"), **fields)


def test_either_takes_whichever_spelling_was_given() -> None:
    assert either("embedding", [1.0], "vector", None) == [1.0]
    assert either("embedding", None, "vector", [2.0]) == [2.0]
    assert either("embedding", None, "vector", None) is None
    with pytest.raises(ValidationError) as refused:
        either("embedding", [1.0], "vector", [1.0])
    assert refused.value.code == "VALIDATION"
    assert refused.value.details == {"fields": ["embedding", "vector"]}


def test_the_query_vector_is_the_same_under_either_name() -> None:
    assert _search(embedding=[0.5, 0.25]).query_vector() == (0.5, 0.25)
    assert _search(vector=[0.5, 0.25]).query_vector() == (0.5, 0.25)
    assert _search().query_vector() is None
    with pytest.raises(ValidationError):
        _search(embedding=[0.5], vector=[0.5]).query_vector()


@pytest.mark.parametrize(("ids", "scope", "scopes"), [
    ({"user_id": "u1"}, None, None),
    ({"user_id": "u1", "session_id": "s1"}, Scope.SESSION, None),
    ({"agent_id": "ag", "user_id": "u1", "session_id": "s1", "task_id": "t1"}, None,
     [Scope.TASK, Scope.AGENT]),
])
def test_caller_ids_and_the_deprecated_context_scope_alike(
    ids: dict[str, str], scope: Scope | None, scopes: list[Scope] | None
) -> None:
    current = _search(scope=scope, scopes=scopes, **ids)
    deprecated = _search(scope=scope, scopes=scopes, context=SearchContextInput(**ids))
    assert current.caller() == deprecated.caller() == ids
    keys = current.to_filter().scope_keys
    assert keys is not None and keys == deprecated.to_filter().scope_keys


def test_caller_ids_in_both_places_are_refused() -> None:
    both = _search(user_id="u1", context=SearchContextInput(session_id="s1"))
    with pytest.raises(ValidationError) as refused:
        both.to_filter()
    assert refused.value.details == {"fields": ["context", "userId"]}


def test_an_empty_deprecated_context_still_counts_as_given() -> None:
    """`context: {}` with top-level ids is two places, even if one is empty: refused
    rather than guessed."""
    assert _search(context=SearchContextInput()).caller() == {}
    with pytest.raises(ValidationError):
        _search(task_id="t", context=SearchContextInput()).caller()


def test_only_old_spellings_leave_notes() -> None:
    assert _search(embedding=[1.0], user_id="u1").deprecation_notes() == []
    notes = _search(vector=[1.0], context=SearchContextInput(user_id="u1")).deprecation_notes()
    assert len(notes) == 2
    assert "`vector` is deprecated" in notes[0] and "`embedding`" in notes[0]
    assert "`context` is deprecated" in notes[1] and "userId" in notes[1]


def test_add_edge_namespace_from_the_argument_or_the_input() -> None:
    spec = {"source_id": "a", "target_id": "b", "type": EdgeType.RELATED}
    assert EdgeInput(**spec).namespace_of("team/a") == "team/a"
    assert EdgeInput(**spec).deprecation_notes() == []
    old = EdgeInput(**spec, namespace="team/a")
    assert old.namespace_of(None) == "team/a"
    assert "deprecated" in old.deprecation_notes()[0]
    with pytest.raises(ValidationError):
        old.namespace_of("team/a")
    with pytest.raises(ValidationError) as missing:
        EdgeInput(**spec).namespace_of(None)
    assert missing.value.details == {"field": "namespace"}
