"""ingestConversation: a session of messages in one call (memlattice.services.conversations)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry
from strawberry.scalars import JSON

from memlattice.core import messages, model
from memlattice.core.messages import ConversationInput as DomainConversation
from memlattice.graph.session_keys import SessionKeys as DomainSessionKeys
from memlattice.resolvers import glossary as g
from memlattice.resolvers.context import Info
from memlattice.resolvers.glossary import arg
from memlattice.resolvers.inputs import _set
from memlattice.resolvers.scalars import Vector
from memlattice.resolvers.types import Memory, Scope, Sensitivity
from memlattice.services.conversations import ConversationService


@strawberry.input(description="One turn of a conversation.")
class MessageInput:
    content: str = strawberry.field(
        description="What was said (not blank; up to 100,000 characters).")
    speaker: str | None = strawberry.field(
        default=strawberry.UNSET, description="Who said it (a name); becomes an entity.")
    role: str | None = strawberry.field(
        default=strawberry.UNSET, description="Or the speaker's role (user, assistant, tool).")
    at: datetime | None = strawberry.field(
        default=strawberry.UNSET, description="When it was said; the server clock if omitted.")
    id: strawberry.ID | None = strawberry.field(
        default=strawberry.UNSET,
        description="The message's own id; without one a message is known by its speaker,"
        " time and content.")
    embedding: Vector | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "The turn's vector, when the caller embeds; omitted: the server embeds it."))
    metadata: JSON | None = strawberry.field(
        default=strawberry.UNSET, description=(
            "A JSON object of the caller's own, kept on the turn's memory."))

    def to_domain(self) -> messages.MessageInput:
        data = {k: v for k, v in _set(self, "speaker", "role", "at", "id", "embedding",
                                      "metadata").items() if v is not None}
        return model.validated(messages.MessageInput, content=self.content, **data)


@strawberry.input(description=(
    "A session of messages: one memory per turn (content `speaker: text`), a Session node,"
    " NEXT between consecutive turns, the speakers as entities. Sending it again changes"
    " nothing; sending its continuation extends it."))
class ConversationInput:
    namespace: str = strawberry.field(description=g.NAMESPACE)
    session_id: str = strawberry.field(description="The session the turns belong to.")
    messages: list[MessageInput] = strawberry.field(
        description=(
            "The turns, in the order they were said; a resend may repeat the ones already "
            "stored."))
    scope: Scope | None = strawberry.field(
        default=strawberry.UNSET, description="SESSION unless given.")
    agent_id: str | None = strawberry.field(default=strawberry.UNSET, description=g.AGENT_ID)
    user_id: str | None = strawberry.field(default=strawberry.UNSET, description=g.USER_ID)
    task_id: str | None = strawberry.field(default=strawberry.UNSET, description=g.TASK_ID)
    tags: list[str] | None = strawberry.field(default=strawberry.UNSET, description=g.TAGS)
    sensitivity: Sensitivity | None = strawberry.field(
        default=strawberry.UNSET, description=g.SENSITIVITY)
    source: str | None = strawberry.field(default=strawberry.UNSET, description=g.SOURCE)

    # `messages` is also a field of this class, hence the imported name here.
    def to_domain(self) -> DomainConversation:
        data = {k: v for k, v in _set(self, "scope", "agent_id", "user_id", "task_id", "tags",
                                      "sensitivity", "source").items() if v is not None}
        return model.validated(
            messages.ConversationInput, namespace=self.namespace, session_id=self.session_id,
            messages=tuple(m.to_domain() for m in self.messages), **data)


@strawberry.type(name="Session", description=(
    "What a conversation session is about and when, derived on write from its active"
    " turns (never on the search path): its entities, its keyphrases and its time span."))
class SessionKeys:
    id: str = strawberry.field(description="The session's id (ConversationInput.sessionId).")
    entities: list[str] = strawberry.field(description=(
        "Keys of the entities its turns mention and of its speakers, most turns first."))
    keyphrases: list[str] = strawberry.field(description=(
        "Its keyphrases, best first: RAKE over the turns' words (lower case, plurals folded)."))
    started_at: datetime | None = strawberry.field(description="Its first turn's time.")
    ended_at: datetime | None = strawberry.field(description="Its last turn's time.")
    event_start: datetime | None = strawberry.field(description=(
        "The start of the span of its turns' event times (see Memory.eventStart)."))
    event_end: datetime | None = strawberry.field(description=(
        "The end (exclusive) of the span of its turns' event times."))

    @classmethod
    def from_domain(cls, keys: DomainSessionKeys) -> SessionKeys:
        return cls(id=keys.id, entities=list(keys.entities), keyphrases=list(keys.keyphrases),
                   started_at=keys.started_at, ended_at=keys.ended_at,
                   event_start=keys.event_start, event_end=keys.event_end)


@strawberry.type(description="The turns of an ingested session, in order.")
class IngestedConversation:
    session_id: str = strawberry.field(description="The session's id.")
    created: int = strawberry.field(description="Turns this call wrote (0 when re-sent).")
    memories: list[Memory] = strawberry.field(
        description=(
            "Every turn of this call as a memory, in order (also the ones an earlier call "
            "stored)."))
    session: SessionKeys | None = strawberry.field(description=(
        "The whole session's keys after this call (re-derived when turns are added); null"
        " when the session holds turns the caller may not see, which they come from too."))


@strawberry.type
class ConversationMutation:
    @strawberry.mutation(description=(
        "Store a session of messages: a memory per turn, the session, NEXT between turns"
        " and the speakers; idempotent."))
    async def ingest_conversation(
        self, info: Info,
        input: Annotated[ConversationInput, arg("The session and its messages.")],
    ) -> IngestedConversation:
        conversation = input.to_domain()
        done = await ConversationService(info.context.service,
                                         info.context.session_facts).ingest(
            conversation, tenant=info.context.tenant(conversation.namespace, write=True),
            actor=info.context.actor)
        return IngestedConversation(session_id=done.session_id, created=done.created,
                                    memories=[Memory.from_domain(m) for m in done.memories],
                                    session=SessionKeys.from_domain(done.session)
                                    if done.session.complete else None)


@strawberry.type
class ConversationQuery:
    @strawberry.field(description=(
        "A conversation session's keys (entities, keyphrases, time spans) as derived on"
        " write; null when there is no such session or it holds turns the caller may not"
        " see."))
    async def session(
        self, info: Info,
        namespace: Annotated[str, arg(g.NAMESPACE)],
        id: Annotated[str, arg("The session's id (ConversationInput.sessionId).")],
    ) -> SessionKeys | None:
        keys = await ConversationService(info.context.service).session(
            namespace, id, tenant=info.context.tenant(namespace))
        return SessionKeys.from_domain(keys) if keys is not None else None

