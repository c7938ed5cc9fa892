"""Faults: Neo4j stops, or dies with kill -9 under write load, and comes back.

These tests stop and kill the first spare Neo4j (tests/integration/conftest.py,
its own home and port), emptied first and running again afterwards; the rest of
the suite never notices. What they hold the service to:

* with Neo4j down, requests fail fast with UNAVAILABLE (HTTP 200 on /graphql, also
  when the API key cannot be checked) and /readyz says 503: the driver gives up by
  itself, inside the request budget, rather than waiting for Neo4j;
* when Neo4j returns, the same running service recovers by itself;
* every acknowledged write survives kill -9, and nothing is half-written:
  a batch is all there or not at all, a memory never lacks its audit entry,
  an acknowledged update's version is never lost.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from memlattice import neo4j_local
from memlattice.core.settings import (
    EmbeddingSettings,
    LimitsSettings,
    LocalNeo4jSettings,
    Neo4jSettings,
    Settings,
)
from memlattice.graph.client import GraphClient
from tests._spares import SPARE_PASSWORD as PASSWORD
from tests.integration._apps import app_with
from tests.integration._faults import (
    DEADLINE_S,
    answer_cap_s,
    answered,
    operation,
    until,
    until_served,
)
from tests.integration._stores import client_for, reset
from tests.integration._support import seeded

WRITE = "mutation($i: MemoryInput!) { writeMemory(input: $i) { id version } }"
WRITE_MANY = "mutation($is: [MemoryInput!]!) { writeMemories(inputs: $is) { id } }"
UPDATE = ("mutation($ns: String!, $id: ID!, $p: MemoryPatchInput!, $v: Int) {"
          " updateMemory(namespace: $ns, id: $id, patch: $p, expectedVersion: $v) { version } }")


@pytest.fixture(scope="module")
async def private_neo4j(spare_neo4j: LocalNeo4jSettings,
                        spare_settings: Settings) -> AsyncIterator[LocalNeo4jSettings]:
    """The first spare Neo4j, emptied; started again afterwards if a test left it down."""
    client = client_for(spare_settings)
    try:
        await reset(client)
    finally:
        await client.close()
    yield spare_neo4j
    await asyncio.to_thread(neo4j_local.start, spare_neo4j, PASSWORD)


# The timeouts the service runs with here (the shipped defaults, named so that the
# tests can reason from them). With Neo4j down the driver gives up by itself once
# MAX_RETRY_S has passed since its first failed attempt, after the back-off under way
# (1, 2, 4 s, +-20 %): 3 to 8 s, each attempt bounded by CONNECT_S. The request budget
# is well above that: a request the driver abandons is answered UNAVAILABLE, one that
# waits on Neo4j until the budget cancels it is answered TIMEOUT.
CONNECT_S, MAX_RETRY_S = 2.0, 3.0
LIMITS = LimitsSettings(request_timeout_s=30.0)
# Any one answer comes within this, whatever Neo4j does (tests.integration._faults).
ANSWER_CAP_S = answer_cap_s(LIMITS)


@pytest.fixture(scope="module")
def fault_settings(private_neo4j: LocalNeo4jSettings) -> Settings:
    return Settings(
        environment="test",
        neo4j=Neo4jSettings(uri=neo4j_local.bolt_uri(private_neo4j), password=PASSWORD,
                            connection_timeout_s=CONNECT_S, max_retry_time_s=MAX_RETRY_S),
        embedding=EmbeddingSettings(provider="none", dimension=256),
        limits=LIMITS,
    )


@pytest.fixture(scope="module")
async def service(fault_settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with app_with(fault_settings) as client:
        yield client


@pytest.fixture(scope="module")
async def raw_graph(fault_settings: Settings, service: httpx.AsyncClient
                    ) -> AsyncIterator[GraphClient]:
    neo4j = fault_settings.neo4j
    client = GraphClient.connect(neo4j.uri or "", neo4j.user, neo4j.password.get_secret_value(),
                                 neo4j.database)
    yield client
    await client.close()


async def call(http: httpx.AsyncClient, query: str, variables: dict[str, Any]
               ) -> dict[str, Any]:
    response = await answered(
        http.post("/graphql", json={"query": query, "variables": variables}),
        within_s=ANSWER_CAP_S, what=operation(query))
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def memory(namespace: str, id: str, text: str) -> dict[str, Any]:
    return {"namespace": namespace, "id": id, "content": text, "tags": ["fault"],
            "embedding": seeded(hash(id) % 100_000)}


async def until_writes_succeed(http: httpx.AsyncClient, namespace: str) -> float:
    """Seconds until a write succeeds again through the same running service (Neo4j
    started again); a failure when it never does (tests.integration._faults)."""
    _, took = await until_served(
        lambda: call(http, WRITE, {"i": memory(namespace, str(uuid.uuid4()), "probe")}),
        what="a write once Neo4j is back", answer_within_s=ANSWER_CAP_S)
    return took


async def get(http: httpx.AsyncClient, path: str, **kwargs: Any) -> httpx.Response:
    return await answered(http.get(path, **kwargs), within_s=ANSWER_CAP_S, what=path)


METRICS_TOKEN = "metrics-token-" + "0123456789abcdef"


@pytest.fixture(scope="module")
async def keyed_service(fault_settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The same database behind API keys, with a metrics token."""
    async with app_with(fault_settings, auth_mode="keys",
                        metrics_token=SecretStr(METRICS_TOKEN)) as client:
        yield client


async def test_down_fails_fast_then_recovers(service: httpx.AsyncClient,
                                             keyed_service: httpx.AsyncClient,
                                             private_neo4j: LocalNeo4jSettings,
                                             namespace: str) -> None:
    ok = await call(service, WRITE, {"i": memory(namespace, str(uuid.uuid4()), "before")})
    assert not ok.get("errors"), ok
    await asyncio.to_thread(neo4j_local.stop, private_neo4j)
    try:
        for query, variables in [
            (WRITE, {"i": memory(namespace, str(uuid.uuid4()), "while down")}),
            ("query($ns: String!) { memories(filter: {namespace: $ns}) { totalCount } }",
             {"ns": namespace}),
        ]:
            # Fails fast: answered at all (`call` waits ANSWER_CAP_S, so a hang fails),
            # and UNAVAILABLE, not TIMEOUT: the driver gave up by itself inside the
            # request budget instead of waiting on Neo4j until the budget ran out. How
            # fast is a figure, printed; a seconds bound here would only measure how
            # busy the machine is.
            started = time.monotonic()
            body = await call(service, query, variables)
            elapsed = time.monotonic() - started
            error = body["errors"][0]
            assert error["extensions"]["code"] == "UNAVAILABLE", body
            assert error["extensions"]["retryable"] is True
            print(f"\n# Neo4j down: UNAVAILABLE after {elapsed:.2f}s (the driver retries for"
                  f" {MAX_RETRY_S:g}s; the request budget is {LIMITS.request_timeout_s:g}s)")
        ready = await get(service, "/readyz")
        assert ready.status_code == 503
        assert ready.json()["code"] == "UNAVAILABLE"
        metrics = (await get(service, "/metrics")).text
        assert 'memlattice_errors_total{code="UNAVAILABLE"}' in metrics
        # Behind keys, the metrics token is checked without the database: a scraper
        # still gets its figures now; an API key cannot be checked (503).
        scraped = await get(keyed_service, "/metrics",
                            headers={"authorization": f"Bearer {METRICS_TOKEN}"})
        assert scraped.status_code == 200 and "memlattice_requests_in_flight" in scraped.text
        keyed = await get(keyed_service, "/metrics",
                          headers={"authorization": "Bearer mlk_0123456789ab_" + "x" * 43})
        assert keyed.status_code == 503
        # On /graphql, UNAVAILABLE is HTTP 200 whether it comes from checking the key
        # (it was 503) or from running the operation (always 200).
        checked = await answered(keyed_service.post(
            "/graphql", json={"query": "{ __typename }"},
            headers={"authorization": "Bearer mlk_0123456789ab_" + "x" * 43}),
            within_s=ANSWER_CAP_S, what="a key check")
        assert checked.status_code == 200, checked.text
        assert checked.json()["errors"][0]["extensions"]["code"] == "UNAVAILABLE"
        assert checked.json()["errors"][0]["extensions"]["retryable"] is True
    finally:
        await asyncio.to_thread(neo4j_local.start, private_neo4j, PASSWORD)
    recovered = await until_writes_succeed(service, namespace)
    print(f"# Neo4j back: first write succeeded {recovered:.2f}s after start returned")
    assert (await get(service, "/readyz")).status_code == 200


@dataclass
class Ledger:
    """What the writers were told: acknowledged ids, and attempts with no answer."""

    acked: set[str] = field(default_factory=set)
    unknown: set[str] = field(default_factory=set)
    batches_acked: list[list[str]] = field(default_factory=list)
    batches_unknown: list[list[str]] = field(default_factory=list)
    versions_acked: list[int] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)


async def writer(http: httpx.AsyncClient, namespace: str, ledger: Ledger, stop: asyncio.Event,
                 worker: int) -> None:
    n = 0
    while not stop.is_set():
        n += 1
        if n % 4 == 0:
            ids = [str(uuid.uuid4()) for _ in range(5)]
            # Distinct contents: the same content twice would be stored once (dedup).
            body = await call(http, WRITE_MANY, {"is": [
                memory(namespace, i, f"w{worker} b{n} m{k}") for k, i in enumerate(ids)]})
            (ledger.batches_unknown if body.get("errors") else ledger.batches_acked).append(ids)
        else:
            id = str(uuid.uuid4())
            body = await call(http, WRITE, {"i": memory(namespace, id, f"w{worker} n{n}")})
            (ledger.unknown if body.get("errors") else ledger.acked).add(id)
        if body.get("errors"):
            code = body["errors"][0]["extensions"]["code"]
            ledger.failures[code] = ledger.failures.get(code, 0) + 1
            await asyncio.sleep(0.2)


async def updater(http: httpx.AsyncClient, namespace: str, id: str, ledger: Ledger,
                  stop: asyncio.Event) -> None:
    version = 1
    while not stop.is_set():
        body = await call(http, UPDATE, {"ns": namespace, "id": id,
                                         "p": {"summary": f"version {version + 1}"},
                                         "v": version})
        if body.get("errors"):
            code = body["errors"][0]["extensions"]["code"]
            ledger.failures[code] = ledger.failures.get(code, 0) + 1
            await asyncio.sleep(0.2)
            reread = await call(http, "query($ns: String!, $id: ID!) { memory(namespace: $ns,"
                                " id: $id) { version } }", {"ns": namespace, "id": id})
            if not reread.get("errors"):
                version = reread["data"]["memory"]["version"]
            continue
        version = body["data"]["updateMemory"]["version"]
        ledger.versions_acked.append(version)


async def test_kill_9_under_write_load_loses_no_acknowledged_write(
    service: httpx.AsyncClient, raw_graph: GraphClient, private_neo4j: LocalNeo4jSettings,
    namespace: str,
) -> None:
    target = str(uuid.uuid4())
    assert not (await call(service, WRITE, {"i": memory(namespace, target, "version 1")})
                ).get("errors")
    ledger = Ledger()
    stop = asyncio.Event()
    tasks = [asyncio.create_task(writer(service, namespace, ledger, stop, w)) for w in range(8)]
    tasks.append(asyncio.create_task(updater(service, namespace, target, ledger, stop)))

    def state() -> str:
        return (f"{len(ledger.acked)} writes and {len(ledger.versions_acked)} updates"
                f" acknowledged, failures {ledger.failures}")

    def crashed() -> bool:  # a writer ends only when stopped, or with an error
        return any(task.done() for task in tasks)

    try:
        # Kill mid-load, not while cold: some writes and some updates acknowledged first.
        # However long that takes on this machine; reaching the deadline means the
        # writes never succeed.
        await until(lambda: crashed() or (len(ledger.acked) >= 30
                                          and len(ledger.versions_acked) >= 2),
                    within_s=DEADLINE_S, failure=lambda: f"the load never got going: {state()}")
        if not crashed():
            pid = int((private_neo4j.home / "run" / "memlattice-neo4j.pid").read_text())
            os.kill(pid, signal.SIGKILL)
            # Until the writers have met the dead Neo4j: the requests under way are
            # answered (UNAVAILABLE) within their budget, so within the answer cap.
            await until(lambda: crashed() or ledger.failures.get("UNAVAILABLE", 0) > 0,
                        within_s=ANSWER_CAP_S,
                        failure=lambda: f"no request failed after kill -9: {state()}")
    finally:
        stop.set()
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    assert ledger.failures.get("UNAVAILABLE", 0) > 0, ledger.failures
    # UNAVAILABLE only: the driver gives up on the dead Neo4j by itself, in seconds,
    # far inside the request budget (TIMEOUT would mean it waited until cancelled).
    assert set(ledger.failures) <= {"UNAVAILABLE"}, ledger.failures

    await asyncio.to_thread(neo4j_local.start, private_neo4j, PASSWORD)
    await until_writes_succeed(service, namespace)
    print(f"\n# kill -9: {len(ledger.acked)} single and {len(ledger.batches_acked)} batch writes"
          f" acknowledged, {len(ledger.unknown)} single and {len(ledger.batches_unknown)} batch"
          f" unanswered, {len(ledger.versions_acked)} updates acknowledged; {ledger.failures}")

    all_ids = (ledger.acked | ledger.unknown
               | {i for b in ledger.batches_acked + ledger.batches_unknown for i in b})
    records = await raw_graph.read((
        ("UNWIND $ids AS id OPTIONAL MATCH (m:Memory {id: id})"
        " OPTIONAL MATCH (a:AuditEntry {memoryId: id, operation: 'write'})"
        " RETURN id, m.content AS content, m.embedding IS NOT NULL AS embedded,"
        " m.tags AS tags, count(a) AS audits"), {"ids": sorted(all_ids)}))
    found = {r["id"]: r for r in records if r["content"] is not None}
    for r in records:
        # Present means complete, with its audit entry; absent means no audit entry either.
        if r["content"] is not None:
            assert r["embedded"] and r["tags"] == ["fault"] and r["audits"] == 1, dict(r)
        else:
            assert r["audits"] == 0, dict(r)
    lost = ledger.acked - set(found)
    assert not lost, f"{len(lost)} acknowledged writes lost"
    for batch in ledger.batches_acked:
        assert all(i in found for i in batch)
    for batch in ledger.batches_unknown:
        present = sum(i in found for i in batch)
        assert present in (0, len(batch)), f"a batch is half-written ({present}/{len(batch)})"
    versions = await raw_graph.read((
        "MATCH (m:Memory {id: $id}) RETURN m.version AS v, m.summary AS s", {"id": target}))
    assert ledger.versions_acked, "no update was acknowledged before the kill"
    last = max(ledger.versions_acked)
    stored = versions[0]["v"]
    assert stored in (last, last + 1), (stored, last)
    assert versions[0]["s"] == f"version {stored}"
