"""GraphQL inputs of recall: SearchInput with its weights and graph expansion, and the
search defaults a namespace keeps (NamespaceConfigInput).

Like resolvers.inputs, every conversion goes through `memlattice.core.model.validated`
or the search configuration's own Pydantic models, so a bad input is VALIDATION
before anything runs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry

from memlattice.core import model
from memlattice.core.errors import ValidationError
from memlattice.core.search_config import PRESETS, NamespaceSettings
from memlattice.resolvers.inputs import MemoryFilterInput
from memlattice.resolvers.planned_inputs import planned
from memlattice.resolvers.scalars import Vector
from memlattice.resolvers.spellings import VOCABULARY_NOTE, either
from memlattice.resolvers.types import Direction, EdgeType, Scope, ScoringMode, SearchMode

# The ids of who is asking, on a SearchInput (its deprecated `context` held the same).
_CALLER_FIELDS = ("agent_id", "user_id", "session_id", "task_id")

@planned
@strawberry.input(description="Deprecated with SearchInput.context: give these ids on"
                  " SearchInput itself.")
class SearchContextInput:
    agent_id: str | None = strawberry.field(
        default=None, description=(
            "Who is asking (deprecated here: give it on SearchInput): the agent."))
    user_id: str | None = strawberry.field(
        default=None, description=(
            "Who is asking (deprecated here: give it on SearchInput): the end user."))
    session_id: str | None = strawberry.field(
        default=None, description=(
            "Who is asking (deprecated here: give it on SearchInput): the session."))
    task_id: str | None = strawberry.field(
        default=None, description=(
            "Who is asking (deprecated here: give it on SearchInput): the task."))


@planned
@strawberry.input(description="Hybrid weights; each part is normalised to [0, 1] first.")
class WeightsInput:
    similarity: float = strawberry.field(
        default=0.6, description="Weight of the vector similarity; 0.6 by default.")
    fulltext: float = strawberry.field(
        default=0.3, description="Weight of the BM25 score; 0.3 by default.")
    recency: float = strawberry.field(
        default=0.05, description="Weight of recency (needs decayHalfLifeDays); 0.05 by default.")
    popularity: float = strawberry.field(
        default=0.05, description="Weight of popularity (access counts); 0.05 by default.")


@planned
@strawberry.input(description="Follow relationships from the candidates.")
class ExpansionInput:
    max_expand: int = strawberry.field(
        default=10, description="How many memories reached only through the graph may enter."
    )
    depth: int = strawberry.field(default=1, description="Hops, 1 to 3.")
    types: list[EdgeType] | None = strawberry.field(
        default=None, description=(
            "Relationship types to follow; RELATED, SUPPORTS and DERIVED by default."))
    direction: Direction = strawberry.field(
        default=Direction.BOTH, description="Which way to follow them; BOTH by default.")
    hop_discount: float = strawberry.field(default=0.5, description="Per extra hop.")
    share: float = strawberry.field(
        default=0.5, description="Share of the best neighbour's score a memory gains."
    )
    per_seed: int = strawberry.field(
        default=8, description="At most this many neighbours per candidate (1-100).")


@planned
@strawberry.input(description="Recall: candidates, scoring, graph expansion, cut-offs.")
class SearchInput:
    filter: MemoryFilterInput = strawberry.field(
        description=(
            "Which memories may be found: the namespace and any narrowing, as `memories` "
            "takes."))
    query: str | None = strawberry.field(
        default=None, description=(
            "The question in words: matched by the fulltext index and, when the server "
            "embeds, embedded for the vector index. Give it, `embedding`, or both."))
    embedding: Vector | None = strawberry.field(
        default=None, description="A query embedding of the configured dimension (the name"
        " every write gives a vector)."
    )
    vector: Vector | None = strawberry.field(
        default=None, description="Deprecated: the query embedding; send it as `embedding`.",
        deprecation_reason="Use `embedding`, the name writes use.")
    # Who is asking: the same four ids, at the same level, as a write names whom a
    # memory belongs to. (The filter's ids are equality conditions on the memories.)
    agent_id: str | None = strawberry.field(
        default=None, description="Who is asking: the agent of the caller's scope chain.")
    user_id: str | None = strawberry.field(
        default=None, description="Who is asking: the end user of the caller's scope chain.")
    session_id: str | None = strawberry.field(
        default=None, description="Who is asking: the session (within its user).")
    task_id: str | None = strawberry.field(
        default=None, description="Who is asking: the task (within its user's session).")
    context: SearchContextInput | None = strawberry.field(
        default=None, description="Deprecated: who is asking; give these ids on SearchInput.",
        deprecation_reason="Give agentId, userId, sessionId and taskId on"
        " SearchInput itself, as writes do.")
    scope: Scope | None = strawberry.field(
        default=None, description="Search at this level and every broader one of the"
        " caller's ids."
    )
    scopes: list[Scope] | None = strawberry.field(
        default=None, description="Exactly these levels of the caller's ids (a union)."
    )
    preset: str | None = strawberry.field(
        default=None, description="Start from a named preset: " + ", ".join(PRESETS) + "."
    )
    mode: SearchMode | None = strawberry.field(
        default=None, description=(
            "Which indexes give candidates; HYBRID by default (or the namespace's backend)."))
    scoring: ScoringMode | None = strawberry.field(
        default=None, description=(
            "How candidates are scored; FUSION by default (or the namespace's)."))
    weights: WeightsInput | None = strawberry.field(
        default=None, description="HYBRID scoring's weights.")
    decay_half_life_days: float | None = strawberry.field(
        default=None, description=(
            "Recency: a memory this many days old scores half (1e-8 to 1,000,000); null: no "
            "decay."))
    key_boost: float | None = strawberry.field(
        default=None, description=(
            "Score factor for a memory whose key the query names, 0-10; 0.1 by default."))
    tag_boost: float | None = strawberry.field(
        default=None, description="Score factor per tag the query names, 0-10; 0.05 by default.")
    use_confidence: bool | None = strawberry.field(
        default=None, description="Multiply scores by each memory's confidence; true by default.")
    use_salience: bool | None = strawberry.field(
        default=None, description="Multiply scores by each memory's salience; true by default.")
    mmr_lambda: float | None = strawberry.field(
        default=None, description=(
            "Diversify with maximal marginal relevance: 1 is pure relevance, 0 pure "
            "diversity; null: off."))
    expansion: ExpansionInput | None = strawberry.field(
        default=None, description=(
            "Follow relationships from the candidates to bring in neighbours (graph "
            "expansion); null: off."))
    context_hops: int | None = strawberry.field(default=None, description=(
        "A memory's neighbours along NEXT (the turns around a conversation turn) up to this"
        " many steps either way count as weaker lexical fields of it (default 3; 0: off)."))
    context_decay: float | None = strawberry.field(default=None, description=(
        "The weight of those neighbours' words per step away (default 0.75)."))
    question_discount: float | None = strawberry.field(default=None, description=(
        "How much a memory that only asks loses: its score is multiplied by 1 minus this"
        " times the share of its words in questions (a question records what someone"
        " wanted to know, not what is so); 0-1, default 0.25; 0: off."))
    answer_discount: float | None = strawberry.field(default=None, description=(
        "How much a memory loses when the question asks for a kind of answer (who: a"
        " name; where: a place or an address; what time or which day: a time; how many"
        " or much: a number) and the memory holds none: its score is multiplied by 1"
        " minus this;"
        " 0-1, default 0.2; 0: off."))
    current_first_within: float | None = strawberry.field(default=None, description=(
        "For a question about the present (its verb's tense), among the first three hits a"
        " later statement of the same source (speaker, user or agent) goes before an"
        " earlier one when its score is at least this share of that one's: what a source"
        " says again later is what holds now. 0-1; default 0 (off): on scenarios written"
        " blind it helped agents' notes and hurt chats, 0.8 is the measured value."))
    current_answer_within: float | None = strawberry.field(default=None, description=(
        "The same, only for two statements of one source that answer a typed question (who,"
        " where, when, which city, how many, which version...) with different values of the"
        " kind it asks for and name every name it names, the later adding nothing"
        " ('also', 'still'): the later answer goes first when its score is at least this"
        " share of the earlier's. 0-1; default 0 (off): 0.7 helped agents' notes and the"
        " development scenarios, and hurt chats written blind."))
    reranker: str | None = strawberry.field(
        default=None, description=(
            "The name of a reranker configured on the server to reorder the hits; null: none."
            " An unknown name is VALIDATION."))
    min_score: float | None = strawberry.field(
        default=None, description=(
            "Leave out hits whose score is below this (its scale depends on the scoring "
            "mode)."))
    min_relevance: float | None = strawberry.field(default=None, description=(
        "Leave out hits whose relevance (evidence in [0, 1] that they answer the query,"
        " comparable across modes and queries) is below this; with no hit left the"
        " answer is empty: nothing relevant."))
    limit: int | None = strawberry.field(
        default=None, description="At most this many hits, 1-200; 10 by default.")
    candidates: int | None = strawberry.field(
        default=None, description=(
            "How many candidates each index gives, 1-2000; by default enough for the limit (5"
            " per hit, at least the server's default)."))
    now: datetime | None = strawberry.field(
        default=None, description="The clock for expiry and recency, for replays."
    )

    def options(self) -> dict[str, Any]:
        """The options the caller set, as `SearchConfig` fields; the service lays them
        over the namespace's defaults or `preset` (`MemoryService.configured_search`)."""
        overrides: dict[str, Any] = {
            name: getattr(self, name)
            for name in ("mode", "scoring", "decay_half_life_days", "key_boost", "tag_boost",
                         "use_confidence", "use_salience", "mmr_lambda", "reranker",
                         "min_score", "min_relevance", "limit", "candidates", "context_hops",
                         "context_decay", "question_discount", "answer_discount",
                         "current_first_within", "current_answer_within")
            if getattr(self, name) is not None
        }
        if self.weights is not None:
            overrides["weights"] = vars(self.weights)
        if self.expansion is not None:
            expansion = dict(vars(self.expansion))
            if expansion["types"] is None:
                del expansion["types"]
            overrides["expansion"] = expansion
        return overrides

    def query_vector(self) -> tuple[float, ...] | None:
        """The query embedding, sent as `embedding` or as the deprecated `vector`."""
        given = either("embedding", self.embedding, "vector", self.vector)
        return tuple(given) if given is not None else None

    def deprecation_notes(self) -> list[str]:
        """What `extensions.notes` tells a caller still using an old spelling, so that
        it learns before the spelling is removed."""
        notes = []
        if self.vector is not None:
            notes.append(f"`vector` is deprecated: send it as `embedding`. {VOCABULARY_NOTE}")
        if self.context is not None:
            notes.append("`context` is deprecated: give agentId, userId, sessionId and taskId"
                         f" on SearchInput itself. {VOCABULARY_NOTE}")
        return notes

    def caller(self) -> dict[str, str]:
        """Who is asking: the ids given on the input, or in the deprecated `context`."""
        top = {name: getattr(self, name) for name in _CALLER_FIELDS
               if getattr(self, name) is not None}
        if self.context is None:
            return top
        if top:
            raise ValidationError(
                "give the caller's ids on SearchInput or in its deprecated context, not both",
                fields=["context", *(model.camel(name) for name in top)])
        return {k: v for k, v in vars(self.context).items() if v is not None}

    def to_filter(self) -> model.MemoryFilter:
        flt = self.filter.to_domain()
        context = model.validated(model.ScopeRef, **self.caller())
        keys = model.visible_scope_keys(context, scope=self.scope, scopes=tuple(self.scopes or ()))
        if keys is None:
            return flt
        return flt.model_copy(update={"scope_keys": keys})


@planned
@strawberry.input(description="Search defaults of a namespace; the latest configuration wins.")
class NamespaceConfigInput:
    backend: SearchMode | None = strawberry.field(
        default=None, description="Default candidates: LEXICAL (bm25), SEMANTIC (vector), HYBRID."
    )
    scoring: ScoringMode | None = strawberry.field(
        default=None, description="Default scoring; null leaves the server's (FUSION).")
    weights: WeightsInput | None = strawberry.field(
        default=None, description="Default HYBRID weights.")
    decay_half_life_days: float | None = strawberry.field(
        default=None, description="Default recency half-life in days (1e-8 to 1,000,000).")
    rrf_k: int | None = strawberry.field(
        default=None, description="Default RRF constant k (1-1000); 60 by default.")
    embedding_model: str | None = strawberry.field(
        default=None, description="Embed and search this namespace with another model of the"
        " server's provider; its memories are re-embedded in the background while search"
        " keeps using the current vectors. Omitted: unchanged; the server's default model:"
        " back to the default vectors.")
    embedding_dimension: int | None = strawberry.field(
        default=None, description="The model's dimension; the server's by default.")
    auto_supersede: float | None = strawberry.field(
        default=None, description="Confirm update candidates found on write whose confidence"
        " is at least this (0.5 to 1): the older memory becomes SUPERSEDED at once. Unset:"
        " off, candidates wait for confirmUpdate.")

    def to_domain(self) -> NamespaceSettings:
        data = {k: v for k, v in vars(self).items() if v is not None}
        if "weights" in data:
            data["weights"] = vars(data["weights"])
        return model.validated(NamespaceSettings, **data)
