"""One source for a memory's fields (memlattice.core.memory_fields): every other
spelling of the list is derived from it or checked against it here.

A field added to the source and not to one of these (or the other way round)
fails a test naming the place, instead of being dropped silently on its way
between GraphQL, the service, Neo4j and the client.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import graphql
import pytest

from memlattice.core import model
from memlattice.core.errors import NotFound
from memlattice.core.memory_fields import (
    MEMORY_FIELDS,
    PATCH_FIELDS,
    READ_FIELDS,
    REQUIRED_PROPERTIES,
    WRITE_FIELDS,
    camel_case,
    names,
    properties_of,
)
from memlattice.graph import codec, projections
from memlattice.resolvers import inputs, types
from memlattice_client import _inputs, _models, _operations

SDL = Path(__file__).resolve().parents[2] / "schema.graphql"

READ = set(names(READ_FIELDS))
WRITE = set(names(WRITE_FIELDS))
PATCH = set(names(PATCH_FIELDS))


def strawberry_fields(cls: type) -> set[str]:
    return {f.python_name for f in cls.__strawberry_definition__.fields}  # type: ignore[attr-defined]


def sdl_fields(name: str) -> list[str]:
    schema = graphql.build_schema(SDL.read_text())
    found = schema.get_type(name)
    assert isinstance(found, graphql.GraphQLObjectType | graphql.GraphQLInputObjectType)
    return list(found.fields)


def test_names_are_unique_and_properties_too() -> None:
    assert len(set(names(MEMORY_FIELDS))) == len(MEMORY_FIELDS)
    stored = [f.property for f in MEMORY_FIELDS if f.property is not None]
    assert len(set(stored)) == len(stored)
    assert PATCH <= WRITE


def test_the_domain_record_and_inputs_match() -> None:
    assert {f.name for f in dataclasses.fields(codec.Memory)} == READ
    assert set(model.MemoryInput.model_fields) == WRITE
    assert set(model.MemoryPatch.model_fields) == PATCH


def test_the_graphql_types_and_inputs_match() -> None:
    # `embedding` is a field of its own on the type: loaded on request, batched;
    # `may_replace` is read on request too (graph.updates.proposals).
    assert strawberry_fields(types.Memory) == READ | {"embedding", "may_replace"}
    assert strawberry_fields(inputs.MemoryInput) == WRITE
    assert strawberry_fields(inputs.MemoryPatchInput) == PATCH


def test_schema_graphql_matches() -> None:
    assert sdl_fields("Memory") == [camel_case(n) for n in names(READ_FIELDS)] + [
        "embedding", "mayReplace"]
    assert set(sdl_fields("MemoryInput")) == {camel_case(n) for n in WRITE}
    assert set(sdl_fields("MemoryPatchInput")) == {camel_case(n) for n in PATCH}


def test_the_client_model_selection_and_inputs_match() -> None:
    assert set(_models.Memory.model_fields) == READ
    selected = re.sub(r"\{[^}]*\}", " ", _operations.MEMORY).split()  # sub-selections aside
    assert selected == [camel_case(n) for n in names(READ_FIELDS)]
    assert set(_inputs.MemoryInput.__annotations__) | set(
        _inputs.MemoryFields.__annotations__) == WRITE
    assert set(_inputs.PatchFields.__annotations__) == PATCH


def test_projections_name_every_stored_field() -> None:
    projected = set(projections.MEMORY_PROPERTIES) | set(projections.TIME_PROPERTIES)
    assert projected | {"supersededBy"} == {f.property for f in READ_FIELDS if f.property}


def full_input() -> model.MemoryInput:
    return model.validated(
        model.MemoryInput, namespace="ns", id="m1", key="k", content="the kettle",
        memory_type="observation", value={"a": 1}, summary="s", tags=("t",),
        metadata={"m": True}, scope=model.Scope.TASK, agent_id="a", user_id="u",
        session_id="s1", task_id="t1", confidence=0.5, sensitivity=model.Sensitivity.HIGH,
        salience=0.25, source="src", source_type="doc", extraction_method="manual",
        provenance=["p"], expires_at=datetime(2030, 1, 1, tzinfo=UTC), embedding=(1.0, 0.0),
        embedding_model="test-model", now=datetime(2026, 1, 1, tzinfo=UTC))


def test_a_written_memory_reads_back_whole() -> None:
    """Every written field reaches its property and comes back from it."""
    written = full_input()
    now = datetime(2026, 1, 1, tzinfo=UTC)
    props = codec.memory_properties(written, id="m1", now=now, embedding=[1.0, 0.0],
                                    embedding_model="test-model")
    assert {f.property for f in WRITE_FIELDS if f.property is not None} <= set(props)
    read = codec.memory_from_properties(props)
    for name in WRITE & READ:
        expected: Any = getattr(written, name)
        assert getattr(read, name) == expected, name
    assert read.created_at == read.updated_at == now and read.embedding_dimension == 2


def test_every_patchable_field_but_the_special_ones_is_encoded() -> None:
    assert set(codec.PATCHABLE) == PATCH - {"metadata", "embedding", "embedding_model"}
    assert codec.patch_properties({"value": {"b": 2}, "tags": ("x",)}) == {
        "valueJson": '{"b":2}', "tags": ["x"]}


def test_a_node_without_a_required_property_is_refused() -> None:
    props = codec.memory_properties(full_input(), id="m1", now=datetime(2026, 1, 1, tzinfo=UTC),
                                    embedding=None, embedding_model=None)
    del props["status"]
    with pytest.raises(KeyError):
        codec.memory_from_properties(props)


@pytest.mark.parametrize("torn", ["content", "createdAt"])
def test_a_node_deleted_while_it_was_read_is_not_found_not_a_memory_without_content(
        torn: str) -> None:
    # Read committed: the properties a projection reads after a concurrent delete are
    # null, while `id`, read first, is still there.
    props = codec.memory_properties(full_input(), id="m1", now=datetime(2026, 1, 1, tzinfo=UTC),
                                    embedding=None, embedding_model=None)
    assert codec.exists(props)
    props[torn] = None
    assert not codec.exists(props)
    with pytest.raises(NotFound) as refused:
        codec.memory_from_properties(props)
    assert refused.value.code == "NOT_FOUND" and "m1" in refused.value.message


def test_properties_of_a_selection() -> None:
    """The properties GraphQL `Memory` fields are read from (core.memory_fields
    .properties_of): renamed ones by their property, the vector and a write's result
    by none, and None (project everything) for a field that reads the whole memory."""
    assert properties_of(["id", "metadata", "createdAt", "supersededBy", "value"]) == {
        "id", "metadataJson", "createdAt", "supersededBy", "valueJson"}
    assert properties_of(["__typename", "embedding", "written", "nearDuplicates"]) == set()
    assert properties_of(["id", "mayReplace"]) is None
    assert properties_of(["id", "noSuchField"]) is None
    every = [camel_case(f.name) for f in READ_FIELDS]
    assert properties_of(every) == {f.property for f in READ_FIELDS if f.property}
    assert REQUIRED_PROPERTIES == {"id", "namespace", "content", "status", "createdAt",
                                   "updatedAt", "version"}
