"""The rules single input fields follow, shared by every input model, and `validated`,
which turns Pydantic's error into the project's `ValidationError` so callers see
one error type with a stable code whatever layer they come through.
"""

from __future__ import annotations

import functools
import json
from datetime import UTC, datetime
from typing import Any, TypeVar

import pydantic
from pydantic import BaseModel, ConfigDict

from memlattice.core.errors import ValidationError
from memlattice.core.json_values import check_json, unwritable
from memlattice.core.names import check_name
from memlattice.core.times import to_utc
from memlattice.core.vector_checks import vector_problem

MAX_CONTENT_CHARS = 100_000
MAX_TAGS = 64
MAX_BATCH = 1_000


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


J = TypeVar("J")


def json_size_ok(value: J, what: str, limit: int = 1_000_000) -> J:
    check_json(value, what)
    try:
        encoded = json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} is not JSON-serialisable") from exc
    if len(encoded) > limit:
        raise ValueError(f"{what} is larger than {limit} bytes of JSON")
    return value


def name_or_none(value: str | None, what: str = "") -> str | None:
    """None, or a valid name (memlattice.core.names); Pydantic names the field."""
    return None if value is None else check_name(value, what or "it")


def tag_list(value: tuple[str, ...]) -> tuple[str, ...]:
    if len(value) > MAX_TAGS:
        raise ValueError(f"at most {MAX_TAGS} tags")
    for tag in value:
        if len(tag) > 256:
            raise ValueError("tags must be at most 256 characters")
        check_name(tag, f"tag {tag!r}")
    return tuple(dict.fromkeys(value))


def finite_vector(value: tuple[float, ...] | None) -> tuple[float, ...] | None:
    if value is not None:
        if not value:
            raise ValueError("embedding must not be empty")
        problem = vector_problem(value)
        if problem is not None:
            raise ValueError(f"embedding {problem}")
    return value


class StrictInput(BaseModel):
    """Frozen, and refusing fields it does not declare: a typo is an error, not a no-op."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)


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
