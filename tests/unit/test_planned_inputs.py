"""Planned input conversion builds exactly what Strawberry's generic walk builds."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from graphql import coerce_input_value
from strawberry.types.arguments import convert_argument

from memlattice.resolvers import edge_inputs, inputs, knowledge_types, search_inputs
from memlattice.resolvers.schema import schema

VECTOR = base64.b64encode(np.arange(4, dtype="<f4").tobytes()).decode()
SAMPLES: list[tuple[type, dict[str, Any]]] = [
    (inputs.MemoryInput, {"namespace": "a/b", "content": "Alice moved"}),
    (inputs.MemoryInput, {
        "namespace": "a/b", "content": "Alice moved", "id": "m-1", "memoryType": "note",
        "key": "alice.city", "value": {"city": "Lisbon", "n": [1, None]}, "summary": "s",
        "tags": ["x", "y"], "metadata": {"lang": "en"}, "scope": "SESSION", "agentId": "ag",
        "userId": "u", "sessionId": "s", "taskId": "t", "confidence": 0.5,
        "sensitivity": "HIGH", "salience": 0.2, "source": "chat", "sourceType": "chat",
        "extractionMethod": "llm", "provenance": {"doc": 1}, "expiresAt": "2030-01-01T00:00:00Z",
        "embedding": VECTOR, "embeddingModel": "m", "now": "2024-03-01T12:30:45.123456+00:00"}),
    (inputs.MemoryInput, {"namespace": "a", "content": "c", "tags": None, "scope": None}),
    (search_inputs.SearchInput, {"filter": {"namespace": "a"}, "vector": [0.1, 0.2], "limit": 3}),
    (search_inputs.SearchInput, {
        "filter": {"namespace": "a", "statuses": ["ACTIVE", "SUPERSEDED"], "tagsAny": ["t"],
                   "metadata": {"k": 1}},
        "query": "where does alice live", "mode": "HYBRID", "scoring": "HYBRID",
        "context": {"agentId": "ag", "userId": "u"}, "scopes": ["USER", "AGENT"],
        "weights": {"similarity": 0.5, "fulltext": 0.3},
        "expansion": {"depth": 2, "types": ["SUPPORTS", "RELATED"], "direction": "BOTH"},
        "mmrLambda": 0.5, "minScore": 0.1}),
    # The current spellings (docs/api.md, One vocabulary) beside the deprecated ones above.
    (search_inputs.SearchInput, {
        "filter": {"namespace": "a"}, "embedding": VECTOR, "agentId": "ag", "userId": "u",
        "sessionId": "s", "taskId": "t", "scope": "TASK"}),
    (edge_inputs.EdgeInput, {"sourceId": "a", "targetId": "b", "type": "RELATED"}),
    (edge_inputs.EdgeInput, {"sourceId": "a", "targetId": "b", "type": "SUPPORTS",
                             "metadata": {"why": 1}, "namespace": "n"}),
    (knowledge_types.FactInput, {"namespace": "a", "kind": "preference", "claim": "likes tea"}),
]


@pytest.fixture
def generic() -> Iterator[None]:
    """Strawberry's own conversion: every planned input without its hook."""
    planned = [t for module in (inputs, search_inputs, edge_inputs, knowledge_types)
               for t in vars(module).values()
               if getattr(getattr(t, "__strawberry_definition__", None), "from_input", None)]
    saved = {t: t.__strawberry_definition__.from_input for t in planned}
    for t in planned:
        t.__strawberry_definition__.from_input = None
    yield
    for t, hook in saved.items():
        t.__strawberry_definition__.from_input = hook


def _convert(cls: type, raw: dict[str, Any]) -> Any:
    name = schema.config.name_converter.from_type(cls.__strawberry_definition__)
    coerced = coerce_input_value(raw, schema._schema.get_type(name))
    return convert_argument(coerced, cls, schema.schema_converter.scalar_registry, schema.config)


@pytest.mark.parametrize(("cls", "raw"), SAMPLES)
def test_planned_conversion_matches_strawberrys(cls: type, raw: dict[str, Any],
                                                request: pytest.FixtureRequest) -> None:
    assert cls.__strawberry_definition__.from_input is not None
    planned = _convert(cls, raw)
    request.getfixturevalue("generic")
    assert cls.__strawberry_definition__.from_input is None
    assert _convert(cls, raw) == planned
    assert type(planned) is cls


def test_list_values_are_copies() -> None:
    raw = {"namespace": "a", "content": "c", "tags": ["x"]}
    name = schema.config.name_converter.from_type(inputs.MemoryInput.__strawberry_definition__)
    coerced = coerce_input_value(raw, schema._schema.get_type(name))
    built = convert_argument(coerced, inputs.MemoryInput,
                             schema.schema_converter.scalar_registry, schema.config)
    assert built.tags == ["x"] and built.tags is not coerced["tags"]
