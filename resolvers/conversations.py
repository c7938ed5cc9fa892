"""ingestConversation: a session of messages in one call (memlattice.services.conversations)."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.scalars import JSON

from memlattice.core import messages, model
from memlattice.core.messages import ConversationInput as DomainConversation
from memlattice.resolvers.context import Info
from memlattice.resolvers.inputs import _set
from memlattice.resolvers.scalars import Vector
from memlattice.resolvers.types import Memory, Scope, Sensitivity
from memlattice.services.conversations import ConversationService


@strawberry.input(description="One turn of a conversation.")
class MessageInput:
    content: str
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
    embedding: Vector | None = strawberry.UNSET
    metadata: JSON | None = strawberry.UNSET

    def to_domain(self) -> messages.MessageInput:
        data = {k: v for k, v in _set(self, "speaker", "role", "at", "id", "embedding",
                                      "metadata").items() if v is not None}
        return model.validated(messages.MessageInput, content=self.content, **data)


@strawberry.input(description=(
    "A session of messages: one memory per turn (content `speaker: text`), a Session node,"
    " NEXT between consecutive turns, the speakers as entities. Sending it again changes"
    " nothing; sending its continuation extends it."))
class ConversationInput:
    namespace: str
    session_id: str = strawberry.field(description="The session the turns belong to.")
    messages: list[MessageInput]
    scope: Scope | None = strawberry.field(
        default=strawberry.UNSET, description="SESSION unless given.")
    agent_id: str | None = strawberry.UNSET
    user_id: str | None = strawberry.UNSET
    task_id: str | None = strawberry.UNSET
    tags: list[str] | None = strawberry.UNSET
    sensitivity: Sensitivity | None = strawberry.UNSET
    source: str | None = strawberry.UNSET

    # `messages` is also a field of this class, hence the imported name here.
    def to_domain(self) -> DomainConversation:
        data = {k: v for k, v in _set(self, "scope", "agent_id", "user_id", "task_id", "tags",
                                      "sensitivity", "source").items() if v is not None}
        return model.validated(
            messages.ConversationInput, namespace=self.namespace, session_id=self.session_id,
            messages=tuple(m.to_domain() for m in self.messages), **data)


@strawberry.type(description="The turns of an ingested session, in order.")
class IngestedConversation:
    session_id: str
    created: int = strawberry.field(description="Turns this call wrote (0 when re-sent).")
    memories: list[Memory]


@strawberry.type
class ConversationMutation:
    @strawberry.mutation(description=(
        "Store a session of messages: a memory per turn, the session, NEXT between turns"
        " and the speakers; idempotent."))
    async def ingest_conversation(self, info: Info,
                                  input: ConversationInput) -> IngestedConversation:
        conversation = input.to_domain()
        done = await ConversationService(info.context.service,
                                         info.context.session_facts).ingest(
            conversation, tenant=info.context.tenant(conversation.namespace, write=True),
            actor=info.context.actor)
        return IngestedConversation(session_id=done.session_id, created=done.created,
                                    memories=[Memory.from_domain(m) for m in done.memories])
