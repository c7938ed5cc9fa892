"""The Python client's calls that return many memories, against the real server, on
a key limited to 5 requests a second: its cost budget is then 500 units a second
from a bucket of 500 (docs/api.md#fairness-between-tenants). Each default call is
admitted from a full bucket and leaves it out of debt, so the key's next call is
served at once; `detail="full"` still brings every field.

They used to select every field of every memory, and of both memories of each
update link: a default `memory_updates` cost 10,401, `memories` 2,501,
`memory_history` 4,801 and `summarize` 4,631; one of them put such a key seconds
into debt, and its next calls were refused (RATE_LIMITED) until it was paid.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from memlattice.core.fairness import KeyLimits
from memlattice.core.settings import FairnessSettings
from memlattice_client import AsyncMemlatticeClient, Memory, MemoryUpdate, RequestTimeoutError
from tests.integration.test_fairness import limited_key

RATE_5 = KeyLimits(rate=5, burst=5)
BUDGET = 5 * FairnessSettings().request_cost  # the key's whole cost bucket: 500
# What a brief memory carries (memlattice_client._selections.MEMORY_BRIEF).
MAIN_FIELDS = {"id", "namespace", "key", "content", "memory_type", "value", "tags",
               "metadata", "scope", "agent_id", "user_id", "session_id", "task_id",
               "status", "confidence", "sensitivity", "superseded_by", "created_at",
               "updated_at", "version"}
# A memory another one names: what `Memory` requires.
REF_FIELDS = {"id", "namespace", "content", "status", "created_at", "updated_at", "version"}


@dataclass(frozen=True)
class Stock:
    """A namespace holding more than a page: 25 memories, one of them changed three
    times, and a newer memory said to replace another."""

    namespace: str
    changed: str


@asynccontextmanager
async def client_of(session_app: tuple[Any, Any],
                    secret: str) -> AsyncIterator[AsyncMemlatticeClient]:
    """The async client on the session app; a refusal is raised, never waited out."""
    transport = httpx.ASGITransport(app=session_app[1])
    async with AsyncMemlatticeClient("http://test", api_key=secret, transport=transport,
                                     rate_limit_patience=0) as client:
        yield client


@pytest.fixture(scope="module")
async def stock(session_app: tuple[Any, Any], admin_key: str) -> Stock:
    """Written once for the module (its tests only read it), in small batches: on a
    busy machine one batch of 25 embeddings outlasted the request timeout."""
    namespace = f"test/{uuid.uuid4().hex[:12]}"
    async with client_of(session_app, admin_key) as admin:
        written: list[Memory] = []
        for start in range(0, 25, 5):
            written += await admin.write_memories([
                {"namespace": namespace, "content": f"shelf {i} of the east store holds part {i}",
                 "tags": ["stock"], "key": f"shelf-{i}", "metadata": {"row": i}}
                for i in range(start, start + 5)])
        changed = written[0]
        for version in range(1, 4):
            changed = await admin.update_memory(namespace, changed.id,
                                                summary=f"recounted {version} times")
        newer = await admin.write_memory(namespace, "part 1 moved to the west store")
        await admin.propose_update(namespace, newer.id, written[1].id, attribute="store")
        # The session's first search loads the search's models, which on a busy
        # machine outlasted the request timeout: done here, and read-only, so retried.
        for attempt in range(3):
            try:
                await admin.search(namespace, "which shelf holds part 7")
                break
            except RequestTimeoutError:
                if attempt == 2:
                    raise
    return Stock(namespace, changed.id)


Calling = Callable[[AsyncMemlatticeClient, Stock], Awaitable[Any]]


def _memories_of(result: Any) -> list[Memory]:
    """Every memory a call's result holds (a page's, a summary's, a history's, a
    search's hits' own)."""
    if hasattr(result, "items"):
        return list(result.items)
    if hasattr(result, "bullets"):
        return list(result.memories)
    found: list[Memory] = []
    for item in result:
        for name in ("memory", "newer", "older"):
            if isinstance(getattr(item, name, None), Memory):
                found.append(getattr(item, name))
    return found


# name, its default call, how many results it should see, the fields its memories carry
DEFAULT_CALLS: list[tuple[str, Calling, int, set[str]]] = [
    ("search", lambda c, s: c.search(s.namespace, "which shelf holds part 7"), 1,
     MAIN_FIELDS - {"confidence", "sensitivity", "superseded_by"}),
    ("memories", lambda c, s: c.memories(s.namespace), 20, MAIN_FIELDS),
    ("memory_history", lambda c, s: c.memory_history(s.namespace, s.changed), 4, MAIN_FIELDS),
    ("summarize", lambda c, s: c.summarize(s.namespace), 10, MAIN_FIELDS),
    ("memory_updates", lambda c, s: c.memory_updates(s.namespace), 1, REF_FIELDS),
]


def _count(result: Any) -> int:
    if hasattr(result, "items"):
        return len(result.items)
    if hasattr(result, "bullets"):
        return len(result.bullets)
    return len(result)


async def _charged(app_client: httpx.AsyncClient, key_id: str) -> float:
    """What the server charged `key_id`'s cost budget so far (its metrics)."""
    metrics = (await app_client.get("/metrics")).text
    prefix = f'memlattice_cost_charged_total{{key="{key_id}"}}'
    return sum(float(line.split()[-1]) for line in metrics.splitlines()
               if line.startswith(prefix))


@pytest.mark.parametrize(("name", "call", "seen", "fields"), DEFAULT_CALLS,
                         ids=[c[0] for c in DEFAULT_CALLS])
async def test_a_default_call_fits_a_rate_limited_keys_budget(
    session_app: tuple[Any, Any], app_client: httpx.AsyncClient, stock: Stock, name: str,
    call: Calling, seen: int, fields: set[str],
) -> None:
    """Admitted from a full bucket, it leaves the bucket out of debt: the key's next
    call is served at once (patience 0: a refusal would be raised)."""
    key_id, secret = await limited_key(session_app, stock.namespace, RATE_5)
    async with client_of(session_app, secret) as client:
        result = await call(client, stock)
        charged = await _charged(app_client, key_id)
        assert await client.namespaces() == [stock.namespace]  # not refused: no debt
    assert 0 < charged <= BUDGET, (name, charged)
    assert _count(result) >= seen, result
    memories = _memories_of(result)
    assert memories and all(m.model_fields_set == fields for m in memories), name


@pytest.mark.parametrize(("name", "call", "seen", "fields"), DEFAULT_CALLS,
                         ids=[c[0] for c in DEFAULT_CALLS])
async def test_detail_full_brings_every_field(
    session_app: tuple[Any, Any], admin_key: str, stock: Stock, name: str, call: Calling,
    seen: int, fields: set[str],
) -> None:
    everything = set(Memory.model_fields)

    async def full(client: AsyncMemlatticeClient, s: Stock) -> Any:
        method = getattr(client, name)
        if name == "search":
            return await method(s.namespace, "which shelf holds part 7", detail="full")
        if name == "memory_history":
            return await method(s.namespace, s.changed, detail="full")
        return await method(s.namespace, detail="full")

    async with client_of(session_app, admin_key) as admin:
        result = await full(admin, stock)
    assert _count(result) >= seen, result
    memories = _memories_of(result)
    assert memories and all(m.model_fields_set == everything for m in memories), name
    if name == "memory_updates":
        assert all(u.model_fields_set == set(MemoryUpdate.model_fields) for u in result)
    if name == "search":
        assert all(m.model_fields_set == everything
                   for hit in result for m in (*hit.conflicts, hit.outdated_by) if m)


async def test_a_brief_result_never_reads_a_superseded_memory_as_active(
    session_app: tuple[Any, Any], admin_key: str,
) -> None:
    """A field a brief selection leaves out reads as the model's default, and `status`
    defaults to ACTIVE: the status is selected wherever a superseded memory may come
    back (a search asking for it, both sides of an update link)."""
    namespace = f"test/{uuid.uuid4().hex[:12]}"
    async with client_of(session_app, admin_key) as admin:
        old = await admin.write_memory(namespace, "the backup job runs at 02:00 on db-3")
        new = await admin.write_memory(namespace, "the backup job now runs at 04:00 on db-3")
        await admin.propose_update(namespace, new.id, old.id, attribute="schedule", confirm=True)
        (link,) = await admin.memory_updates(namespace, statuses=["CONFIRMED"])
        hits = await admin.search(namespace, "when does the backup job run",
                                  filter={"statuses": ["ACTIVE", "SUPERSEDED"]})
    assert link.older is not None and link.older.status.value == "SUPERSEDED"
    assert link.newer is not None and link.newer.status.value == "ACTIVE"
    status = {hit.memory.id: hit.memory.status.value for hit in hits}
    assert status == {old.id: "SUPERSEDED", new.id: "ACTIVE"}
