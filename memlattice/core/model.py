"""The domain vocabulary: enums and validated inputs, free of I/O.

Inputs are Pydantic models so that every rule (namespace shape, confidence
range, scope ids) is declared once; `validated()` turns Pydantic's error into
the project's `ValidationError`, so callers see one error type with a stable
code whatever layer they come through (GraphQL, CLI, Python).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TypeVar

import pydantic
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from memlattice.core.errors import ValidationError
from memlattice.core.json_values import check_json, unwritable
from memlattice.core.lucene import words
from memlattice.core.names import blank, check_name
from memlattice.core.times import to_utc
from memlattice.core.vector_checks import vector_problem

MAX_CONTENT_CHARS = 100_000
MAX_TAGS = 64
MAX_BATCH = 1_000


class Scope(StrEnum):
    """Visibility levels, narrowest first: a search at one level sees the broader ones."""

    TASK = "task"
    SESSION = "session"
    USER = "user"
    AGENT = "agent"


SCOPE_ID_FIELD: dict[Scope, str] = {
    Scope.TASK: "task_id",
    Scope.SESSION: "session_id",
    Scope.USER: "user_id",
    Scope.AGENT: "agent_id",
}


SCOPE_CHAIN: tuple[Scope, ...] = (Scope.TASK, Scope.SESSION, Scope.USER, Scope.AGENT)
# Memories written without a scope belong to the whole namespace.
NAMESPACE_SCOPE_KEY = "namespace"

# The ids a bucket of each level is named by, outermost first. A session id is only
# unique within its user, a task id within its user's session: their buckets carry
# that path, so `t1` of (u1, s1) and `t1` of (u2, s2) are different buckets. Users
# and agents are the roots (a user may talk to several agents).
BUCKET_PATH: dict[Scope, tuple[str, ...]] = {
    Scope.TASK: ("user_id", "session_id", "task_id"),
    Scope.SESSION: ("user_id", "session_id"),
    Scope.USER: ("user_id",),
    Scope.AGENT: ("agent_id",),
}


def _path_part(value: str | None) -> str:
    """One id of a bucket path; `/` and `%` are escaped so the path splits one way only
    (an empty or missing id is the empty part: both mean "not named")."""
    return (value or "").replace("%", "%25").replace("/", "%2F")


def bucket_key(scope: Scope | None, ids: Mapping[str, str | None]) -> str:
    """The visibility bucket of a memory at `scope` with these scope ids (snake_case
    names), e.g. `user:u1`, `session:u1/s1`, `task:u1/s1/t1`; every memory of one
    bucket, and no other, shares the string. `graph.migrations` rebuilds stored keys
    in Cypher with the same escaping (`bucket_key_cypher`)."""
    if scope is None:
        return NAMESPACE_SCOPE_KEY
    path = BUCKET_PATH[scope]
    if len(path) == 1:
        return f"{scope.value}:{ids.get(path[0]) or ''}"
    return f"{scope.value}:" + "/".join(_path_part(ids.get(name)) for name in path)


class Sensitivity(StrEnum):
    """How sensitive a record is, least first; a caller sees up to its key's clearance.

    Ordered by rank (`Sensitivity.LOW < Sensitivity.HIGH`), not alphabetically.
    Records written before sensitivity existed count as LOW.
    """

    PUBLIC = "public"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    HYPER = "hyper"

    @property
    def rank(self) -> int:
        return SENSITIVITY_ORDER.index(self)

    def __lt__(self, other: object) -> bool:
        return self.rank < Sensitivity(other).rank  # type: ignore[arg-type]

    def __le__(self, other: object) -> bool:
        return self.rank <= Sensitivity(other).rank  # type: ignore[arg-type]

    def __gt__(self, other: object) -> bool:
        return self.rank > Sensitivity(other).rank  # type: ignore[arg-type]

    def __ge__(self, other: object) -> bool:
        return self.rank >= Sensitivity(other).rank  # type: ignore[arg-type]


SENSITIVITY_ORDER: tuple[Sensitivity, ...] = tuple(Sensitivity)
DEFAULT_SENSITIVITY = Sensitivity.LOW


class Status(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    FORGOTTEN = "forgotten"
    # A record or fact withdrawn as wrong (retract, invalidateFacts); kept for audit.
    RETRACTED = "retracted"


class EdgeType(StrEnum):
    """The relationship types between memories; the only ones Cypher will ever see."""

    RELATED = "RELATED"
    DERIVED = "DERIVED"
    CONTRADICTS = "CONTRADICTS"
    SUPPORTS = "SUPPORTS"
    SUPERSEDES = "SUPERSEDES"


class Direction(StrEnum):
    OUT = "out"
    IN = "in"
    BOTH = "both"


class SearchMode(StrEnum):
    LEXICAL = "lexical"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"


class ScoringMode(StrEnum):
    """How candidates are scored: raw similarity, weighted parts, rank fusion, or
    score fusion (memlattice.search.fusion)."""

    SIMILARITY = "similarity"
    HYBRID = "hybrid"
    RRF = "rrf"
    FUSION = "fusion"


def utcnow() -> datetime:
    return datetime.now(UTC)


def validate_namespace(value: str) -> str:
    """Namespaces are relative paths of non-empty segments: `team/alice/notes`.

    Absolute paths, `.`/`..` segments, empty segments and backslashes are
    rejected because namespaces end up in export paths and key prefixes; each
    segment is a name (memlattice.core.names: no surrounding whitespace, no control,
    format, separator or unassigned characters).
    """
    if not isinstance(value, str) or not value:
        raise ValueError("namespace must be a non-empty relative path such as 'team/notes'")
    return _checked_namespace(value)


@functools.lru_cache(maxsize=4096)
def _checked_namespace(value: str) -> str:
    # A batch names its namespace once per memory: check each distinct one once.
    if len(value) > 512:
        raise ValueError("namespace is longer than 512 characters")
    if value.startswith(("/", "\\")) or len(value) > 1 and value[1] == ":":
        raise ValueError(f"namespace {value!r} is absolute; use a relative path like 'team/notes'")
    for segment in value.split("/"):
        if segment == "":
            raise ValueError(f"namespace {value!r} has an empty segment")
        if segment in (".", ".."):
            raise ValueError(f"namespace {value!r} contains {segment!r}; use plain segments")
        if "\\" in segment:
            raise ValueError(f"namespace {value!r} contains a backslash")
        check_name(segment, f"namespace {value!r}: segment {segment!r}")
    return value


def as_utc(value: datetime | None) -> datetime | None:
    """Every time is stored and compared in UTC (naive times are taken as UTC).

    Neo4j orders two datetimes of different offsets by more than their instant,
    so inputs are normalised once here, not in each query.
    A time UTC cannot hold raises `times.OutOfRange`, a ValueError, so pydantic
    reports it as the field's validation error.
    """
    if value is None:
        return None
    return to_utc(value)


def _json_size_ok(value: Any, what: str, limit: int = 1_000_000) -> Any:
    check_json(value, what)
    try:
        encoded = json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} is not JSON-serialisable") from exc
    if len(encoded) > limit:
        raise ValueError(f"{what} is larger than {limit} bytes of JSON")
    return value


def _name(value: str | None, what: str = "") -> str | None:
    """None, or a valid name (memlattice.core.names); Pydantic names the field."""
    return None if value is None else check_name(value, what or "it")


def _tag_list(value: tuple[str, ...]) -> tuple[str, ...]:
    if len(value) > MAX_TAGS:
        raise ValueError(f"at most {MAX_TAGS} tags")
    for tag in value:
        if len(tag) > 256:
            raise ValueError("tags must be at most 256 characters")
        check_name(tag, f"tag {tag!r}")
    return tuple(dict.fromkeys(value))


def _finite_vector(value: tuple[float, ...] | None) -> tuple[float, ...] | None:
    if value is not None:
        if not value:
            raise ValueError("embedding must not be empty")
        problem = vector_problem(value)
        if problem is not None:
            raise ValueError(f"embedding {problem}")
    return value


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)


class ScopeRef(_Input):
    """Who a memory belongs to: its level and the ids along the chain."""

    scope: Scope | None = None
    agent_id: str | None = Field(default=None, max_length=256)
    user_id: str | None = Field(default=None, max_length=256)
    session_id: str | None = Field(default=None, max_length=256)
    task_id: str | None = Field(default=None, max_length=256)

    @field_validator("agent_id", "user_id", "session_id", "task_id")
    @classmethod
    def _ids_are_names(cls, value: str | None) -> str | None:
        return _name(value)

    @model_validator(mode="after")
    def _level_needs_its_id(self) -> ScopeRef:
        if self.scope is not None and not getattr(self, SCOPE_ID_FIELD[self.scope]):
            field = SCOPE_ID_FIELD[self.scope]
            camel = field.split("_")[0] + "Id"
            raise ValueError(f"scope {self.scope.value!r} needs {camel}")
        return self

    def scope_key(self) -> str:
        """One indexable string per visibility bucket, e.g. `session:u-7/s-42`
        (see `bucket_key`)."""
        return bucket_key(self.scope, self.scope_ids())

    def scope_ids(self) -> dict[str, str | None]:
        return {name: getattr(self, name) for name in SCOPE_ID_FIELD.values()}


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
                             "embedding_model")(classmethod(lambda cls, v: _name(v)))

    @field_validator("content")
    @classmethod
    def _content_not_blank(cls, value: str) -> str:
        if blank(value):
            raise ValueError("content must not be blank (whitespace or invisible characters)")
        return value

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return _tag_list(value)

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key in value:
            if not key or len(key) > 128:
                raise ValueError("metadata keys must be 1 to 128 characters")
            check_name(key, f"metadata key {key!r}")
        return _json_size_ok(value, "metadata")

    @field_validator("value", "provenance")
    @classmethod
    def _json(cls, value: Any) -> Any:
        return _json_size_ok(value, "value")

    @field_validator("expires_at", "now")
    @classmethod
    def _tz(cls, value: datetime | None) -> datetime | None:
        return as_utc(value)

    @field_validator("embedding")
    @classmethod
    def _finite(cls, value: tuple[float, ...] | None) -> tuple[float, ...] | None:
        return _finite_vector(value)


class MemoryPatch(_Input):
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
                             "embedding_model")(classmethod(lambda cls, v: _name(v)))
    _json_values = field_validator("value", "provenance")(
        classmethod(lambda cls, v: _json_size_ok(v, "value")))

    @model_validator(mode="after")
    def _not_empty(self) -> MemoryPatch:
        # An empty patch would still bump the version and write an audit entry.
        if not self.model_fields_set:
            raise ValueError("the patch is empty; set at least one field to change")
        return self

    def changes(self) -> dict[str, Any]:
        """Only the fields the caller set (so `null` can clear a field on purpose)."""
        return {name: getattr(self, name) for name in self.model_fields_set}


class ForgetPredicate(_Input):
    """What `forget` tombstones: a substring, or a conjunction of the other fields."""

    contains: str | None = Field(default=None, min_length=1, max_length=1024)
    id: str | None = Field(default=None, min_length=1)
    key: str | None = Field(default=None, min_length=1)
    tag: str | None = Field(default=None, min_length=1)
    tags: tuple[str, ...] | None = None
    query: str | None = Field(default=None, min_length=1, max_length=1024)

    # A blank field would match everything (`contains: " "`) or nothing: refused.
    _names = field_validator("id", "key", "tag")(classmethod(lambda cls, v: _name(v)))

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
    memory_types: tuple[str, ...] = ()
    min_confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    # Time travel (system time): what was believed at this instant, i.e. memories
    # recorded by then and not yet superseded, retracted, forgotten or expired
    # then, whatever their status now (`statuses` does not apply).
    as_of: datetime | None = None
    # Set by search: the visibility buckets of the caller's scope chain.
    scope_keys: tuple[str, ...] | None = None

    _ns = field_validator("namespace")(classmethod(lambda cls, v: validate_namespace(v)))
    _times = field_validator("created_after", "created_before", "as_of")(
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


def visible_scope_keys(
    context: ScopeRef, *, scope: Scope | None = None, scopes: tuple[Scope, ...] = ()
) -> tuple[str, ...] | None:
    """The visibility buckets a search in `context` may read.

    At scope S the caller sees S and every broader level of its chain whose
    id it names (session sees session + user + agent), each bucket taken within
    the ids the context names (`bucket_key`: task t1 of session s1 of user u1 is
    not task t1 of another user or session), plus memories written
    without a scope, which belong to the whole namespace. An explicit list of
    scopes is a union of exactly those levels. With neither, the narrowest
    level the context names is S; with no ids at all there is no restriction
    beyond the namespace (None).
    """
    ids = {level: getattr(context, SCOPE_ID_FIELD[level]) for level in SCOPE_CHAIN}
    if scopes:
        missing = [s.value for s in scopes if not ids[s]]
        if missing:
            raise ValidationError(
                f"scopes {', '.join(missing)} need their ids in the search context",
                fields=["scopes"],
            )
        levels: list[Scope] = list(dict.fromkeys(scopes))
    else:
        start = scope
        if start is None:
            start = next((level for level in SCOPE_CHAIN if ids[level]), None)
            if start is None:
                return None
        elif not ids[start]:
            raise ValidationError(
                f"a search at scope {start.value} needs {camel(SCOPE_ID_FIELD[start])}",
                fields=[camel(SCOPE_ID_FIELD[start])],
            )
        levels = [lvl for lvl in SCOPE_CHAIN[SCOPE_CHAIN.index(start):] if ids[lvl]]
    # Each level's bucket within the chain the context names: a session or task id
    # only ever matches under the context's user (and session).
    named = context.scope_ids()
    keys = [bucket_key(level, named) for level in levels]
    if not scopes:
        keys.append(NAMESPACE_SCOPE_KEY)
    return tuple(keys)


M = TypeVar("M", bound=BaseModel)


def camel(name: str) -> str:
    """Report field names as the GraphQL API spells them."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def validated(model: type[M], **data: Any) -> M:
    """Build `model` or raise the project's ValidationError with every problem named.

    Strings with a lone surrogate (a JSON `"\\ud800"` escape) are refused first,
    whatever field holds them: no UTF-8 encoder, Neo4j's included, can write them.
    """
    found = unwritable(data)
    if found is not None:
        path, what = found
        where = ".".join(camel(part) for part in path.split("."))
        raise ValidationError(f"invalid input: {where}: {what}", fields=[where])
    try:
        return model(**data)
    except pydantic.ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            where = ".".join(camel(str(p)) for p in error["loc"]) or model.__name__
            problems.append(f"{where}: {error['msg'].removeprefix('Value error, ')}")
        raise ValidationError(
            "invalid input: " + "; ".join(problems), fields=[p.split(":")[0] for p in problems]
        ) from None
