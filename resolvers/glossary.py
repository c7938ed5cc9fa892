"""The API's words, written once: descriptions that many types, inputs and arguments
share (a namespace, the scope ids, tags, an expected version...), the arguments
spelled with them, and a way to describe an enum's values.

schema.graphql is what a frontend developer reads (GraphiQL's docs pane, the
comments graphql-codegen writes into TypeScript types), so every type, field,
argument, input field and enum value carries a description:
tests/integration/test_schema_lint.py runs graphql-schema-linter's description
rules over the schema and fails on any gap. A word used in several places is
defined here so that `Memory.tags`, `MemoryInput.tags` and `RecordInput.tags`
cannot drift apart.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from enum import Enum
from typing import Annotated, Any, TypeVar

import strawberry

E = TypeVar("E", bound=Enum)


def described_enum(cls: type[E], *, description: str, values: Mapping[E, str],
                   name: str | None = None) -> type[E]:
    """Register `cls` as a GraphQL enum (in place, as strawberry.enum does) with a
    description for every value.

    The domain enums live in memlattice.core, free of strawberry, so their values
    cannot be `strawberry.enum_value(...)`; the descriptions are laid onto the
    registered definition instead. A value left out is a programming error."""
    missing = [member.name for member in cls if member not in values]
    if missing:
        raise ValueError(f"{cls.__name__}: no description for {', '.join(missing)}")
    strawberry.enum(cls, name=name, description=description)
    definition: Any = cls.__strawberry_definition__  # type: ignore[attr-defined]
    definition.values = [dataclasses.replace(v, description=values[cls[v.name]])
                         for v in definition.values]
    return cls


# ------------------------------------------------------------------ shared words

NAMESPACE = (
    "The namespace: a relative path of names, e.g. `team/alice/notes` (no leading `/`, no"
    " `.` or `..` segments). Every operation works inside one; an API key reaches only its"
    " own namespaces (FORBIDDEN otherwise).")
MEMORY_ID = "The memory's id (as `Memory.id` returns it)."
EXPECTED_VERSION = (
    "Optimistic concurrency: the `version` the caller last read. When the memory has"
    " changed since, nothing is written and the error is VERSION_CONFLICT. Omitted: no"
    " check.")
SCOPE = (
    "The visibility level the memory belongs to (TASK, SESSION, USER, AGENT); it needs the"
    " matching id (scope SESSION needs sessionId). Null: the whole namespace.")
AGENT_ID = "The agent it belongs to (up to 256 characters); the root of the AGENT scope."
USER_ID = "The end user it belongs to (up to 256 characters); the root of the USER scope."
SESSION_ID = "The session it belongs to, unique within its user (up to 256 characters)."
TASK_ID = "The task it belongs to, unique within its user's session (up to 256 characters)."
KEY = ("An optional name of the caller's own for the memory (up to 1024 characters), to"
       " find it by (`MemoryFilterInput.key`) and boost it in search; not unique.")
CONTENT = "The text (up to 100,000 characters; not blank). What search matches and embeds."
VALUE = "Any structured JSON the caller keeps with it (at most 64 levels deep)."
SUMMARY = "A short text of the caller's own about it (up to 10,000 characters)."
TAGS = "Labels to filter and boost by: at most 64, each up to 256 characters."
METADATA = ("A JSON object of the caller's own (keys 1-128 characters);"
            " `MemoryFilterInput.metadata` filters on its top-level keys.")
CONFIDENCE = "How sure the writer is, in [0, 1]; 1 by default. Search may weigh it."
SENSITIVITY = ("How sensitive it is; LOW by default. A key sees only memories up to its"
               " clearance and cannot write above it (FORBIDDEN).")
SALIENCE = "How important it is, in [0, 1] (null: not rated). Search may weigh it."
SOURCE = "Where it came from, free text (a URL, a file, a tool; up to 1024 characters)."
SOURCE_TYPE = ("What kind of source it came from (a name such as `chat` or `email`; up to"
               " 128 characters).")
EXTRACTION_METHOD = ("How it was extracted from the source (a name such as `llm` or"
                     " `manual`; up to 128 characters).")
PROVENANCE = "Any JSON describing how it came to be, kept as written."
EXPIRES_AT = ("When it expires (TTL): after this instant it is never returned or found;"
              " null: never.")
EMBEDDING = ("Its vector, when the caller embeds (a list of numbers of the namespace's"
             " dimension, or base64 float32); omitted: the server embeds the content."
             " Another length is DIMENSION_MISMATCH.")
EMBEDDING_MODEL = ("The model `embedding` was made with; the namespace's model (the"
                   " server's default) when omitted.")
NOW = "The creation time to record instead of the server clock (imports, replays)."
CREATED_AT = "When it was recorded (system time, UTC)."
DRY_RUN = "Report what would happen without changing anything."

# ------------------------------------------------------------------ shared arguments

NamespaceArg = Annotated[str, strawberry.argument(description=NAMESPACE)]
MemoryIdArg = Annotated[strawberry.ID, strawberry.argument(description=MEMORY_ID)]
ExpectedVersionArg = Annotated[int | None, strawberry.argument(description=EXPECTED_VERSION)]


def arg(description: str) -> Any:
    """`Annotated[T, arg("...")]`: an argument's description, for one that is its own."""
    return strawberry.argument(description=description)
