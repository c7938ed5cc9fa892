"""How a memory leaves Cypher (a property map, times as epoch microseconds) and how
a time enters it (`instant`); the properties named come from core.memory_fields.
"""

from __future__ import annotations

from memlattice.core.memory_fields import READ_FIELDS, REQUIRED_PROPERTIES
from memlattice.graph.visibility import shown_successor

# Times leave Neo4j as integer microseconds since the epoch: hydrating driver
# DateTime objects cost more than the whole index query for a page of results.
TIME_PROPERTIES: tuple[str, ...] = tuple(
    f.property for f in READ_FIELDS if f.storage == "time" and f.property)

# What `graph.codec.memory_from_properties` reads, times apart: a search reads
# dozens of candidates, and naming these keeps the vector, the `meta.*` filter
# copies and record payloads out of every candidate row. `supersededBy` is
# projected by `shown_successor` instead.
MEMORY_PROPERTIES: tuple[str, ...] = tuple(
    f.property for f in READ_FIELDS
    if f.storage != "time" and f.property and f.name != "superseded_by")


def project_memory(var: str = "m", *, embedding: bool = False,
                   embedding_expr: str | None = None,
                   only: frozenset[str] | None = None) -> str:
    """Like `project`, but only the properties a `Memory` is made of; with `only`, just
    those and the ones every memory has (REQUIRED_PROPERTIES), in the same order.

    A search projects hundreds of candidates and returns a few: naming only what
    ranking and the caller's selection read took a quarter off the recall
    statement's time in Neo4j (docs/benchmarks.md, round eighteen)."""
    def wanted(p: str) -> bool:
        return only is None or p in only or p in REQUIRED_PROPERTIES

    times = ", ".join(f"{p}: {var}.{p}.epochSeconds * 1000000 + {var}.{p}.microsecond"
                      for p in TIME_PROPERTIES if wanted(p))
    fields = ", ".join(f".{p}" for p in MEMORY_PROPERTIES if wanted(p))
    if embedding_expr is not None:
        vector = f", embedding: {embedding_expr}"
    else:
        vector = ", .embedding" if embedding else ""
    successor = (f", supersededBy: {shown_successor(var)}" if wanted("supersededBy")
                 else "")
    return f"{var} {{{fields}{vector}, {times}{successor}}}"


def project(var: str = "m", *, embedding: bool = False, embedding_expr: str | None = None) -> str:
    """A memory's properties as a map, times as epoch microseconds, vector only on request
    (`embedding_expr` puts another expression, such as a side-space vector, in its place),
    `supersededBy` only when the tenant may see the successor (`shown_successor`)."""
    times = ", ".join(f"{p}: {var}.{p}.epochSeconds * 1000000 + {var}.{p}.microsecond"
                      for p in TIME_PROPERTIES)
    if embedding_expr is not None:
        vector = f", embedding: {embedding_expr}"
    else:
        vector = "" if embedding else ", embedding: null"
    return f"{var} {{.*{vector}, {times}, supersededBy: {shown_successor(var)}}}"


def project_state(var: str = "m", state: str = "m_then", *, embedding: str | None = None) -> str:
    """`state` (a revision of `var`, or `var`) as `project` maps a memory; the vector
    is never a revision's (`embedding`: an expression for the current one)."""
    times = ", ".join(f"{p}: {state}.{p}.epochSeconds * 1000000 + {state}.{p}.microsecond"
                      for p in TIME_PROPERTIES)
    return (f"{state} {{.*, id: {var}.id, embedding: {embedding or 'null'}, {times},"
            f" memoryId: null, recordedFrom: null, recordedUntil: null,"
            f" supersededBy: {shown_successor(state)}}}")


def instant(parts: str) -> str:
    """The UTC datetime a `codec.epoch_parts` pair (a Cypher expression) stands for;
    null stays null."""
    return (f"CASE WHEN {parts} IS NULL THEN null"
            f" ELSE datetime({{epochSeconds: {parts}[0], nanosecond: {parts}[1]}}) END")
