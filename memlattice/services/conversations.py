"""Ingesting a conversation: one memory per turn, and the session's structure.

The turns are written like any memory, through the memory service (embedded
when they bring no vector, audited, announced); `graph.conversations` adds the
session node, NEXT between consecutive turns and the speakers as entities, in
the same transaction. Sending a session again writes nothing and answers the same.
With the write-side LLM configured (memlattice.services.session_facts), the
committed session is then read for facts in the background.
"""

from __future__ import annotations

from dataclasses import dataclass

from memlattice.core.auth import Tenant
from memlattice.core.duplicates import content_hash
from memlattice.core.errors import Conflict, ValidationError
from memlattice.core.messages import ConversationInput, speaker_key, turn_content, turn_id
from memlattice.core.model import MemoryInput, validated
from memlattice.graph.codec import Memory
from memlattice.graph.conversations import turn_hashes
from memlattice.graph.session_keys import SessionKeyGraph, SessionKeys
from memlattice.services.memories import MemoryService
from memlattice.services.session_facts import SessionFacts


@dataclass(frozen=True)
class IngestedConversation:
    session_id: str
    memories: list[Memory]  # one per message, in order
    created: int  # how many of them this call wrote
    session: SessionKeys  # what the whole session is about and when, after this call


class ConversationService:
    """Built on the memory service, which writes the turns and announces them."""

    def __init__(self, memories: MemoryService, facts: SessionFacts | None = None) -> None:
        self.memories = memories
        self.facts = facts

    async def ingest(self, conversation: ConversationInput, *, tenant: Tenant,
                     actor: str) -> IngestedConversation:
        session = conversation.session_id
        assert session is not None  # ConversationInput requires it
        inputs = [
            validated(
                MemoryInput, namespace=conversation.namespace,
                id=turn_id(conversation.namespace, session, message),
                content=turn_content(message), memory_type="message",
                scope=conversation.scope, agent_id=conversation.agent_id,
                user_id=conversation.user_id, session_id=session,
                task_id=conversation.task_id, tags=conversation.tags,
                sensitivity=conversation.sensitivity, source=conversation.source,
                source_type="conversation", embedding=message.embedding, now=message.at,
                metadata={**message.metadata,
                          **({"speaker": message.speaker} if message.speaker else {}),
                          **({"role": message.role} if message.role else {})},
            )
            for message in conversation.messages
        ]
        ids = [str(m.id) for m in inputs]
        if len(set(ids)) != len(ids):
            raise ValidationError("the session holds the same message twice (same id, or same"
                                  " speaker, time and content)", field="messages")
        for m in inputs:  # before embedding: a refused write costs no provider call
            tenant.check_record(namespace=m.namespace, scope=m.scope, sensitivity=m.sensitivity)
        known = await self.memories.existing_ids(conversation.namespace, ids, tenant=tenant)
        await self._refuse_renamed(conversation, ids, known)
        prepared = await self.memories.prepare([m for m in inputs if m.id not in known])
        speakers = [message.who for message in conversation.messages]
        memories, written, keys = await self.memories.ingest_session(
            prepared, session=session, turn_ids=ids,
            speakers=[(speaker_key(s), s) if s else None for s in speakers],
            namespace=conversation.namespace, tenant=tenant, actor=actor)
        if self.facts is not None:  # committed: the model reads it without holding us up
            self.facts.schedule(session, memories, tenant=tenant, actor=actor)
        return IngestedConversation(session_id=session, memories=memories, created=len(written),
                                    session=keys)

    async def _refuse_renamed(self, conversation: ConversationInput, ids: list[str],
                              known: set[str]) -> None:
        """A message that names its own id and was stored before must say the same again
        (a re-sent conversation): another content under that id is CONFLICT, nothing
        written. A message without an id is known by its content, so cannot differ."""
        named = {turn: (i, content_hash(turn_content(m))) for i, (turn, m) in
                 enumerate(zip(ids, conversation.messages)) if m.id is not None and turn in known}
        stored = await turn_hashes(self.memories.graph.client, conversation.namespace,
                                   list(named))
        for turn, (index, hash) in named.items():
            if stored.get(turn, hash) != hash:
                message = conversation.messages[index]
                raise Conflict(f"message {message.id} of session {conversation.session_id} was"
                               " stored with other content; a message id names one message",
                               field="messages", index=index, id=message.id)

    async def session(self, namespace: str, session: str, *, tenant: Tenant
                      ) -> SessionKeys | None:
        """A session's keys as stored on write, or None: no such session, or one holding
        turns the caller may not see (its keys come from them too)."""
        keys = await SessionKeyGraph(self.memories.graph.client).get(tenant=tenant,
                                                                     session=session)
        return keys if keys is not None and keys.complete else None

