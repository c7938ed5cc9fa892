"""Where a written memory's vector comes from: the client's, else the server's embedder.

The server embeds what memlattice.core.embedding_text says stands for a memory
(a conversation turn's words, its speaker apart) through
memlattice.embeddings.memory_vectors, as every other place that embeds a memory
does (side spaces, the background re-embed, imports), so a namespace's vectors
are of one recipe. A client's vector is stored as sent.
"""

from __future__ import annotations

from collections.abc import Sequence

from memlattice.core.auth import Tenant
from memlattice.core.embedding_text import EmbeddingText, embedding_text, may_name_speaker
from memlattice.core.errors import NotFound
from memlattice.core.event_time import event_ranges
from memlattice.core.model import MemoryInput, MemoryPatch, utcnow
from memlattice.embeddings import Embedder, check_dimension
from memlattice.embeddings.memory_vectors import embed_memories
from memlattice.graph.codec import Memory
from memlattice.graph.memories import MemoryGraph, PreparedMemory, new_id


def client_vector(vector: Sequence[float] | None, dimension: int,
                  what: str) -> list[float] | None:
    """A client's vector as the list the driver sends; the input model has
    already made its values finite floats."""
    if vector is None:
        return None
    check_dimension(vector, dimension, what=what)
    return list(vector)


async def embed_checked(embedder: Embedder, dimension: int, texts: Sequence[EmbeddingText],
                        what: str = "the embedding provider's vector") -> list[list[float]]:
    """The memories' vectors from the server's embedder, each of the index's size."""
    vectors = await embed_memories(embedder, texts)
    for vector in vectors:
        check_dimension(vector, dimension, what=what)
    return vectors


async def prepare(inputs: Sequence[MemoryInput], embedder: Embedder | None,
                  dimension: int) -> list[PreparedMemory]:
    """Give each input its id, time, vector and event time; memories without a vector
    are embedded together in one provider call."""
    now = utcnow()
    vectors: list[list[float] | None] = [
        client_vector(m.embedding, dimension, f"embedding of memory {i}")
        for i, m in enumerate(inputs)
    ]
    models: list[str | None] = [m.embedding_model or "client" if m.embedding else None
                                for m in inputs]
    missing = [i for i, v in enumerate(vectors) if v is None]
    if missing and embedder is not None:
        embedded = await embed_checked(embedder, dimension, [
            embedding_text(inputs[i].content, inputs[i].metadata) for i in missing])
        for i, vector in zip(missing, embedded, strict=True):
            vectors[i] = vector
            models[i] = embedder.model
    times = [m.now or now for m in inputs]
    events = await event_ranges([m.content for m in inputs], times)
    return [
        PreparedMemory(input=m, id=m.id or new_id(), now=times[i], embedding=vectors[i],
                       embedding_model=models[i],
                       event_start=event.start if event else None,
                       event_end=event.end if event else None)
        for (i, m), event in zip(enumerate(inputs), events, strict=True)
    ]


async def patched_vector(graph: MemoryGraph, embedder: Embedder | None, dimension: int, *,
                         tenant: Tenant, id: str, patch: MemoryPatch
                         ) -> tuple[list[float] | None, str | None]:
    """(vector, model) an update stores: the client's, else the server's when what
    stands for the memory changes (its content; or its speaker, in its metadata), else
    (None, None), which keeps the stored one (a client's vector, too, when only the
    metadata changed). The memory is read first only when the patch alone cannot
    say what to embed."""
    changes = patch.changes()
    embedding = client_vector(patch.embedding, dimension, "embedding")
    if embedding is not None:
        return embedding, patch.embedding_model or "client"
    if embedder is None or not ({"content", "metadata"} & changes.keys()):
        return None, None
    content, metadata = patch.content or "", patch.metadata or {}
    current = None
    if "content" not in changes or ("metadata" not in changes and may_name_speaker(content)):
        current = await _current(graph, tenant, id)
    if current is not None:
        content = content if "content" in changes else current.content
        metadata = metadata if "metadata" in changes else current.metadata
        if "content" not in changes and (
                current.embedding_model != embedder.model  # a client's vector stays
                or embedding_text(content, metadata)
                == embedding_text(current.content, current.metadata)):
            return None, None  # the metadata changed, but not who said the turn
    elif "content" not in changes:
        return None, None  # not found: the update itself says so
    vector = (await embed_checked(embedder, dimension, [embedding_text(content, metadata)]))[0]
    return vector, embedder.model


async def _current(graph: MemoryGraph, tenant: Tenant, id: str) -> Memory | None:
    try:
        return await graph.get(tenant=tenant, id=id, now=utcnow())
    except NotFound:
        return None
