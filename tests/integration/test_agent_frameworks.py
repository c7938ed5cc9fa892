"""The framework adapters of the client (`memlattice_client.integrations`) against the real
packages (pinned in the `dev` extra) and a live server with API keys, each used as its
framework's own documentation shows: a LangGraph graph compiled with `store=` whose node
searches and puts; a LangChain retriever in a chain and a chat history behind
`RunnableWithMessageHistory`; a LlamaIndex retriever behind a query engine.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_core.runnables.history import RunnableWithMessageHistory
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine

from memlattice.core.settings import Settings
from memlattice.server.app import create_app
from memlattice_client import (
    AsyncMemlatticeClient,
    ForbiddenError,
    MemlatticeClient,
    ValidationError,
)
from memlattice_client.integrations.langchain import MemlatticeChatMessageHistory
from memlattice_client.integrations.langchain import MemlatticeRetriever as LangChainRetriever
from memlattice_client.integrations.langgraph import MemlatticeStore, NamespaceRefusedError
from memlattice_client.integrations.llamaindex import MemlatticeRetriever as LlamaIndexRetriever
from tests._live import serve_in_thread
from tests.integration._keys import make_key

# A first search on a fresh Neo4j compiles the recall query; on a busy machine that
# alone can pass the default 30 s of the client and of the server's request budget.
TIMEOUT_S = 180.0


@pytest.fixture(scope="module")
def live_url(settings: Settings) -> Iterator[str]:
    """An app with API keys required, on a real socket (the sync client speaks HTTP)."""
    limits = settings.limits.model_copy(update={"request_timeout_s": TIMEOUT_S})
    app = create_app(settings.model_copy(update={"auth_mode": "keys", "limits": limits}))
    with serve_in_thread(app) as url:
        yield url


@pytest.fixture
def root() -> str:
    """A fresh namespace root per test."""
    return f"test/{uuid.uuid4().hex[:12]}"


@pytest.fixture
def client(live_url: str, admin_key: str) -> Iterator[MemlatticeClient]:
    with MemlatticeClient(live_url, api_key=admin_key, timeout=TIMEOUT_S) as c:
        yield c


@pytest.fixture
async def async_client(live_url: str, admin_key: str) -> AsyncIterator[AsyncMemlatticeClient]:
    async with AsyncMemlatticeClient(live_url, api_key=admin_key, timeout=TIMEOUT_S) as c:
        yield c


# ---------------------------------------------------------------- LangGraph


def test_store_put_get_search_list_delete(client: MemlatticeClient, root: str) -> None:
    store = MemlatticeStore(client, root=root, index=["text"])
    store.put(("users", "alice"), "tea", {"text": "Alice drinks green tea", "kind": "pref",
                                         "rank": 2})
    store.put(("users", "alice"), "city", {"text": "Alice lives in Lisbon", "kind": "fact",
                                          "rank": 5})
    store.put(("users", "bob"), "city", {"text": "Bob lives in Porto", "kind": "fact",
                                        "rank": 1})
    item = store.get(("users", "alice"), "tea")
    assert item is not None and item.value["text"] == "Alice drinks green tea"
    assert item.namespace == ("users", "alice") and item.key == "tea"
    assert store.get(("users", "alice"), "missing") is None

    # A second put of a key replaces its value, under the same memory.
    store.put(("users", "alice"), "tea", {"text": "Alice drinks black tea", "kind": "pref",
                                         "rank": 3})
    again = store.get(("users", "alice"), "tea")
    assert again is not None and again.value["text"] == "Alice drinks black tea"
    assert again.created_at == item.created_at and again.updated_at > item.updated_at
    memory_page = client.memories(f"{root}/users/alice", key="tea")
    assert memory_page.total_count == 1 and memory_page.items[0].version == 2

    hits = store.search(("users", "alice"), query="where does Alice live?", limit=1)
    assert [h.key for h in hits] == ["city"] and hits[0].score is not None
    # The prefix covers sub-namespaces; equality runs in Neo4j, operators here.
    facts = store.search(("users",), filter={"kind": "fact"})
    assert sorted((h.namespace, h.key) for h in facts) == [
        (("users", "alice"), "city"), (("users", "bob"), "city")]
    assert len(store.search((), filter={"kind": "fact"})) == 2  # the whole root
    ranked = store.search(("users",), filter={"rank": {"$gte": 3}})
    assert sorted(h.value["text"] for h in ranked) == [
        "Alice drinks black tea", "Alice lives in Lisbon"]
    paged = [store.search(("users",), limit=1, offset=i) for i in range(4)]
    assert [len(p) for p in paged] == [1, 1, 1, 0]
    assert len({(p[0].namespace, p[0].key) for p in paged[:3]}) == 3

    assert store.list_namespaces() == [("users", "alice"), ("users", "bob")]
    assert store.list_namespaces(prefix=("users", "*"), max_depth=1) == [("users",)]
    assert store.list_namespaces(suffix=("bob",)) == [("users", "bob")]

    store.delete(("users", "alice"), "tea")
    assert store.get(("users", "alice"), "tea") is None
    store.put(("users", "alice"), "tea", {"text": "Alice gave up tea"})  # the key is free again
    back = store.get(("users", "alice"), "tea")
    assert back is not None and back.value == {"text": "Alice gave up tea"}


async def test_graph_compiled_with_the_store(async_client: AsyncMemlatticeClient,
                                             client: MemlatticeClient, root: str) -> None:
    """LangGraph's long-term memory how-to: a node searches the user's memories for
    the last message and stores a new one; a second run sees what the first stored."""

    async def call_model(state: MessagesState, *, store: BaseStore) -> dict[str, Any]:
        namespace = ("memories", "user-1")
        question = str(state["messages"][-1].content)
        found = await store.asearch(namespace, query=question, limit=3)
        if question.startswith("remember "):
            await store.aput(namespace, str(uuid.uuid4()), {"data": question[9:]})
        known = "; ".join(item.value["data"] for item in found) or "nothing yet"
        return {"messages": [{"role": "ai", "content": f"I know: {known}"}]}

    builder = StateGraph(MessagesState)
    builder.add_node("call_model", call_model)
    builder.add_edge(START, "call_model")
    builder.add_edge("call_model", END)
    # LangGraph's IndexConfig form; its embed and dims would be ignored (the server embeds).
    graph = builder.compile(store=MemlatticeStore(client, async_client=async_client,
                                                  root=root, index={"fields": ["data"]}))

    await graph.ainvoke({"messages": [{"role": "user", "content": "remember I like pears"}]})
    out = await graph.ainvoke({"messages": [{"role": "user",
                                             "content": "which fruit do I like?"}]})
    assert out["messages"][-1].content == "I know: I like pears"
    # The graph's write is an ordinary memory, visible to any Memlattice client.
    hits = client.search(f"{root}/memories/user-1", "pears")
    assert hits and hits[0].memory.value == {"data": "I like pears"}


async def test_store_refusals_are_typed(live_url: str, graph_client: Any, root: str) -> None:
    """A namespace the key may not use is the API's FORBIDDEN; one Memlattice refuses
    as a name is LangGraph's InvalidNamespaceError, also the client's ValidationError."""
    secret = await make_key(graph_client, f"{root}/*", name="langgraph-bounded")
    with MemlatticeClient(live_url, api_key=secret, timeout=TIMEOUT_S) as bounded:
        mine = MemlatticeStore(bounded, root=root)
        mine.put(("notes",), "n1", {"text": "allowed"})
        assert mine.get(("notes",), "n1") is not None
        theirs = MemlatticeStore(bounded, root="elsewhere")
        with pytest.raises(ForbiddenError):
            theirs.put(("notes",), "n1", {"text": "not mine"})
        with pytest.raises(ForbiddenError):
            theirs.search(("notes",), query="anything")
        for bad in [("a/b",), ("bad\u200blabel",)]:
            with pytest.raises(InvalidNamespaceError) as refused:
                mine.put(bad, "k", {"text": "x"})
            assert isinstance(refused.value, NamespaceRefusedError)
            assert isinstance(refused.value, ValidationError)
            assert refused.value.code == "VALIDATION"
        async with AsyncMemlatticeClient(live_url, api_key=secret,
                                         timeout=TIMEOUT_S) as abounded:
            with pytest.raises(ForbiddenError):
                await MemlatticeStore(async_client=abounded, root="elsewhere").aget(
                    ("notes",), "n1")


# ---------------------------------------------------------------- LangChain and LlamaIndex

FACTS = ["Alice moved to Lisbon in 2023", "Bob collects vintage trains",
         "The team standup is at 9:30 on Mondays"]


@pytest.fixture
def seeded(client: MemlatticeClient, root: str) -> str:
    """A namespace holding FACTS."""
    client.write_memories([{"namespace": root, "content": fact} for fact in FACTS])
    return root


async def test_langchain_retriever_in_a_chain(client: MemlatticeClient,
                                              async_client: AsyncMemlatticeClient,
                                              seeded: str) -> None:
    """LangChain's RAG pattern: the retriever's documents fill a prompt's context."""
    retriever = LangChainRetriever(client=client, async_client=async_client,
                                   namespace=seeded, k=2)
    docs = retriever.invoke("where does Alice live?")
    assert len(docs) == 2 and docs[0].page_content == FACTS[0]
    assert docs[0].metadata["namespace"] == seeded and docs[0].metadata["score"] > 0
    assert docs[0].id == docs[0].metadata["id"]

    def format_docs(docs: list[Document]) -> str:
        return "\n".join(doc.page_content for doc in docs)

    prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
    chain = {"context": retriever | format_docs, "question": RunnablePassthrough()} | prompt
    for value in [chain.invoke("when is the standup?"),
                  await chain.ainvoke("when is the standup?")]:
        assert FACTS[2] in value.to_string()


async def test_langchain_history_behind_runnable_with_message_history(
        client: MemlatticeClient, async_client: AsyncMemlatticeClient, root: str) -> None:
    """LangChain's message-history pattern: each call sees the turns before it, and
    the turns are a Memlattice conversation (searchable, one session)."""
    seen: list[list[BaseMessage]] = []

    def model(prompt: Any) -> AIMessage:
        seen.append(prompt.to_messages())
        return AIMessage(content=f"answer {len(seen)}")

    prompt = ChatPromptTemplate.from_messages([
        ("system", "Be brief."), MessagesPlaceholder("history"), ("human", "{question}")])
    chat = RunnableWithMessageHistory(
        prompt | RunnableLambda(model),
        lambda session_id: MemlatticeChatMessageHistory(client, root, session_id,
                                                        user_id="alice"),
        input_messages_key="question", history_messages_key="history")
    config: Any = {"configurable": {"session_id": "chat-1"}}
    chat.invoke({"question": "I moved to Lisbon"}, config=config)
    chat.invoke({"question": "Where do I live?"}, config=config)
    assert [(m.type, m.content) for m in seen[1]] == [
        ("system", "Be brief."), ("human", "I moved to Lisbon"), ("ai", "answer 1"),
        ("human", "Where do I live?")]

    hits = client.search(root, "moved to Lisbon", user_id="alice", session_id="chat-1")
    assert hits[0].memory.session_id == "chat-1" and hits[0].memory.user_id == "alice"
    keys = client.session(root, "chat-1")
    assert keys is not None

    history = MemlatticeChatMessageHistory(None, root, "chat-1", async_client=async_client,
                                           user_id="alice")
    await history.aadd_messages([AIMessage(content="", tool_calls=[
        {"name": "lookup", "args": {"city": "Lisbon"}, "id": "call-1"}])])
    messages = await history.aget_messages()
    assert [m.type for m in messages] == ["human", "ai", "human", "ai", "ai"]
    assert isinstance(messages[-1], AIMessage)
    assert messages[-1].tool_calls[0]["args"] == {"city": "Lisbon"}
    await history.aclear()
    assert MemlatticeChatMessageHistory(client, root, "chat-1").messages == []


def test_llamaindex_retriever_behind_a_query_engine(client: MemlatticeClient,
                                                    seeded: str) -> None:
    """LlamaIndex's pattern: a retriever alone, then under RetrieverQueryEngine."""
    retriever = LlamaIndexRetriever(client, namespace=seeded, similarity_top_k=2)
    nodes = retriever.retrieve("who collects trains?")
    assert nodes[0].node.get_content() == FACTS[1] and (nodes[0].score or 0) > 0
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = engine.query("who collects trains?")
    assert response.source_nodes[0].node.node_id == nodes[0].node.node_id
    assert FACTS[1] in str(response)  # MockLLM answers with its prompt, context included


async def test_retrievers_and_history_refusals_are_typed(
        live_url: str, graph_client: Any, seeded: str) -> None:
    """A key bound to another namespace: each adapter raises the API's FORBIDDEN."""
    secret = await make_key(graph_client, "elsewhere/*", name="frameworks-bounded")
    with MemlatticeClient(live_url, api_key=secret, timeout=TIMEOUT_S) as bounded:
        with pytest.raises(ForbiddenError):
            LangChainRetriever(client=bounded, namespace=seeded).invoke("Alice")
        with pytest.raises(ForbiddenError):
            MemlatticeChatMessageHistory(bounded, seeded, "s").add_user_message("hi")
        with pytest.raises(ForbiddenError):
            LlamaIndexRetriever(bounded, namespace=seeded).retrieve("Alice")
        async with AsyncMemlatticeClient(live_url, api_key=secret,
                                         timeout=TIMEOUT_S) as abounded:
            with pytest.raises(ForbiddenError):
                await LlamaIndexRetriever(async_client=abounded, namespace=seeded).aretrieve(
                    "Alice")
            with pytest.raises(ForbiddenError):
                await MemlatticeChatMessageHistory(None, seeded, "s",
                                                   async_client=abounded).aget_messages()
