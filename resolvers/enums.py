"""The API's enums: the domain's closed vocabularies (memlattice.core), registered as
GraphQL enums with a description for every value (resolvers.glossary.described_enum)."""

from __future__ import annotations

from memlattice.core import model
from memlattice.core.vector_spaces import BuildStatus
from memlattice.resolvers.glossary import described_enum

# described_enum (strawberry.enum) marks a class as a GraphQL enum in place and returns
# the same class; the names are plain aliases, which mypy accepts in annotations (a
# call's result it does not).
Scope = model.Scope
Status = model.Status
Sensitivity = model.Sensitivity
EdgeType = model.EdgeType
Direction = model.Direction
SearchMode = model.SearchMode
ScoringMode = model.ScoringMode
WriteEffect = model.WriteEffect

described_enum(Scope, description=(
    "Visibility level, narrowest first: a search at one level also sees the broader ones"
    " of the caller's ids (SESSION sees session, user and agent memories)."), values={
    Scope.TASK: "One task of a session (needs taskId, sessionId and userId to be found).",
    Scope.SESSION: "One session of a user (needs sessionId; found within its userId).",
    Scope.USER: "One end user, across their sessions (needs userId).",
    Scope.AGENT: "One agent, across the users it serves (needs agentId).",
})
described_enum(Status, description="Where a memory is in its life; only ACTIVE ones are"
               " listed and searched unless a filter asks for others.", values={
    Status.ACTIVE: "Current: listed and found by search.",
    Status.SUPERSEDED: "Replaced by a newer version (supersedeMemory); kept for history,"
    " `supersededBy` names the successor.",
    Status.FORGOTTEN: "Tombstoned by forget; kept for audit, never found by search.",
    Status.RETRACTED: "A record or fact withdrawn as wrong (retractRecord, invalidateFacts);"
    " kept for audit.",
})
described_enum(Sensitivity, description=(
    "How sensitive a record is, least first; a caller sees records up to its API key's"
    " clearance. Memories written before sensitivity existed count as LOW."), values={
    Sensitivity.PUBLIC: "May be shown to anyone.",
    Sensitivity.LOW: "Ordinary; the default.",
    Sensitivity.MEDIUM: "Personal or internal.",
    Sensitivity.HIGH: "Confidential: only keys cleared for HIGH or HYPER see it.",
    Sensitivity.HYPER: "The most secret: only keys cleared for HYPER see it.",
})
described_enum(EdgeType, description="Relationship types between memories.", values={
    EdgeType.RELATED: "Loosely connected; no claim either way.",
    EdgeType.DERIVED: "One was derived from the other (a fork, a merge, consolidation, a"
    " conversation's facts from its turns).",
    EdgeType.CONTRADICTS: "Both cannot hold at once; search shows such memories as"
    " `conflicts`.",
    EdgeType.SUPPORTS: "The source is evidence for the target.",
    EdgeType.SUPERSEDES: "The source replaces the target (the newer version points at the"
    " older).",
})
described_enum(Direction, description="Which way to follow relationships from a memory.",
               values={
    Direction.OUT: "Relationships the memory is the source of.",
    Direction.IN: "Relationships the memory is the target of.",
    Direction.BOTH: "Either way.",
})
described_enum(SearchMode, description="Which indexes give candidates.", values={
    SearchMode.LEXICAL: "The fulltext (BM25) index only: the query's words.",
    SearchMode.SEMANTIC: "The vector index only: the query's embedding.",
    SearchMode.HYBRID: "Both indexes, candidates merged (the default).",
})
described_enum(ScoringMode, description="How candidates are scored.", values={
    ScoringMode.SIMILARITY: "Cosine similarity to the query vector alone.",
    ScoringMode.HYBRID: "A weighted mean of similarity, BM25, recency and popularity"
    " (`weights`), each normalised to [0, 1] first.",
    ScoringMode.RRF: "Reciprocal rank fusion of the vector and fulltext rankings (`rrfK`).",
    ScoringMode.FUSION: "Every signal standardised over the pool and summed (the default).",
})
described_enum(WriteEffect, description="What a writeMemory/writeMemories input did.", values={
    WriteEffect.CREATED: "Stored a new memory (under the input's id when it named one).",
    WriteEffect.REINFORCED: "An input without an id repeated an active memory, which is"
    " returned reinforced, with duplicateOf.",
    WriteEffect.UNCHANGED: "An input with an id repeated the write that stored that id with"
    " the same content: nothing was written; the memory is returned as it is.",
})

EmbeddingBuild = BuildStatus  # a plain alias for mypy, as the enums above
described_enum(EmbeddingBuild, name="EmbeddingBuild",
               description="State of a namespace's vector space.", values={
    EmbeddingBuild.READY: "Search uses the active space; no re-embed is under way.",
    EmbeddingBuild.BUILDING: "Memories are being re-embedded into the target model in the"
    " background; search keeps using the active space until it is done.",
    EmbeddingBuild.FAILED: "The re-embed stopped; `error` says why. Search still uses the"
    " active space.",
})
