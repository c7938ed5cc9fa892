"""The domain vocabulary: the memory inputs, and the enums and rules they use, free of I/O.

Inputs are Pydantic models so that every rule (namespace shape, confidence
range, scope ids) is declared once; `validated()` turns Pydantic's error into
the project's `ValidationError`, so callers see one error type with a stable
code whatever layer they come through (GraphQL, CLI, Python).

The vocabulary lives in smaller modules (core.vocabulary, core.scopes,
core.field_rules); it is re-exported here because most of the code base names
it through this one module.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field, field_validator, model_validator

from memlattice.core.field_rules import (
    MAX_BATCH,
    MAX_CONTENT_CHARS,
    MAX_TAGS,
    StrictInput,
    as_utc,
    camel,
    finite_vector,
    json_size_ok,
    name_or_none,
    tag_list,
    utcnow,
    validate_namespace,
    validated,
)
from memlattice.core.lucene import words
from memlattice.core.names import blank, check_name
from memlattice.core.scopes import (
    BUCKET_PATH,
    NAMESPACE_SCOPE_KEY,
    SCOPE_CHAIN,
    SCOPE_ID_FIELD,
    Scope,
    ScopeRef,
    bucket_key,
    visible_scope_keys,
)
from memlattice.core.vocabulary import (
    DEFAULT_SENSITIVITY,
    SENSITIVITY_ORDER,
    Direction,
    EdgeType,
    ScoringMode,
    SearchMode,
    Sensitivity,
    Status,
    WriteEffect,
)

__all__ = [
    "BUCKET_PATH",
    "DEFAULT_SENSITIVITY",
    "MAX_BATCH",
    "MAX_CONTENT_CHARS",
    "MAX_TAGS",
    "NAMESPACE_SCOPE_KEY",
    "SCOPE_CHAIN",
    "SCOPE_ID_FIELD",
    "SENSITIVITY_ORDER",
    "Direction",
    "EdgeType",
    "ForgetPredicate",
    "MemoryFilter",
    "MemoryInput",
    "MemoryPatch",
    "Scope",
    "ScopeRef",
    "ScoringMode",
    "SearchMode",
    "Sensitivity",
    "Status",
    "StrictInput",
    "WriteEffect",
    "as_utc",
    "bucket_key",
    "camel",
    "utcnow",
    "validate_namespace",
    "validated",
    "visible_scope_keys",
]


class MemoryInput(ScopeRef):
    """A memory as a caller writes it."""

    namespace: str
    id: str | None = Field(default=None, min_length=1, max_length=128)
    key: str | None = Field(default=None, max_length=1024)
    content: str = Field(max_length=MAX_CONTENT_CHARS)
    memory_type: str = Field(default="note", pattern=r"^[a-z][a-z0-9_]{0,63}$")
    value: Any = None
    summary: str | None = Field(default=None, max_length=10_000)
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    sensitivity: Sensitivity = DEFAULT_SENSITIVITY
    salience: float | None = Field(default=None, ge=0.0, le=1.0)
    source: str | None = Field(default=None, max_length=1024)
    source_type: str | None = Field(default=None, max_length=128)
    extraction_method: str | None = Field(default=None, max_length=128)
    provenance: Any = None
    expires_at: datetime | None = None
    embedding: tuple[float, ...] | None = None
    embedding_model: str | None = Field(default=None, max_length=256)
    now: datetime | None = None
    # Plain writes only: store a copy even when an active memory of the same namespace
    # and scope says the same (core.duplicates); not stored.
    allow_duplicate: bool = False

    _ns = field_validator("namespace")(classmethod(lambda cls, v: validate_namespace(v)))
    # Strings that name something (memlattice.core.names); free text stays free.
    _names = field_validator("id", "key", "source_type", "extraction_method",
                             "embedding_model")(classmethod(lambda cls, v: name_or_none(v)))

    @field_validator("content")
    @classmethod
    def _content_not_blank(cls, value: str) -> str:
        if blank(value):
            raise ValueError("content must not be blank (whitespace or invisible characters)")
        return value

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tag_list(value)

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key in value:
            if not key or len(key) > 128:
                raise ValueError("metadata keys must be 1 to 128 characters")
            check_name(key, f"metadata key {key!r}")
        return json_size_ok(value, "metadata")

    @field_validator("value", "provenance")
    @classmethod
    def _json(cls, value: Any) -> Any:
        return json_size_ok(value, "value")

    @field_validator("expires_at", "now")
    @classmethod
    def _tz(cls, value: datetime | None) -> datetime | None:
        return as_utc(value)

    @field_validator("embedding")
    @classmethod
    def _finite(cls, value: tuple[float, ...] | None) -> tuple[float, ...] | None:
        return finite_vector(value)


class MemoryPatch(StrictInput):
    """Fields an update may change; unset fields stay as they are."""

    key: str | None = Field(default=None, max_length=1024)
    content: str | None = Field(default=None, max_length=MAX_CONTENT_CHARS)
    value: Any = None
    summary: str | None = Field(default=None, max_length=10_000)
    tags: tuple[str, ...] | None = None
    metadata: dict[str, Any] | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    sensitivity: Sensitivity | None = None
    salience: float | None = Field(default=None, ge=0.0, le=1.0)
    source: str | None = Field(default=None, max_length=1024)
    source_type: str | None = Field(default=None, max_length=128)
    extraction_method: str | None = Field(default=None, max_length=128)
    provenance: Any = None
    expires_at: datetime | None = None
    embedding: tuple[float, ...] | None = None
    embedding_model: str | None = Field(default=None, max_length=256)

    _content = field_validator("content")(
        classmethod(lambda cls, v: MemoryInput._content_not_blank(v) if v is not None else v)
    )
    _tags = field_validator("tags")(
        classmethod(lambda cls, v: MemoryInput._tags(v) if v is not None else v)
    )
    _meta = field_validator("metadata")(
        classmethod(lambda cls, v: MemoryInput._metadata(v) if v is not None else v)
    )
    _expires = field_validator("expires_at")(classmethod(lambda cls, v: as_utc(v)))
    _emb = field_validator("embedding")(classmethod(lambda cls, v: MemoryInput._finite(v)))
    _names = field_validator("key", "source_type", "extraction_method",
                             "embedding_model")(classmethod(lambda cls, v: name_or_none(v)))
    _json_values = field_validator("value", "provenance")(
        classmethod(lambda cls, v: json_size_ok(v, "value")))

    @model_validator(mode="after")
    def _not_empty(self) -> MemoryPatch:
        # An empty patch would still bump the version and write an audit entry.
        if not self.model_fields_set:
            raise ValueError("the patch is empty; set at least one field to change")
        return self

    def changes(self) -> dict[str, Any]:
        """Only the fields the caller set (so `null` can clear a field on purpose)."""
        return {name: getattr(self, name) for name in self.model_fields_set}


class ForgetPredicate(StrictInput):
    """What `forget` tombstones: a substring, or a conjunction of the other fields."""

    contains: str | None = Field(default=None, min_length=1, max_length=1024)
    id: str | None = Field(default=None, min_length=1)
    key: str | None = Field(default=None, min_length=1)
    tag: str | None = Field(default=None, min_length=1)
    tags: tuple[str, ...] | None = None
    query: str | None = Field(default=None, min_length=1, max_length=1024)

    # A blank field would match everything (`contains: " "`) or nothing: refused.
    _names = field_validator("id", "key", "tag")(classmethod(lambda cls, v: name_or_none(v)))

    @field_validator("contains")
    @classmethod
    def _contains_not_blank(cls, value: str | None) -> str | None:
        if value is not None and blank(value):
            raise ValueError("must not be blank: it would match every memory")
        return value

    @field_validator("tags")
    @classmethod
    def _tags_not_blank(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for tag in value or ():
            check_name(tag, f"tag {tag!r}")
        return value

    @model_validator(mode="after")
    def _not_empty(self) -> ForgetPredicate:
        if not self.model_fields_set - {"tags"} and not self.tags:
            raise ValueError(
                "the predicate is empty; give contains, or any of id, key, tag, tags, query"
            )
        if self.contains is not None and len(self.model_fields_set) > 1:
            raise ValueError("contains is a predicate on its own; do not combine it")
        # The same words the fulltext query is made of (memlattice.core.lucene).
        if self.query is not None and not words(self.query):
            raise ValueError("query has no word to match")
        return self


class MemoryFilter(ScopeRef):
    """What `memories` and `search` may narrow by; namespace is mandatory."""

    namespace: str
    statuses: tuple[Status, ...] = (Status.ACTIVE,)
    key: str | None = None
    tags_any: tuple[str, ...] = ()
    tags_all: tuple[str, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)
    source_type: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    # Event time (memlattice.core.event_time): keeps the memories whose event range
    # overlaps [event_after, event_before); a memory without event time does not.
    event_after: datetime | None = None
    event_before: datetime | None = None
    memory_types: tuple[str, ...] = ()
    min_confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    # Time travel (system time): what was believed at this instant, i.e. memories
    # recorded by then and not yet superseded, retracted, forgotten or expired
    # then, whatever their status now (`statuses` does not apply).
    as_of: datetime | None = None
    # Set by search: the visibility buckets of the caller's scope chain.
    scope_keys: tuple[str, ...] | None = None

    _ns = field_validator("namespace")(classmethod(lambda cls, v: validate_namespace(v)))
    _times = field_validator("created_after", "created_before", "event_after",
                             "event_before", "as_of")(
        classmethod(lambda cls, v: as_utc(v))
    )

    @model_validator(mode="before")
    @classmethod
    def _as_of_sees_every_status(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("as_of") is not None:
            return {**data, "statuses": tuple(Status)}
        return data

    def indexed_scope_keys(self) -> tuple[str, ...] | None:
        """The scope buckets the vector index filters on (graph.recall_query): the
        search's chain; None admits every bucket. A filter's own `scope` is a level
        (with its ids as equality conditions), not a bucket: `{scope: SESSION,
        sessionId: s1}` lists session s1 of every user unless it names the user."""
        return self.scope_keys

    @model_validator(mode="after")
    def _statuses(self) -> MemoryFilter:
        if not self.statuses:
            raise ValueError("statuses must list at least one status")
        return self
