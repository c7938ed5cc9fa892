"""Who a memory belongs to: scope levels, the ids along the chain, the visibility
buckets they make, and which buckets a search may read.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from pydantic import Field, field_validator, model_validator

from memlattice.core.errors import ValidationError
from memlattice.core.field_rules import StrictInput, camel, name_or_none


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


class ScopeRef(StrictInput):
    """Who a memory belongs to: its level and the ids along the chain."""

    scope: Scope | None = None
    agent_id: str | None = Field(default=None, max_length=256)
    user_id: str | None = Field(default=None, max_length=256)
    session_id: str | None = Field(default=None, max_length=256)
    task_id: str | None = Field(default=None, max_length=256)

    @field_validator("agent_id", "user_id", "session_id", "task_id")
    @classmethod
    def _ids_are_names(cls, value: str | None) -> str | None:
        return name_or_none(value)

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
