"""The Python client's calls that return many memories, against the real server, on
a key limited to 5 requests a second: its cost budget is then 500 units a second
from a bucket of 500 (docs/api.md#fairness-between-tenants). Each default call is
admitted from a full bucket and leaves it out of debt, so the key's next call is
served at once; `detail="full"` still brings every field.

They used to select every field of every memory, and of both memories of each
update link: a default `memory_updates` cost 10,401, `memories` 2,501,
`memory_history` 4,801 and `summarize` 4,631; one of them put such a key seconds
into debt, and its next calls were refused (RATE_LIMITED) until it was paid.
The typed-record calls too, with a record's lists and a revision's `previous`
priced as pages of ten: `records` cost 10,851, `recall_facts` 2,401,
`facts_by_evidence` 2,171, each revision 2,390; a page of `iter_memories` 2,106.
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
from memlattice_client import (
    AsyncMemlatticeClient,
    FactHit,
    Memory,
    MemoryUpdate,
    Record,
    RequestTimeoutError,
)
from tests.integration._support import seeded
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
# A listed record's memory (memlattice_client._selections.RECORD_MEMORY): no `value`
# (records have none); its expiry (a fact's `valid_until`).
RECORD_MEMORY_FIELDS = MAIN_FIELDS - {"value"} | {"expires_at"}
RECORD_FIELDS = set(Record.model_fields)
# A fact has no tool calls, plan nodes or edges: recall_facts does not ask for them.
FACT_FIELDS = RECORD_FIELDS - {"tool_calls", "plan_nodes", "plan_edges"}


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


async def test_a_page_of_iter_memories_fits_a_rate_limited_keys_budget(
    session_app: tuple[Any, Any], app_client: httpx.AsyncClient, stock: Stock,
) -> None:
    """Its pages were of 100 memories (2,106 each): the first put the key in debt."""
    key_id, secret = await limited_key(session_app, stock.namespace, RATE_5)
    async with client_of(session_app, secret) as client:
        async for first in client.iter_memories(stock.namespace):
            break
        charged = await _charged(app_client, key_id)
        assert await client.namespaces() == [stock.namespace]
    assert 0 < charged <= BUDGET and first.model_fields_set == MAIN_FIELDS


# ------------------------------------------------------------------ typed records

EPISODE = {"outcome": "success", "artifacts": [{"kind": "file", "ref": "run.log"}],
           "toolGraph": [{"id": "a", "tool": "git.pull"},
                         {"id": "b", "tool": "pytest", "dependsOn": ["a"]}]}
PLAN = {"planId": "p1", "intent": "ship the release",
        "nodes": [{"id": "n1", "tool": "build"}, {"id": "n2", "tool": "test"}],
        "edges": [{"source": "n1", "target": "n2", "kind": "data"}]}


@pytest.fixture(scope="module")
async def archive(session_app: tuple[Any, Any], admin_key: str) -> str:
    """A namespace of typed records (read only): 11 facts resting on an inventory,
    then 9 episodes of two tool calls resting on a log, then a plan (the newest)."""
    namespace = f"test/{uuid.uuid4().hex[:12]}"
    async with client_of(session_app, admin_key) as admin:
        for i in range(11):
            await admin.store_fact(namespace, "location", f"part {i} lies on shelf {i}",
                                   evidence=[{"kind": "file", "ref": "inventory.csv"}],
                                   embedding=seeded(7000 + i))
        for i in range(9):
            await admin.write_record(namespace, "episodic", {**EPISODE, "environment": {"run": i}},
                                     content=f"nightly build run {i}", embedding=seeded(7100 + i))
        await admin.write_record(namespace, "plan_graph", PLAN, embedding=seeded(7200))
    return namespace


def _records_of(result: Any) -> list[Record]:
    """Every record a call's result holds (a hit's fact, a revision's both sides)."""
    if isinstance(result, Record):
        return [result]
    if isinstance(result, list):
        return [r.fact if isinstance(r, FactHit) else r for r in result]
    if hasattr(result, "previous"):
        return [result.record, *result.previous]
    return [getattr(result, "record", None) or result.fact]


# name, its default call, how many records it should see, the fields each carries
LISTINGS: list[tuple[str, Callable[[AsyncMemlatticeClient, str], Awaitable[Any]], int,
                     set[str]]] = [
    ("records", lambda c, ns: c.records(ns), 10, RECORD_FIELDS),
    ("recall_facts", lambda c, ns: c.recall_facts(ns), 10, FACT_FIELDS),
    ("facts_by_evidence", lambda c, ns: c.facts_by_evidence(ns, "run.log"), 9, RECORD_FIELDS),
]


@pytest.mark.parametrize(("name", "call", "seen", "fields"), LISTINGS,
                         ids=[c[0] for c in LISTINGS])
async def test_a_default_record_listing_fits_a_rate_limited_keys_budget(
    session_app: tuple[Any, Any], app_client: httpx.AsyncClient, archive: str, name: str,
    call: Callable[[AsyncMemlatticeClient, str], Awaitable[Any]], seen: int, fields: set[str],
) -> None:
    key_id, secret = await limited_key(session_app, archive, RATE_5)
    async with client_of(session_app, secret) as client:
        result = await call(client, archive)
        charged = await _charged(app_client, key_id)
        assert await client.namespaces() == [archive]  # not refused: no debt
    assert 0 < charged <= BUDGET, (name, charged)
    records = _records_of(result)
    assert len(records) == seen, name
    assert all(r.model_fields_set == fields for r in records), name
    assert all(r.memory.model_fields_set == RECORD_MEMORY_FIELDS for r in records), name
    # What says whether a record holds is there; so are its graph and evidence.
    assert all(r.memory.status.value == "ACTIVE" for r in records), name
    if name == "records":  # the plan, then episodes
        assert records[0].plan_nodes and records[0].plan_edges
        records = records[1:]
    assert all(r.evidence for r in records), name
    assert all(len(r.tool_calls) == 2 for r in records if r.record_type == "episodic")
    if name == "recall_facts":
        assert all(h.evidence == h.fact.evidence for h in result)


@pytest.mark.parametrize(("name", "call", "seen", "fields"), LISTINGS,
                         ids=[c[0] for c in LISTINGS])
async def test_detail_full_brings_every_field_of_each_record(
    session_app: tuple[Any, Any], admin_key: str, archive: str, name: str,
    call: Callable[[AsyncMemlatticeClient, str], Awaitable[Any]], seen: int, fields: set[str],
) -> None:
    async with client_of(session_app, admin_key) as admin:
        method = getattr(admin, name)
        args = (archive, "run.log") if name == "facts_by_evidence" else (archive,)
        records = _records_of(await method(*args, detail="full"))
    assert len(records) == seen, name
    assert all(r.model_fields_set == RECORD_FIELDS for r in records), name
    assert all(r.memory.model_fields_set == set(Memory.model_fields) for r in records), name


def _spo(obj: str) -> dict[str, Any]:
    return {"subject": "cache", "predicate": "ttl", "object": obj}


async def _claims(admin: AsyncMemlatticeClient, ns: str, *objects: str) -> list[str]:
    """Semantic records written by the admin, for the limited key to revise."""
    return [(await admin.write_record(ns, "semantic", _spo(o), embedding=seeded(
        7400 + int(o[:-1])))).record.memory.id for o in objects]


async def _record(a: AsyncMemlatticeClient, c: AsyncMemlatticeClient, ns: str) -> Any:
    (i,) = await _claims(a, ns, "60s")
    return await c.record(ns, i)


async def _update(a: AsyncMemlatticeClient, c: AsyncMemlatticeClient, ns: str) -> Any:
    i = (await a.write_record(ns, "working", {"threadId": "t", "state": "planning"})).record
    return await c.update_record(ns, i.memory.id, "working", {"threadId": "t", "state": "done"})


async def _supersede(a: AsyncMemlatticeClient, c: AsyncMemlatticeClient, ns: str) -> Any:
    (i,) = await _claims(a, ns, "60s")
    return await c.supersede_record(ns, i, "semantic", _spo("90s"), embedding=seeded(7302))


async def _fork(a: AsyncMemlatticeClient, c: AsyncMemlatticeClient, ns: str) -> Any:
    (i,) = await _claims(a, ns, "60s")
    conditional = {"kind": "conditional", "conditions": ["in staging"]}
    return await c.fork_record(ns, i, "semantic", {**_spo("30s"), "validity": conditional},
                               embedding=seeded(7303))


async def _contest(a: AsyncMemlatticeClient, c: AsyncMemlatticeClient, ns: str) -> Any:
    i, j = await _claims(a, ns, "60s", "90s")
    return await c.contest_record(ns, i, j)


async def _retract(a: AsyncMemlatticeClient, c: AsyncMemlatticeClient, ns: str) -> Any:
    (i,) = await _claims(a, ns, "60s")
    return await c.retract_record(ns, i)


async def _merge(a: AsyncMemlatticeClient, c: AsyncMemlatticeClient, ns: str) -> Any:
    ids = await _claims(a, ns, "60s", "90s")
    return await c.merge_records(ns, ids, "semantic", _spo("75s"), embedding=seeded(7304))


Whole = Callable[[AsyncMemlatticeClient, AsyncMemlatticeClient, str], Awaitable[Any]]
# name, (admin, the limited key's client, namespace) -> its default call's result,
# how many records that holds
SINGLE_CALLS: list[tuple[str, Whole, int]] = [
    ("record", _record, 1),
    ("write_record", lambda a, c, ns: c.write_record(ns, "episodic", EPISODE,
                                                     embedding=seeded(7300)), 1),
    ("update_record", _update, 1),
    ("store_fact", lambda a, c, ns: c.store_fact(ns, "location", "the spare key is in the drawer",
                                                 embedding=seeded(7301)), 1),
    ("supersede_record", _supersede, 2), ("fork_record", _fork, 2),
    ("contest_record", _contest, 2), ("retract_record", _retract, 1),
    ("merge_records", _merge, 3),
]


@pytest.mark.parametrize(("name", "call", "seen"), SINGLE_CALLS,
                         ids=[c[0] for c in SINGLE_CALLS])
async def test_a_call_of_one_record_brings_it_whole_within_the_budget(
    session_app: tuple[Any, Any], app_client: httpx.AsyncClient, admin_key: str,
    namespace: str, name: str, call: Whole, seen: int,
) -> None:
    """A revision's `previous` was priced as ten records: each cost 2,390."""
    key_id, secret = await limited_key(session_app, namespace, RATE_5)
    async with client_of(session_app, admin_key) as admin, \
            client_of(session_app, secret) as client:
        result = await call(admin, client, namespace)
        charged = await _charged(app_client, key_id)
        assert await client.namespaces() == [namespace]  # not refused: no debt
    assert 0 < charged <= BUDGET, (name, charged)
    records = _records_of(result)
    assert len(records) == seen, name
    assert all(r.model_fields_set == RECORD_FIELDS for r in records), name
    assert all(r.memory.model_fields_set == set(Memory.model_fields) for r in records), name
