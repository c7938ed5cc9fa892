"""Every API operation, defined once: its GraphQL document and how its result is read.

A builder such as `write_memory(namespace, content, **fields)` returns a
`Call` (document, variables, parser) and performs no I/O; the sync and async
clients only send calls (see `_client.py`). `OPERATIONS` maps each GraphQL
field name to its builder, and a test compares it with the server's schema, so
an operation added to the API without a client method fails the suite.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar, Unpack

from memlattice_client._inputs import (
    ConversationFields,
    EdgeSpec,
    FilterFields,
    ForgetPredicate,
    MemoryFields,
    MemoryInput,
    Message,
    NamespaceConfigFields,
    PatchFields,
    SearchOptions,
    to_graphql,
)
from memlattice_client._models import (
    AuditEntry,
    Direction,
    Edge,
    EdgeType,
    EmbeddingStatus,
    ForgetResult,
    IngestedConversation,
    Memory,
    MemoryPage,
    MemoryVersion,
    NamespaceConfig,
    NamespaceWipeResult,
    SearchHit,
    SessionKeys,
    Summary,
    SupersedeResult,
)
from memlattice_client._selections import (
    EDGE,
    HIT,
    HIT_BRIEF,
    MEMORY,
    MEMORY_BRIEF,
    NAMESPACE_CONFIG,
    Detail,
    chosen,
)
from memlattice_client._spellings import current_search_options

T = TypeVar("T")


@dataclass(frozen=True)
class Call(Generic[T]):
    """One GraphQL request, ready to send, and the parser of its `data[field]`."""

    field: str
    document: str
    variables: dict[str, Any]
    parse: Callable[[Any], T]

    def result(self, data: Mapping[str, Any]) -> T:
        return self.parse(data[self.field])


OPERATIONS: dict[str, Callable[..., Call[Any]]] = {}

F = TypeVar("F", bound=Callable[..., Call[Any]])


def operation(field: str) -> Callable[[F], F]:
    """Register a builder as the client's implementation of GraphQL field `field`."""

    def register(builder: F) -> F:
        OPERATIONS[field] = builder
        return builder

    return register


def _memory(raw: Any) -> Memory:
    return Memory.model_validate(raw)


def _memories(raw: Any) -> list[Memory]:
    return [Memory.model_validate(m) for m in raw]


def _edges(raw: Any) -> list[Edge]:
    return [Edge.model_validate(e) for e in raw]


def _given(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _memory_input(namespace: str, content: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    return to_graphql({"namespace": namespace, "content": content, **fields})


# ---------------------------------------------------------------- writes


@operation("writeMemory")
def write_memory(namespace: str, content: str, **fields: Unpack[MemoryFields]) -> Call[Memory]:
    """Write one memory; the server embeds `content` unless `embedding` is given."""
    return Call("writeMemory",
                f"mutation($input: MemoryInput!) {{ writeMemory(input: $input) {{ {MEMORY} }} }}",
                {"input": _memory_input(namespace, content, fields)}, _memory)


@operation("writeMemories")
def write_memories(memories: Sequence[MemoryInput]) -> Call[list[Memory]]:
    """Write a batch atomically (all or none), in one round trip; one namespace per batch."""
    return Call("writeMemories",
                f"mutation($inputs: [MemoryInput!]!) {{ writeMemories(inputs: $inputs) "
                f"{{ {MEMORY} }} }}",
                {"inputs": [to_graphql(m) for m in memories]}, _memories)


@operation("ingestConversation")
def ingest_conversation(namespace: str, session_id: str, messages: Sequence[Message],
                        **fields: Unpack[ConversationFields]) -> Call[IngestedConversation]:
    """Store a session of messages: a memory per turn, the session, NEXT between turns
    and the speakers as entities. Sending it again writes nothing. The answer's
    `session` holds the whole session's entities, keyphrases and time spans."""
    return Call("ingestConversation",
                "mutation($input: ConversationInput!) { ingestConversation(input: $input)"
                f" {{ sessionId created memories {{ {MEMORY} }}"
                " session { id entities keyphrases startedAt endedAt eventStart eventEnd } } }",
                {"input": to_graphql({"namespace": namespace, "session_id": session_id,
                                      "messages": messages, **fields})},
                IngestedConversation.model_validate)


@operation("updateMemory")
def update_memory(namespace: str, id: str, *, expected_version: int | None = None,
                  **patch: Unpack[PatchFields]) -> Call[Memory]:
    """Change fields of an active memory; a stale `expected_version` raises
    VersionConflictError and writes nothing."""
    return Call("updateMemory",
                "mutation($ns: String!, $id: ID!, $patch: MemoryPatchInput!, $v: Int) {"
                f" updateMemory(namespace: $ns, id: $id, patch: $patch, expectedVersion: $v)"
                f" {{ {MEMORY} }} }}",
                {"ns": namespace, "id": id, "patch": to_graphql(patch), "v": expected_version},
                _memory)


@operation("supersedeMemory")
# Overlap of `id` with MemoryFields (PEP 692): `id=` always binds the memory replaced;
# the new memory's id cannot be chosen here.
def supersede_memory(namespace: str, id: str, content: str, *,  # type: ignore[misc]
                     expected_version: int | None = None,
                     **fields: Unpack[MemoryFields]) -> Call[SupersedeResult]:
    """Replace memory `id` with a new one; the old one is kept, marked SUPERSEDED."""
    return Call("supersedeMemory",
                "mutation($id: ID!, $m: MemoryInput!, $v: Int) {"
                " supersedeMemory(id: $id, memory: $m, expectedVersion: $v) {"
                f" previous {{ {MEMORY} }} current {{ {MEMORY} }} }} }}",
                {"id": id, "m": _memory_input(namespace, content, fields), "v": expected_version},
                SupersedeResult.model_validate)


@operation("configureNamespace")
def configure_namespace(namespace: str,
                        **settings: Unpack[NamespaceConfigFields]) -> Call[NamespaceConfig]:
    """Set a namespace's search defaults; searches that name no preset start from them."""
    return Call("configureNamespace",
                "mutation($ns: String!, $input: NamespaceConfigInput!) {"
                f" configureNamespace(namespace: $ns, input: $input) {{ {NAMESPACE_CONFIG} }} }}",
                {"ns": namespace, "input": to_graphql(settings)}, NamespaceConfig.model_validate)


@operation("addEdge")
def add_edge(namespace: str, source_id: str, target_id: str, type: EdgeType | str, *,
             metadata: Mapping[str, Any] | None = None) -> Call[Edge]:
    """Relate two memories of one namespace."""
    spec = to_graphql({"source_id": source_id, "target_id": target_id, "type": type,
                       "metadata": metadata})
    return Call("addEdge",
                "mutation($ns: String!, $input: EdgeInput!) {"
                f" addEdge(namespace: $ns, input: $input) {{ {EDGE} }} }}",
                {"ns": namespace, "input": spec}, Edge.model_validate)


@operation("addEdges")
def add_edges(namespace: str, edges: Sequence[EdgeSpec]) -> Call[list[Edge]]:
    """Relate many pairs atomically, in one round trip."""
    return Call("addEdges",
                "mutation($ns: String!, $inputs: [EdgeSpecInput!]!) {"
                f" addEdges(namespace: $ns, inputs: $inputs) {{ {EDGE} }} }}",
                {"ns": namespace, "inputs": [to_graphql(e) for e in edges]}, _edges)


@operation("deleteEdge")
def delete_edge(namespace: str, id: str) -> Call[bool]:
    """Remove one relationship by id."""
    return Call("deleteEdge",
                "mutation($ns: String!, $id: ID!) { deleteEdge(namespace: $ns, id: $id) }",
                {"ns": namespace, "id": id}, bool)


@operation("forget")
def forget(namespace: str, **predicate: Unpack[ForgetPredicate]) -> Call[ForgetResult]:
    """Tombstone every memory matching the predicate (they leave recall, stay for audit)."""
    return Call("forget",
                "mutation($ns: String!, $p: ForgetPredicateInput!) {"
                " forget(namespace: $ns, predicate: $p) { count ids } }",
                {"ns": namespace, "p": to_graphql(predicate)}, ForgetResult.model_validate)


@operation("deleteMemory")
def delete_memory(namespace: str, id: str) -> Call[bool]:
    """Erase a memory and its relationships for good; the audit trail keeps a `delete`."""
    return Call("deleteMemory",
                "mutation($ns: String!, $id: ID!) { deleteMemory(namespace: $ns, id: $id) }",
                {"ns": namespace, "id": id}, bool)


@operation("wipeNamespace")
def wipe_namespace(namespace: str, *, dry_run: bool = False) -> Call[NamespaceWipeResult]:
    """Erase everything the namespace holds (admin keys only); `dry_run` only counts."""
    return Call("wipeNamespace",
                "mutation($ns: String!, $dry: Boolean!) { wipeNamespace(namespace: $ns,"
                " dryRun: $dry) { namespace dryRun memories nodes relationships"
                " byLabel { label count } wipeId } }",
                {"ns": namespace, "dry": dry_run}, NamespaceWipeResult.model_validate)


# ---------------------------------------------------------------- reads


@operation("memory")
def memory(namespace: str, id: str, *, as_of: datetime | None = None) -> Call[Memory]:
    """One memory by id; NotFoundError when missing, expired or in another namespace.
    `as_of`: the memory as it was then, if it was believed then."""
    return Call("memory",
                "query($ns: String!, $id: ID!, $asOf: DateTime) {"
                f" memory(namespace: $ns, id: $id, asOf: $asOf) {{ {MEMORY} }} }}",
                {"ns": namespace, "id": id, **to_graphql({"as_of": as_of})}, _memory)


@operation("session")
def session(namespace: str, id: str) -> Call[SessionKeys | None]:
    """A conversation session's entities, keyphrases and time spans as the server derived
    them on write; None when there is no such session or it holds turns you may not see."""
    return Call("session",
                "query($ns: String!, $id: String!) { session(namespace: $ns, id: $id) {"
                " id entities keyphrases startedAt endedAt eventStart eventEnd } }",
                {"ns": namespace, "id": id},
                lambda raw: SessionKeys.model_validate(raw) if raw is not None else None)


@operation("memoryHistory")
def memory_history(namespace: str, id: str, *, limit: int = 20,
                   detail: Detail = "brief") -> Call[list[MemoryVersion]]:
    """The `limit` newest versions of a memory (the current one first), each with the
    system time it was current in and the memory's main fields as they were;
    `detail="full"` asks for every field (docs/client.md#what-a-call-costs)."""
    fields = chosen(detail, MEMORY_BRIEF, MEMORY)
    return Call("memoryHistory",
                "query($ns: String!, $id: ID!, $limit: Int!) {"
                " memoryHistory(namespace: $ns, id: $id, limit: $limit) {"
                f" version recordedFrom recordedUntil memory {{ {fields} }} }} }}",
                {"ns": namespace, "id": id, "limit": limit},
                lambda raw: [MemoryVersion.model_validate(v) for v in raw])


def _page(raw: Any) -> MemoryPage:
    return MemoryPage(items=tuple(Memory.model_validate(e["node"]) for e in raw["edges"]),
                      total_count=raw["totalCount"], has_next_page=raw["pageInfo"]["hasNextPage"],
                      end_cursor=raw["pageInfo"]["endCursor"])


@operation("memories")
def memories(namespace: str, *, first: int = 20, after: str | None = None,
             detail: Detail = "brief", **filter: Unpack[FilterFields]) -> Call[MemoryPage]:
    """One page of memories matching the filter, newest first, with their main fields
    (`detail="full"`: every field); pass `after=page.end_cursor` for the next (or use
    `iter_memories`)."""
    fields = chosen(detail, MEMORY_BRIEF, MEMORY)
    return Call("memories",
                "query($f: MemoryFilterInput!, $first: Int!, $after: String) {"
                " memories(filter: $f, first: $first, after: $after) {"
                f" totalCount pageInfo {{ hasNextPage endCursor }} edges {{ node {{ {fields} }} }}"
                " } }",
                {"f": to_graphql({"namespace": namespace, **filter}), "first": first,
                 "after": after}, _page)


@operation("edges")
def edges(namespace: str, id: str, *, types: Sequence[EdgeType | str] | None = None,
          direction: Direction | str = Direction.BOTH) -> Call[list[Edge]]:
    """Relationships of a memory, optionally of some types and one direction."""
    variables = to_graphql({"types": types, "direction": direction})
    return Call("edges",
                "query($ns: String!, $id: ID!, $types: [EdgeType!], $direction: Direction!) {"
                f" edges(namespace: $ns, id: $id, types: $types, direction: $direction)"
                f" {{ {EDGE} }} }}",
                {"ns": namespace, "id": id, **variables}, _edges)


@operation("namespaceConfig")
def namespace_config(namespace: str) -> Call[NamespaceConfig | None]:
    """A namespace's search defaults, or None if it was never configured."""
    return Call("namespaceConfig",
                f"query($ns: String!) {{ namespaceConfig(namespace: $ns) {{ {NAMESPACE_CONFIG} }} }}",
                {"ns": namespace},
                lambda raw: None if raw is None else NamespaceConfig.model_validate(raw))


@operation("namespaces")
def namespaces(*, prefix: str | None = None, limit: int = 200) -> Call[list[str]]:
    """The namespaces holding memories that this client's key may read, in name order;
    `prefix` keeps those starting with it."""
    return Call("namespaces",
                "query($prefix: String, $limit: Int!) { namespaces(prefix: $prefix, limit: $limit) }",
                {"prefix": prefix, "limit": limit}, lambda raw: [str(name) for name in raw])


@operation("embeddingStatus")
def embedding_status(namespace: str) -> Call[EmbeddingStatus]:
    """Which vector space a namespace searches, and how far a re-embed has come."""
    return Call("embeddingStatus",
                "query($ns: String!) { embeddingStatus(namespace: $ns) { namespace activeModel"
                " activeDimension targetModel targetDimension status embedded total error"
                " updatedAt } }",
                {"ns": namespace}, EmbeddingStatus.model_validate)


@operation("summarize")
def summarize(namespace: str, *, limit: int = 10, query: str | None = None,
              tags: Sequence[str] | None = None, detail: Detail = "brief") -> Call[Summary]:
    """A bounded extractive bullet list of a namespace's memories: the most relevant to
    `query` first, else the newest; every tag in `tags` must match. Its memories come
    with their main fields (`detail="full"`: every field)."""
    window = to_graphql(_given(limit=limit, query=query, tags=tags))
    fields = chosen(detail, MEMORY_BRIEF, MEMORY)
    return Call("summarize",
                "query($ns: String!, $w: SummaryWindowInput) { summarize(namespace: $ns,"
                f" window: $w) {{ text bullets {{ text memoryId }} memories {{ {fields} }} }} }}",
                {"ns": namespace, "w": window}, Summary.model_validate)


@operation("auditTrail")
def audit_trail(namespace: str, id: str) -> Call[list[AuditEntry]]:
    """Every recorded mutation of a memory, oldest first (kept after deletion)."""
    return Call("auditTrail",
                "query($ns: String!, $id: ID!) { auditTrail(namespace: $ns, id: $id) {"
                " id memoryId operation actor at version details } }",
                {"ns": namespace, "id": id},
                lambda raw: [AuditEntry.model_validate(a) for a in raw])


@operation("search")
def search(namespace: str, query: str | None = None, *, detail: Detail = "brief",
           **options: Unpack[SearchOptions]) -> Call[list[SearchHit]]:
    """Scoped recall. Each hit carries its score (and the similarity and fulltext
    parts), its memory's main fields, its conflicts and the newer memory that
    outdates it (their ids and contents); `detail="full"` asks for every field of
    each (every score part, the graph path), at about four times the cost a key's
    budget is charged. `agent_id` / `user_id` / `session_id` / `task_id` say who
    is asking (the scope chain to read, as `write_memory` takes them); `filter`
    narrows by equality. The deprecated `vector=` and `context=` still work, with
    a DeprecationWarning."""
    fields = current_search_options(options)
    flt = {"namespace": namespace, **fields.pop("filter", {})}
    hit = chosen(detail, HIT_BRIEF, HIT)
    return Call("search",
                f"query($input: SearchInput!) {{ search(input: $input) {{ {hit} }} }}",
                {"input": to_graphql({"filter": flt, "query": query, **fields})},
                lambda raw: [SearchHit.model_validate(h) for h in raw])
