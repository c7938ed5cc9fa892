"""LangChain adapters: a retriever over Memlattice search, and a chat message history
stored as a Memlattice conversation.

    from memlattice_client import MemlatticeClient
    from memlattice_client.integrations.langchain import (
        MemlatticeChatMessageHistory, MemlatticeRetriever)

    client = MemlatticeClient()
    retriever = MemlatticeRetriever(client=client, namespace="demo", k=4)
    docs = retriever.invoke("where does Alice live?")
    history = MemlatticeChatMessageHistory(client, "demo", session_id="chat-1")

The history writes through `ingestConversation` (one request per `add_messages`):
each message is a turn of the session, joined to the one before it, and the
message itself (`message_to_dict`) rides in the turn's metadata so that reading
the history back gives the same messages. Errors are the client's typed ones
(`ForbiddenError`, `ValidationError`, ...), raised from `invoke` / `messages` as
LangChain raises a retriever's or a history's own errors (callbacks see them
as `on_retriever_error`). Needs the `langchain` extra:
`pip install './client[langchain]'`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.documents import Document
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        ChatMessage,
        HumanMessage,
        SystemMessage,
        message_to_dict,
        messages_from_dict,
    )
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict, Field
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ImportError("the LangChain adapters need langchain-core: pip install"
                      " 'memlattice-client[langchain]' (or './client[langchain]')") from exc

from memlattice_client import _operations as ops
from memlattice_client._client import AsyncMemlatticeClient, MemlatticeClient
from memlattice_client._inputs import Message
from memlattice_client._models import Memory, MemoryPage, SearchHit
from memlattice_client.integrations._steps import Steps, run_async, run_sync

__all__ = ["MemlatticeChatMessageHistory", "MemlatticeRetriever", "document_of"]

METADATA_KEY = "langchain"  # the turn's metadata field holding message_to_dict(message)
PAGE = 500


def document_of(hit: SearchHit) -> Document:
    """A search hit as a LangChain document: the memory's content, and what the hit
    says about it in `metadata` (id, namespace, key, score, tags, times, its own
    metadata under `metadata`)."""
    m = hit.memory
    return Document(id=m.id, page_content=m.content, metadata={
        "id": m.id, "namespace": m.namespace, "key": m.key, "score": hit.score,
        "memory_type": m.memory_type, "tags": list(m.tags), "metadata": m.metadata,
        "session_id": m.session_id, "created_at": m.created_at.isoformat()})


class MemlatticeRetriever(BaseRetriever):
    """Memlattice search as a LangChain retriever: `k` best memories of `namespace`.

    `search_options` go to every search (`user_id=`, `scope=`, `filter=`,
    `min_score=`, `scoring=`, ...). The sync client serves `invoke`; `async_client`
    serves `ainvoke`, which otherwise runs the sync client in a thread.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: MemlatticeClient | None = None
    async_client: AsyncMemlatticeClient | None = None
    namespace: str
    k: int = 4
    search_options: dict[str, Any] = Field(default_factory=dict)

    def model_post_init(self, context: Any, /) -> None:
        if self.client is None and self.async_client is None:
            raise TypeError("MemlatticeRetriever needs client=, async_client= or both")

    def _search(self, query: str) -> ops.Call[list[SearchHit]]:
        options: dict[str, Any] = {**self.search_options, "limit": self.k}
        return ops.search(self.namespace, query, **options)

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        if self.client is None:
            raise TypeError("this retriever has only an async_client: use ainvoke")
        return [document_of(hit) for hit in self.client.send(self._search(query))]

    async def _aget_relevant_documents(
            self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
    ) -> list[Document]:
        if self.async_client is not None:
            hits = await self.async_client.send(self._search(query))
        elif self.client is not None:
            hits = await asyncio.to_thread(self.client.send, self._search(query))
        return [document_of(hit) for hit in hits]


class MemlatticeChatMessageHistory(BaseChatMessageHistory):
    """A chat's messages as the turns of Memlattice session `session_id` in `namespace`.

    `add_messages` is one `ingestConversation` (the turns are searchable at once,
    with the session's entities and time spans); `messages` reads the session's
    turns in order; `clear` erases them. `user_id` / `agent_id` are the turns'
    scope ids, as `ingest_conversation` takes them. A message without text (an AI
    message with tool calls only) is stored with a placeholder content, and comes
    back whole from its metadata.
    """

    def __init__(self, client: MemlatticeClient | None, namespace: str, session_id: str, *,
                 async_client: AsyncMemlatticeClient | None = None, user_id: str | None = None,
                 agent_id: str | None = None) -> None:
        if client is None and async_client is None:
            raise TypeError("MemlatticeChatMessageHistory needs a client, an async_client"
                            " or both")
        self.client = client
        self.async_client = async_client
        self.namespace = namespace
        self.session_id = session_id
        self.scope_ids: dict[str, Any] = {k: v for k, v in {"user_id": user_id, "agent_id": agent_id}.items()
                          if v is not None}

    # ---------------------------------------------------------------- sync

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return [_message_of(m) for m in self._run(self._turns())]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        self._run(self._add(messages))

    def clear(self) -> None:
        self._run(self._clear())

    # ---------------------------------------------------------------- async

    async def aget_messages(self) -> list[BaseMessage]:
        return [_message_of(m) for m in await self._arun(self._turns())]

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        await self._arun(self._add(messages))

    async def aclear(self) -> None:
        await self._arun(self._clear())

    # ---------------------------------------------------------------- steps

    def _run(self, steps: Steps[Any]) -> Any:
        if self.client is None:
            raise TypeError("this history has only an async_client: use the a* methods")
        return run_sync(self.client, steps)

    async def _arun(self, steps: Steps[Any]) -> Any:
        if self.async_client is None:
            return await asyncio.to_thread(self._run, steps)
        return await run_async(self.async_client, steps)

    def _turns(self) -> Steps[list[Memory]]:
        """The session's turns, oldest first."""
        turns: list[Memory] = []
        after: str | None = None
        while True:
            page: MemoryPage = yield ops.memories(
                self.namespace, first=PAGE, after=after, session_id=self.session_id,
                memory_types=["message"])
            turns += page.items
            if not page.has_next_page:
                break
            after = page.end_cursor
        return sorted(turns, key=lambda m: m.created_at)

    def _add(self, messages: Sequence[BaseMessage]) -> Steps[None]:
        if not messages:
            return None
        # Each turn's time orders the history: consecutive microseconds from now.
        start = datetime.now(UTC)
        turns = [_turn_of(message, start + timedelta(microseconds=i))
                 for i, message in enumerate(messages)]
        yield ops.ingest_conversation(self.namespace, self.session_id, turns, **self.scope_ids)
        return None

    def _clear(self) -> Steps[None]:
        turns = yield from self._turns()
        for turn in turns:
            yield ops.delete_memory(self.namespace, turn.id)
        return None


def _turn_of(message: BaseMessage, at: datetime) -> Message:
    text = str(message.text)
    turn: Message = {
        "content": text if text.strip() else f"({message.type} message without text)",
        "role": message.type, "id": message.id or uuid.uuid4().hex, "at": at,
        "metadata": {METADATA_KEY: message_to_dict(message)}}
    if message.name:
        turn["speaker"] = message.name
    return turn


_BY_ROLE: dict[str, type[BaseMessage]] = {
    "human": HumanMessage, "user": HumanMessage, "ai": AIMessage, "assistant": AIMessage,
    "system": SystemMessage}


def _message_of(memory: Memory) -> BaseMessage:
    """The message a turn was written from; for a turn written some other way, a
    message of its role with its words (without the `speaker: ` the server adds)."""
    stored = memory.metadata.get(METADATA_KEY)
    if isinstance(stored, dict):
        return messages_from_dict([stored])[0]
    role = str(memory.metadata.get("role") or "user")
    who = memory.metadata.get("speaker") or memory.metadata.get("role")
    content = memory.content.removeprefix(f"{who}: ") if who else memory.content
    cls = _BY_ROLE.get(role)
    return cls(content=content) if cls is not None else ChatMessage(role=role, content=content)
