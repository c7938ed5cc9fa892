"""Use cases that combine the graph with embeddings: what resolvers call.

Resolvers validate and authorise; the graph speaks Cypher; this layer holds
the few decisions between them: which id and time a write gets, where its
vector comes from (the client's, else the embedder's, cached), and how
search candidates are fused and cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from graph.memories import MemoryGraph, PreparedMemory, ScoredMemory, new_id
from graph.codec import Memory
from memlattice.access import AccessRecorder
from memlattice.embeddings import Embedder, check_dimension
from memlattice.errors import ValidationError
from memlattice.lucene import any_terms
from memlattice.model import (
    MAX_BATCH,
    MemoryFilter,
    MemoryInput,
    MemoryPatch,
    SearchMode,
    utcnow,
)
from memlattice.ranking import Candidate, fuse


@dataclass(frozen=True)
class SearchRequest:
    filter: MemoryFilter
    query: str | None = None
    vector: tuple[float, ...] | None = None
    mode: SearchMode = SearchMode.HYBRID
    limit: int = 10
    now: datetime | None = None


@dataclass(frozen=True)
class SearchHit:
    memory: Memory
    score: float
    similarity_score: float | None
    fts_score: float | None


class MemoryService:
    def __init__(
        self, graph: MemoryGraph, embedder: Embedder | None, *, dimension: int,
        candidates: int = 50, access: AccessRecorder | None = None,
    ) -> None:
        self.graph = graph
        self.access = access
        self.embedder = embedder
        self.dimension = dimension
        self.candidates = candidates

    # ------------------------------------------------------------ embeddings

    def _client_vector(self, vector: Sequence[float] | None, what: str) -> list[float] | None:
        if vector is None:
            return None
        check_dimension(list(vector), self.dimension, what=what)
        return [float(x) for x in vector]

    async def _embed(self, texts: list[str]) -> list[list[float]]:
        assert self.embedder is not None
        vectors = await self.embedder.embed(texts)
        for vector in vectors:
            check_dimension(vector, self.dimension, what="the embedding provider's vector")
        return vectors

    async def prepare(self, inputs: Sequence[MemoryInput]) -> list[PreparedMemory]:
        """Give each input its id, time and vector; texts without a vector are embedded
        together in one provider call."""
        now = utcnow()
        vectors: list[list[float] | None] = [
            self._client_vector(m.embedding, f"embedding of memory {i}")
            for i, m in enumerate(inputs)
        ]
        models: list[str | None] = [m.embedding_model or "client" if m.embedding else None
                                    for m in inputs]
        missing = [i for i, v in enumerate(vectors) if v is None]
        if missing and self.embedder is not None:
            embedded = await self._embed([inputs[i].content for i in missing])
            for i, vector in zip(missing, embedded):
                vectors[i] = vector
                models[i] = self.embedder.model
        return [
            PreparedMemory(input=m, id=m.id or new_id(), now=m.now or now,
                           embedding=vectors[i], embedding_model=models[i])
            for i, m in enumerate(inputs)
        ]

    # ------------------------------------------------------------ use cases

    async def write(self, inputs: Sequence[MemoryInput], *, actor: str) -> list[Memory]:
        if not inputs:
            raise ValidationError("writeMemories needs at least one memory")
        if len(inputs) > MAX_BATCH:
            raise ValidationError(f"at most {MAX_BATCH} memories per batch")
        namespaces = {m.namespace for m in inputs}
        if len(namespaces) != 1:
            raise ValidationError("every memory of one batch must share a namespace")
        prepared = await self.prepare(inputs)
        return await self.graph.create(prepared, namespace=inputs[0].namespace, actor=actor)

    async def update(
        self, *, namespace: str, id: str, patch: MemoryPatch, expected_version: int | None,
        actor: str,
    ) -> Memory:
        changes = patch.changes()
        embedding = self._client_vector(patch.embedding, "embedding")
        model = (patch.embedding_model or "client") if embedding else None
        if embedding is None and "content" in changes and self.embedder is not None:
            embedding = (await self._embed([patch.content or ""]))[0]
            model = self.embedder.model
        return await self.graph.update(
            namespace=namespace, id=id, patch=patch, expected_version=expected_version,
            embedding=embedding, embedding_model=model, actor=actor, now=utcnow(),
        )

    async def supersede(
        self, *, id: str, successor: MemoryInput, expected_version: int | None, actor: str
    ) -> tuple[Memory, Memory]:
        (prepared,) = await self.prepare([successor])
        return await self.graph.supersede(
            namespace=successor.namespace, id=id, successor=prepared,
            expected_version=expected_version, actor=actor,
        )

    async def search(self, request: SearchRequest) -> list[SearchHit]:
        mode = request.mode
        now = request.now or utcnow()
        vector = self._client_vector(request.vector, "query vector")
        if mode is not SearchMode.LEXICAL and vector is None and request.query:
            if self.embedder is not None:
                vector = (await self._embed([request.query]))[0]
        if mode is SearchMode.SEMANTIC and vector is None:
            raise ValidationError(
                "semantic search needs `vector`, or `query` with an embedding provider configured"
            )
        lucene = any_terms(request.query) if request.query and mode is not SearchMode.SEMANTIC else None
        if mode is SearchMode.LEXICAL and lucene is None:
            raise ValidationError("lexical search needs a `query` with at least one word")
        if vector is None and lucene is None:
            raise ValidationError("search needs a `query` or a `vector`")
        candidates = max(self.candidates, request.limit * 3)
        found = await self.graph.search_candidates(
            request.filter, now=now, vector=vector if mode is not SearchMode.LEXICAL else None,
            lucene=lucene, candidates=candidates,
        )
        by_id: dict[str, Memory] = {}

        def as_candidates(items: list[ScoredMemory]) -> list[Candidate]:
            for item in items:
                by_id[item.memory.id] = item.memory
            return [Candidate(item.memory.id, item.score) for item in items]

        fused = fuse(as_candidates(found.semantic), as_candidates(found.lexical), mode)
        hits = [
            SearchHit(memory=by_id[f.id], score=f.score, similarity_score=f.similarity,
                      fts_score=f.fts)
            for f in fused[: request.limit]
        ]
        if self.access is not None:
            self.access.record(request.filter.namespace, (h.memory.id for h in hits))
        return hits
