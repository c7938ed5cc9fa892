"""Write operations: convert, call the service or graph, wrap."""

from __future__ import annotations

from typing import Annotated

import strawberry

from memlattice.core.errors import ValidationError
from memlattice.core.model import MAX_BATCH
from memlattice.core.model import MemoryInput as DomainMemoryInput
from memlattice.core.records.inputs import FactInput
from memlattice.resolvers import glossary as g
from memlattice.resolvers.context import Info
from memlattice.resolvers.edge_inputs import EdgeInput, EdgeSpecInput
from memlattice.resolvers.glossary import arg
from memlattice.resolvers.inputs import ForgetPredicateInput, MemoryInput, MemoryPatchInput
from memlattice.resolvers.search_inputs import NamespaceConfigInput
from memlattice.resolvers.types import Edge, ForgetResult, Memory, NamespaceConfig, SupersedeResult


@strawberry.type
class Mutation:
    @strawberry.mutation(
        description="Write one memory. `memoryType: \"fact\"` stores a fact as storeFact does"
        " (the content is the claim, `metadata.factKind` the kind, 'general' by default; the"
        " same claim again reinforces it and returns the same id)."
    )
    async def write_memory(
        self, info: Info,
        input: Annotated[MemoryInput, arg("The memory to write.")],
    ) -> Memory:
        memory = input.to_domain()
        if memory.memory_type == "fact":
            return await _write_fact(info, memory)
        (written,) = await info.context.service.write(
            [memory], tenant=info.context.tenant(memory.namespace, write=True),
            actor=info.context.actor)
        return Memory.from_domain(written)

    @strawberry.mutation(description="Write a batch atomically, in one round trip.")
    async def write_memories(
        self, info: Info,
        inputs: Annotated[list[MemoryInput], arg(
            "The memories to write (at most 1000); all are written or none.")],
    ) -> list[Memory]:
        if not inputs:
            raise ValidationError("writeMemories needs at least one memory")
        memories = [i.to_domain() for i in inputs]
        written = await info.context.service.write(
            memories, tenant=info.context.tenant(memories[0].namespace, write=True),
            actor=info.context.actor)
        return [Memory.from_domain(m) for m in written]

    @strawberry.mutation(
        description="Change fields of an active memory; a stale expectedVersion fails with"
        " VERSION_CONFLICT and writes nothing."
    )
    async def update_memory(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        id: Annotated[strawberry.ID, arg(g.MEMORY_ID)],
        patch: Annotated[MemoryPatchInput, arg("The fields to change.")],
        expected_version: Annotated[int | None, arg(g.EXPECTED_VERSION)] = None,
    ) -> Memory:
        updated = await info.context.service.update(
            tenant=info.context.tenant(namespace, write=True), id=str(id),
            patch=patch.to_domain(),
            expected_version=expected_version, actor=info.context.actor,
        )
        return Memory.from_domain(updated)

    @strawberry.mutation(
        description="Replace a memory with a new one; the old one is kept for audit, marked"
        " superseded, leaves search, and a SUPERSEDES relationship joins them."
    )
    async def supersede_memory(
        self, info: Info,
        id: Annotated[strawberry.ID, arg(
            "The id of the memory to replace (in `memory.namespace`).")],
        memory: Annotated[MemoryInput, arg("The successor; its namespace is the old memory's.")],
        expected_version: Annotated[int | None, arg(g.EXPECTED_VERSION)] = None,
    ) -> SupersedeResult:
        successor = memory.to_domain()
        previous, current = await info.context.service.supersede(
            tenant=info.context.tenant(successor.namespace, write=True), id=str(id),
            successor=successor, expected_version=expected_version,
            actor=info.context.actor,
        )
        return SupersedeResult(previous=Memory.from_domain(previous),
                               current=Memory.from_domain(current))

    @strawberry.mutation(
        description="Set a namespace's search defaults (backend, scoring, weights, decay,"
        " embedding model); the latest configuration wins."
    )
    async def configure_namespace(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        input: Annotated[NamespaceConfigInput, arg(
            "The new defaults; they replace the previous configuration.")],
    ) -> NamespaceConfig:
        config = await info.context.service.configure_namespace(
            input.to_domain(), tenant=info.context.tenant(namespace, write=True),
            actor=info.context.actor,
        )
        return NamespaceConfig.from_domain(config)

    @strawberry.mutation(description="Relate two memories of one namespace.")
    async def add_edge(
        self, info: Info,
        *,
        namespace: Annotated[str | None, strawberry.argument(
            description="Required; nullable only while the deprecated `input.namespace` is"
            " still accepted.")] = None,
        input: Annotated[EdgeInput, arg("The relationship to make.")],
    ) -> Edge:
        (edge,) = await info.context.service.add_edges(
            tenant=info.context.tenant(input.namespace_of(namespace), write=True),
            edges=[(str(input.source_id), str(input.target_id), input.type, input.metadata or {})],
            actor=info.context.actor,
        )
        info.context.notes.extend(input.deprecation_notes())
        return Edge.from_domain(edge)

    @strawberry.mutation(description="Relate many pairs in one round trip, atomically.")
    async def add_edges(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        inputs: Annotated[list[EdgeSpecInput], arg(
            "The relationships to make (at most 1000); all or none.")],
    ) -> list[Edge]:
        if len(inputs) > MAX_BATCH:
            raise ValidationError(f"at most {MAX_BATCH} relationships per batch")
        made = await info.context.service.add_edges(
            tenant=info.context.tenant(namespace, write=True),
            edges=[(str(i.source_id), str(i.target_id), i.type, i.metadata or {})
                   for i in inputs],
            actor=info.context.actor,
        )
        return [Edge.from_domain(e) for e in made]

    @strawberry.mutation(description="Remove one relationship by id.")
    async def delete_edge(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        id: Annotated[strawberry.ID, arg("The relationship's id (Edge.id).")],
    ) -> bool:
        await info.context.service.delete_edge(
            tenant=info.context.tenant(namespace, write=True), edge_id=str(id),
            actor=info.context.actor)
        return True

    @strawberry.mutation(
        description="Soft-delete (tombstone) every memory matching the predicate."
    )
    async def forget(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        predicate: Annotated[ForgetPredicateInput, arg("Which memories to forget.")],
    ) -> ForgetResult:
        ids = await info.context.service.forget(
            tenant=info.context.tenant(namespace, write=True), predicate=predicate.to_domain(),
            actor=info.context.actor,
        )
        return ForgetResult(count=len(ids), ids=[strawberry.ID(i) for i in ids])

    @strawberry.mutation(description="Erase a memory and its relationships for good.")
    async def delete_memory(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        id: Annotated[strawberry.ID, arg(g.MEMORY_ID)],
    ) -> bool:
        await info.context.service.delete(tenant=info.context.tenant(namespace, write=True),
                                          id=str(id), actor=info.context.actor)
        return True


async def _write_fact(info: Info, memory: DomainMemoryInput) -> Memory:
    """writeMemory with `memoryType: "fact"`: the fact storeFact would store, as a memory.

    A note in `extensions.notes` says so, since a reinforced fact comes back with the id
    of the fact it reinforced rather than a new one.
    """
    fact = FactInput.from_memory(memory)
    written = await info.context.knowledge.store_fact(
        fact, actor=info.context.actor,
        tenant=info.context.tenant(memory.namespace, write=True))
    verb = "stored as a new fact" if written.created else "reinforced the existing fact"
    info.context.notes.append(
        f'memoryType "fact" {verb} (kind {fact.kind!r}), as storeFact does;'
        " storeFact also takes evidence and validUntil and returns hints")
    return Memory.from_domain(written.record.memory)
