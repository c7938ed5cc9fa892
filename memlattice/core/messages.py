"""A conversation as a caller sends it: messages in order, and who spoke them.

`ingestConversation` stores one memory per message (memlattice.services.conversations).
A message's memory id is derived from the namespace, the session and either the
message's own id or its speaker, time and content, so sending a session again
names the same memories and writes nothing new.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from datetime import datetime
from typing import Any

from pydantic import Field, field_validator, model_validator

from memlattice.core.field_rules import (
    MAX_BATCH,
    MAX_CONTENT_CHARS,
    StrictInput,
    as_utc,
    json_size_ok,
    validate_namespace,
)
from memlattice.core.json_values import check_json
from memlattice.core.names import blank, check_name
from memlattice.core.scopes import ScopeRef
from memlattice.core.vocabulary import DEFAULT_SENSITIVITY, Sensitivity

# Ids of turns: a UUID of their own, so that a derived id never collides with another's.
_TURNS = uuid.UUID("6f1c2a7e-54b9-4c8e-9a55-3f1e4b2d7c10")
_SPACES = re.compile(r"\s+")


class MessageInput(StrictInput):
    """One turn: who said it (a name, or a role such as `user`), what, and when."""

    id: str | None = Field(default=None, min_length=1, max_length=128)
    speaker: str | None = Field(default=None, min_length=1, max_length=256)
    role: str | None = Field(default=None, min_length=1, max_length=64)
    content: str = Field(max_length=MAX_CONTENT_CHARS)
    at: datetime | None = None
    embedding: tuple[float, ...] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("content")
    @classmethod
    def _content(cls, value: str) -> str:
        if blank(value):
            raise ValueError("content must not be blank (whitespace or invisible characters)")
        return value

    @field_validator("id", "speaker", "role")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        return check_name(value) if value is not None else None

    @field_validator("at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return as_utc(value)

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        return json_size_ok(check_json(value, "metadata"), "metadata")

    @property
    def who(self) -> str | None:
        """The speaker's name, else the role."""
        return self.speaker or self.role


class ConversationInput(ScopeRef):
    """A session of messages, stored under the caller's scope ids.

    `session_id` names the session (and, with scope SESSION, its visibility
    bucket, which is the default when no scope is given).
    """

    namespace: str
    messages: tuple[MessageInput, ...] = Field(min_length=1, max_length=MAX_BATCH)
    tags: tuple[str, ...] = ()
    sensitivity: Sensitivity = DEFAULT_SENSITIVITY
    source: str | None = Field(default=None, max_length=1024)

    _ns = field_validator("namespace")(classmethod(lambda cls, v: validate_namespace(v)))

    @model_validator(mode="before")
    @classmethod
    def _session_scope(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("scope") is None and data.get("session_id"):
            return {**data, "scope": "session"}
        return data

    @model_validator(mode="after")
    def _needs_session(self) -> ConversationInput:
        if not self.session_id:
            raise ValueError("a conversation needs sessionId: the session its turns belong to")
        return self


def speaker_key(name: str) -> str:
    """A speaker's entity key: case, accents' composition and spacing folded."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", name)).strip().casefold()


def turn_content(message: MessageInput) -> str:
    """What the turn's memory says: `speaker: content`, so that a search for a
    person finds what they said (and a recalled turn says who said it)."""
    return f"{message.who}: {message.content}" if message.who else message.content


def turn_id(namespace: str, session_id: str, message: MessageInput) -> str:
    """The turn's memory id: the same message of the same session, the same id."""
    if message.id is not None:
        name = f"{namespace}\x1f{session_id}\x1fid\x1f{message.id}"
    else:
        at = message.at.isoformat() if message.at is not None else ""
        name = f"{namespace}\x1f{session_id}\x1f{message.who or ''}\x1f{at}\x1f{message.content}"
    return str(uuid.uuid5(_TURNS, name))
