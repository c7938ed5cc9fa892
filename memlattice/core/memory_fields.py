"""A memory's fields, written once: what each is called in Python and GraphQL, which
Neo4j property holds it and how, and who may set it.

Everything else follows from this list. Inside the server it is derived: the
properties a projection names (graph.projections), the properties an update
may set (graph.codec.PATCHABLE), how a node is read back
(graph.codec.memory_from_properties), the fields a GraphQL write passes on
(resolvers.inputs). What must stay spelled out for its static types and API
descriptions (the `Memory` record, the Pydantic inputs, the strawberry types,
the client's model, schema.graphql) is checked against it by
tests/unit/test_memory_fields.py, so adding a field in one place and not the
others fails a test instead of silently dropping the field somewhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

# How a property holds the value: as is, as canonical JSON text, as a datetime, or
# as a list of strings (read back as a tuple).
Storage = Literal["plain", "json", "time", "list"]


@dataclass(frozen=True)
class MemoryField:
    name: str
    """snake_case, as in Python; GraphQL and the client spell it in camelCase."""
    property: str | None
    """The Memory node's property; None for an input that is not stored as such."""
    storage: Storage = "plain"
    read: bool = True
    """A stored memory has it (the `Memory` record and GraphQL type)."""
    write: bool = False
    """`writeMemory` may set it (`MemoryInput`)."""
    patch: bool = False
    """`updateMemory` may change it (`MemoryPatch`)."""
    required: bool = False
    """Every stored memory has it (reading a node without it is an error)."""


def _field(name: str, property: str | None = None, storage: Storage = "plain", *,
           read: bool = True, write: bool = False, patch: bool = False,
           required: bool = False) -> MemoryField:
    return MemoryField(name, property if property is not None else camel_case(name), storage,
                       read=read, write=write, patch=patch, required=required)


def camel_case(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


# In the order of the GraphQL `Memory` type; the input-only fields last.
MEMORY_FIELDS: tuple[MemoryField, ...] = (
    _field("id", write=True, required=True),
    _field("namespace", write=True, required=True),
    _field("key", write=True, patch=True),
    _field("content", write=True, patch=True, required=True),
    _field("memory_type", write=True),
    _field("value", "valueJson", "json", write=True, patch=True),
    _field("summary", write=True, patch=True),
    _field("tags", storage="list", write=True, patch=True),
    _field("metadata", "metadataJson", "json", write=True, patch=True),
    _field("scope", write=True),
    _field("agent_id", write=True),
    _field("user_id", write=True),
    _field("session_id", write=True),
    _field("task_id", write=True),
    _field("status", required=True),
    _field("confidence", write=True, patch=True),
    _field("sensitivity", write=True, patch=True),
    _field("salience", write=True, patch=True),
    _field("source", write=True, patch=True),
    _field("source_type", write=True, patch=True),
    _field("extraction_method", write=True, patch=True),
    _field("provenance", "provenanceJson", "json", write=True, patch=True),
    _field("created_at", storage="time", required=True),
    _field("updated_at", storage="time", required=True),
    _field("expires_at", storage="time", write=True, patch=True),
    _field("version", required=True),
    _field("access_count"),
    _field("last_accessed_at", storage="time"),
    _field("embedding_model", write=True, patch=True),
    _field("embedding_dimension"),
    # Projected only when the reader may see the successor (graph.visibility).
    _field("superseded_by"),
    _field("superseded_at", storage="time"),
    _field("forgotten_at", storage="time"),
    # When what it tells of happened, as its text said (memlattice.core.event_time).
    _field("event_start", storage="time"),
    _field("event_end", storage="time"),
    # How often a write of the same content reinforced it (graph.duplicates), and when last.
    _field("reinforcements"),
    _field("last_reinforced_at", storage="time"),
    # Only on a write's result, never stored: the memory a repeated write reinforced,
    # or a new memory's near-duplicates (graph.duplicates).
    MemoryField("duplicate_of", None),
    MemoryField("near_duplicates", None),
    # Only on a write's result: what the write did (created, reinforced, unchanged).
    MemoryField("written", None),
    # The vector: written and patched, read on request only (GraphQL `Memory.embedding`).
    _field("embedding", read=False, write=True, patch=True),
    # The creation time an import or replay records instead of the server clock.
    MemoryField("now", None, read=False, write=True),
    # Store a copy even when an active memory of the same scope holds the same content.
    MemoryField("allow_duplicate", None, read=False, write=True),
)

READ_FIELDS: tuple[MemoryField, ...] = tuple(f for f in MEMORY_FIELDS if f.read)
WRITE_FIELDS: tuple[MemoryField, ...] = tuple(f for f in MEMORY_FIELDS if f.write)
PATCH_FIELDS: tuple[MemoryField, ...] = tuple(f for f in MEMORY_FIELDS if f.patch)


def names(fields: tuple[MemoryField, ...]) -> tuple[str, ...]:
    return tuple(f.name for f in fields)


# Every stored memory's properties, which any projection of one carries (graph.codec
# reads them unconditionally; `id`, `content` and `createdAt` also tell a node deleted
# mid-read, graph.codec.exists).
REQUIRED_PROPERTIES: frozenset[str] = frozenset(
    f.property for f in READ_FIELDS if f.required and f.property)
# GraphQL `Memory` fields read from no property of their own: the vector comes by id
# and namespace (both required), the others are only ever set on a write's result.
_NOT_STORED = frozenset({"__typename", "embedding", "duplicateOf", "nearDuplicates",
                         "written"})
_PROPERTY_OF_API_NAME: dict[str, str] = {
    camel_case(f.name): f.property for f in READ_FIELDS if f.property}


def properties_of(api_fields: Iterable[str]) -> frozenset[str] | None:
    """The node properties that the named GraphQL `Memory` fields (API spelling) are
    read from, for a projection of those alone; None when one of them needs more than
    its own property (`mayReplace` reads the whole memory) or is unknown, so that the
    caller projects every property rather than guess."""
    out: set[str] = set()
    for name in api_fields:
        if name in _NOT_STORED:
            continue
        prop = _PROPERTY_OF_API_NAME.get(name)
        if prop is None:
            return None
        out.add(prop)
    return frozenset(out)
