"""The Python client against the real service: every method, sync and async.

The async client runs over `httpx.ASGITransport` against the session's app;
the sync client over real HTTP against a uvicorn server in a thread (sync httpx
has no ASGI transport). One scenario drives both, so they cannot drift apart.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from memlattice.core.settings import Settings
from memlattice.server.app import create_app
from memlattice_client import (
    AsyncMemlatticeClient,
    EdgeType,
    ForbiddenError,
    MemlatticeClient,
    Memory,
    MemoryEventKind,
    NotFoundError,
    RecordType,
    SearchHit,
    Status,
    UnauthenticatedError,
    ValidationError,
    VersionConflictError,
    estimate_tokens,
)
from tests._live import serve_in_thread

Caller = Callable[..., Awaitable[Any]]


@pytest.fixture(scope="module")
def live_url(settings: Settings) -> Iterator[str]:
    """A second app, with API keys required, on a real socket."""
    with serve_in_thread(create_app(settings.model_copy(update={"auth_mode": "keys"}))) as url:
        yield url


@pytest.fixture
async def async_client(session_app: tuple[Any, Any],
                       admin_key: str) -> AsyncIterator[AsyncMemlatticeClient]:
    transport = httpx.ASGITransport(app=session_app[1])
    async with AsyncMemlatticeClient("http://test", transport=transport, api_key=admin_key,
                                     actor="py-async") as client:
        yield client


@pytest.fixture
def sync_client(live_url: str, admin_key: str) -> Iterator[MemlatticeClient]:
    with MemlatticeClient(live_url, api_key=admin_key, actor="py-sync") as client:
        yield client


def async_caller(client: AsyncMemlatticeClient) -> Caller:
    async def call(method: str, *args: Any, **kwargs: Any) -> Any:
        return await getattr(client, method)(*args, **kwargs)

    return call


def sync_caller(client: MemlatticeClient) -> Caller:
    async def call(method: str, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(client, method), *args, **kwargs)

    return call


async def scenario(call: Caller, ns: str, actor: str) -> None:
    """Every client method once, checking what came back is typed and right."""
    alice = await call("write_memory", ns, "Alice moved to Lisbon in 2023", key="alice.city",
                       tags=["travel", "alice"], metadata={"source_doc": 7}, scope="user",
                       user_id="u1")
    assert isinstance(alice, Memory) and alice.version == 1
    assert alice.created_at.tzinfo is not None and alice.metadata == {"source_doc": 7}
    batch = await call("write_memories", [
        {"namespace": ns, "content": f"Note {i} about the Lisbon office", "tags": ["office"]}
        for i in range(5)])
    assert len(batch) == 5 and all(isinstance(m, Memory) for m in batch)
    got = await call("memory", ns, alice.id)
    assert got.content == alice.content and got.key == "alice.city"

    updated = await call("update_memory", ns, alice.id, expected_version=1,
                         summary="Alice lives in Lisbon")
    assert updated.version == 2 and updated.summary == "Alice lives in Lisbon"
    with pytest.raises(VersionConflictError) as conflict:
        await call("update_memory", ns, alice.id, expected_version=1, summary="stale")
    assert conflict.value.code == "VERSION_CONFLICT" and conflict.value.path == ["updateMemory"]
    assert (await call("memory", ns, alice.id)).summary == "Alice lives in Lisbon"

    page = await call("memories", ns, first=2, tags_any=["office"])
    assert page.total_count == 5 and len(page.items) == 2 and page.has_next_page
    second = await call("memories", ns, first=2, after=page.end_cursor, tags_any=["office"])
    assert not {m.id for m in page.items} & {m.id for m in second.items}

    swapped = await call("supersede_memory", ns, alice.id, "Alice moved to Porto in 2025",
                         expected_version=2, tags=["travel", "alice"], scope="user",
                         user_id="u1")
    assert swapped.previous.status is Status.SUPERSEDED and swapped.current.version == 1
    current = swapped.current

    edge = await call("add_edge", ns, batch[0].id, current.id, EdgeType.SUPPORTS,
                      metadata={"why": "same city"})
    assert edge.type is EdgeType.SUPPORTS and edge.metadata == {"why": "same city"}
    more = await call("add_edges", ns, [
        {"source_id": batch[1].id, "target_id": batch[2].id, "type": "related"},
        {"source_id": batch[2].id, "target_id": batch[3].id, "type": "RELATED"}])
    assert [e.type for e in more] == [EdgeType.RELATED, EdgeType.RELATED]
    out = await call("edges", ns, batch[2].id, types=["RELATED"], direction="out")
    assert [(e.source_id, e.target_id) for e in out] == [(batch[2].id, batch[3].id)]
    assert await call("delete_edge", ns, more[1].id) is True
    assert await call("edges", ns, batch[2].id, direction="OUT") == []

    hits = await call("search", ns, "where does Alice live?", user_id="u1",
                      scope="user", limit=3)
    assert hits and all(isinstance(h, SearchHit) for h in hits)
    assert hits[0].memory.id == current.id and hits[0].score > 0
    assert hits[0].similarity_score is not None or hits[0].fts_score is not None

    block = await call("recall_for_prompt", "where does Alice live?", 60, namespace=ns,
                       user_id="u1")
    assert "Alice moved to Porto" in block and estimate_tokens(block) <= 60

    forgotten = await call("forget", ns, tag="office", query="Note")
    assert forgotten.count == 5 and set(forgotten.ids) == {m.id for m in batch}
    assert (await call("memories", ns, tags_any=["office"])).total_count == 0

    assert await call("delete_memory", ns, current.id) is True
    with pytest.raises(NotFoundError):
        await call("memory", ns, current.id)
    trail = await call("audit_trail", ns, alice.id)
    assert [a.operation for a in trail][:2] == ["write", "update"]
    assert all(a.actor == actor for a in trail) and isinstance(trail[0].at, datetime)

    assert await call("namespace_config", ns) is None
    config = await call("configure_namespace", ns, backend="lexical", decay_half_life_days=30)
    assert config.version == 1 and config.backend.value == "LEXICAL"
    assert (await call("namespace_config", ns)).decay_half_life_days == 30
    status = await call("embedding_status", ns)
    assert await call("namespaces", prefix=ns) == [ns]
    assert status.namespace == ns and status.active_dimension > 0

    with pytest.raises(ValidationError) as bad:
        await call("write_memory", ns, "   ")
    assert bad.value.code == "VALIDATION"
    assert (await call("memories", ns, statuses=["ACTIVE", "SUPERSEDED", "FORGOTTEN"])
            ).total_count == 6  # nothing was written by the bad call


async def test_async_client_every_method(async_client: AsyncMemlatticeClient,
                                         namespace: str, admin_actor: str) -> None:
    # The audit trail names the key first, then the actor the client declares.
    await scenario(async_caller(async_client), namespace,
                   admin_actor.removesuffix("tester") + "py-async")


async def test_sync_client_every_method(sync_client: MemlatticeClient, namespace: str,
                                        admin_actor: str) -> None:
    await scenario(sync_caller(sync_client), namespace,
                   admin_actor.removesuffix("tester") + "py-sync")


def test_sync_iter_memories_pages_through_everything(sync_client: MemlatticeClient) -> None:
    ns = f"test/{uuid.uuid4().hex[:12]}"
    written = sync_client.write_memories(
        [{"namespace": ns, "content": f"fact {i}", "now": datetime(2026, 1, 1 + i, tzinfo=UTC)}
         for i in range(7)])
    seen = [m.id for m in sync_client.iter_memories(ns, page_size=3)]
    assert seen == [m.id for m in reversed(written)]  # newest first, no gaps, no repeats


async def test_async_iter_memories_and_tenant_isolation(
    async_client: AsyncMemlatticeClient, namespace: str
) -> None:
    other = f"test/{uuid.uuid4().hex[:12]}"
    await async_client.write_memories([{"namespace": namespace, "content": f"m{i}"}
                                       for i in range(4)])
    secret = await async_client.write_memory(other, "another tenant's secret")
    seen = [m async for m in async_client.iter_memories(namespace, page_size=3)]
    assert len(seen) == 4 and secret.id not in {m.id for m in seen}
    with pytest.raises(NotFoundError):
        await async_client.memory(namespace, secret.id)


async def test_keys_bound_to_a_namespace_and_bad_keys(session_app: tuple[Any, Any],
                                                     namespace: str) -> None:
    from memlattice.graph.keys import ApiKeyGraph
    from memlattice.server.app import runtime_of
    from memlattice.services.apikeys import KeySpec, create_key

    app, asgi = session_app
    _, key = await create_key(ApiKeyGraph(runtime_of(app).client),
                              KeySpec(name="client-test", namespaces=(namespace,), can_write=True))
    transport = httpx.ASGITransport(app=asgi)
    async with AsyncMemlatticeClient("http://test", transport=transport, api_key=key) as client:
        mine = await client.write_memory(namespace, "bound key writes here")
        assert (await client.memory(namespace, mine.id)).id == mine.id
        with pytest.raises(ForbiddenError) as denied:
            await client.write_memory(f"{namespace}-other", "not here")
        assert denied.value.code == "FORBIDDEN"
    async with AsyncMemlatticeClient("http://test", transport=transport,
                                     api_key="mlk_000000000000_" + "x" * 40) as client:
        with pytest.raises(UnauthenticatedError):
            await client.memory(namespace, mine.id)


async def knowledge_scenario(call: Caller, ns: str) -> None:
    """Every typed-record, fact and summary method once."""
    def spo(s: str, p: str, o: str) -> dict[str, Any]:
        return {"subject": s, "predicate": p, "object": o}

    episode = await call("write_record", ns, "episodic", {
        "outcome": "success", "artifacts": [{"kind": "file", "ref": "deploy.log"}],
        "toolGraph": [{"id": "a", "tool": "git.pull"}, {"id": "b", "tool": "pytest",
                                                         "dependsOn": ["a"]}]})
    assert episode.record.record_type.upper() == "EPISODIC"
    assert [t.id for t in episode.record.tool_calls] == ["a", "b"]
    working = await call("write_record", ns, RecordType.WORKING,
                         {"threadId": "t1", "state": "planning"}, task_id="task-1",
                         scope="task")
    wid = working.record.memory.id
    moved = await call("update_record", ns, wid, "working",
                       {"threadId": "t1", "state": "executing"}, expected_version=1)
    assert moved.payload["state"] == "executing" and moved.memory.version == 2
    with pytest.raises(VersionConflictError):
        await call("update_record", ns, wid, "working", {"threadId": "t1", "state": "done"},
                   expected_version=1)

    api = (await call("write_record", ns, "semantic", spo("api", "version", "v1"))).record
    nxt = await call("supersede_record", ns, api.memory.id, "semantic",
                     spo("api", "version", "v2"), expected_version=1)
    assert nxt.previous[0].memory.id == api.memory.id
    fork = await call("fork_record", ns, nxt.record.memory.id, "semantic",
                      {**spo("api", "version", "v2-beta"),
                       "validity": {"kind": "conditional", "conditions": ["in staging"]}})
    assert fork.record.memory.id != nxt.record.memory.id
    rival = (await call("write_record", ns, "semantic", spo("cache", "ttl", "60s"))).record
    other = (await call("write_record", ns, "semantic", spo("cache", "ttl", "90s"))).record
    contested = await call("contest_record", ns, rival.memory.id, other.memory.id,
                           reason="measured")
    assert contested.record.revision_status in ("CONTESTED", "contested")
    merged = await call("merge_records", ns, [rival.memory.id, other.memory.id], "semantic",
                        spo("cache", "ttl", "75s"))
    assert {r.memory.id for r in merged.previous} == {rival.memory.id, other.memory.id}
    retracted = await call("retract_record", ns, fork.record.memory.id, reason="wrong")
    assert retracted.retracted_at is not None
    assert (await call("record", ns, episode.record.memory.id)).payload["outcome"] == "success"
    listed = await call("records", ns, types=["working"])
    assert [r.memory.id for r in listed] == [wid]
    discarded = await call("discard_task", ns, "task-1")
    assert discarded.ids == (wid,)

    stored = await call("store_fact", ns, "location", "Alice lives in Lisbon",
                        confidence=0.9, evidence=[{"kind": "memory", "ref": "m-1"}])
    assert stored.created and stored.fact.kind == "location"
    again = await call("store_fact", ns, "location", "Alice lives in Lisbon")
    assert not again.created and again.fact.memory.id == stored.fact.memory.id
    facts = await call("recall_facts", ns, "where does Alice live?", kind="location")
    assert facts[0].fact.memory.id == stored.fact.memory.id and facts[0].score > 0
    assert [r.memory.id for r in await call("facts_by_evidence", ns, "m-1")] == [
        stored.fact.memory.id]
    gone = await call("invalidate_facts", ns, kind="location")
    assert gone.ids == (stored.fact.memory.id,)
    assert await call("recall_facts", ns, "Alice", kind="location") == []

    report = await call("consolidate", ns)
    assert report.namespace == ns and report.decayed >= 0

    summary = await call("summarize", ns, limit=3)
    assert 1 <= len(summary.bullets) <= 3 and summary.text
    assert {b.memory_id for b in summary.bullets} <= {m.id for m in summary.memories}


async def test_async_client_knowledge_methods(async_client: AsyncMemlatticeClient,
                                              namespace: str) -> None:
    await knowledge_scenario(async_caller(async_client), namespace)


async def test_sync_client_knowledge_methods(sync_client: MemlatticeClient,
                                             namespace: str) -> None:
    await knowledge_scenario(sync_caller(sync_client), namespace)


async def test_async_client_memory_events(session_app: tuple[Any, Any], admin_key: str,
                                          namespace: str) -> None:
    from httpx_ws.transport import ASGIWebSocketTransport

    transport = ASGIWebSocketTransport(app=session_app[1])
    async with AsyncMemlatticeClient("http://test", transport=transport,
                                     api_key=admin_key) as client:
        async with client.memory_events(namespace, kinds=["written", "forgotten"],
                                        timeout=10) as events:
            assert events.subscribed.kind is MemoryEventKind.SUBSCRIBED
            first = await client.write_memory(namespace, "alpha", tags=["x"])
            await client.update_memory(namespace, first.id, summary="not subscribed to")
            second = await client.write_memory(namespace, "beta")
            await client.forget(namespace, id=first.id)
            got = []
            async for event in events:
                got.append(event)
                if len(got) == 3:
                    break
        assert [(e.kind, e.memory_id) for e in got] == [
            (MemoryEventKind.WRITTEN, first.id), (MemoryEventKind.WRITTEN, second.id),
            (MemoryEventKind.FORGOTTEN, first.id)]
        assert got[0].memory is not None and got[0].memory.content == "alpha"
        assert got[0].seq < got[1].seq < got[2].seq
        # Resuming after the first event's cursor delivers what followed it.
        async with client.memory_events(namespace, after=got[0].cursor,
                                        timeout=10) as resumed:
            assert (resumed.subscribed.cursor, resumed.subscribed.missed) == (got[0].cursor, 0)
            again = []
            async for event in resumed:
                again.append(event)
                if event.memory_id == first.id and event.kind is MemoryEventKind.FORGOTTEN:
                    break
        assert [(e.kind, e.memory_id) for e in again] == [
            (MemoryEventKind.UPDATED, first.id), (MemoryEventKind.WRITTEN, second.id),
            (MemoryEventKind.FORGOTTEN, first.id)]
    async with AsyncMemlatticeClient("http://test", transport=transport,
                                     api_key="mlk_000000000000_" + "y" * 40) as client:
        with pytest.raises(UnauthenticatedError):
            async with client.memory_events(namespace, timeout=10):
                pass


async def test_a_sessions_keys_through_the_client(
        async_client: AsyncMemlatticeClient, namespace: str) -> None:
    done = await async_client.ingest_conversation(namespace, "chat-9", [
        {"speaker": "Ana", "content": "The adoption agency called back.",
         "at": datetime(2023, 5, 8, 10, tzinfo=UTC)},
        {"speaker": "Ben", "content": "Great news about the adoption agency!",
         "at": datetime(2023, 5, 8, 10, 1, tzinfo=UTC)}])
    assert done.session is not None
    assert done.session.entities == ["ana", "ben"]
    assert done.session.keyphrases[0] == "adoption agency"
    assert done.session.started_at == datetime(2023, 5, 8, 10, tzinfo=UTC)
    assert await async_client.session(namespace, "chat-9") == done.session
    assert await async_client.session(namespace, "chat-0") is None


async def test_a_writer_is_shown_what_its_memory_may_replace_and_says_so(
    async_client: AsyncMemlatticeClient, namespace: str,
) -> None:
    old = await async_client.write_memory(namespace, "My go-to drink is a flat white every"
                                          " morning.", now=datetime(2025, 1, 10, tzinfo=UTC))
    new = await async_client.write_memory(namespace, "Mornings are green tea for me these days.",
                                          now=datetime(2025, 6, 2, tzinfo=UTC))
    (offer,) = await async_client.may_replace(namespace, new.id)
    assert offer.memory.id == old.id and offer.update is None
    assert -1.0 <= offer.similarity <= 1.0
    link = await async_client.propose_update(namespace, new.id, old.id, confirm=True,
                                             attribute="morning drink")
    assert link.status.value == "CONFIRMED"
    assert link.proposed_by and link.disputed_by is None
    assert link.older is not None and link.older.superseded_by == new.id
    assert await async_client.may_replace(namespace, new.id) == []  # superseded: no offer
