"""Graceful shutdown: SIGTERM mid-request lets the request finish, then drains the rest.

A real uvicorn process (served by `memlattice.server.serving.run_server`, like
`memlattice serve`) on the suite's Neo4j. A search held at a gate (the `slow`
reranker of `tests.integration._server`) is in flight when SIGTERM arrives:
new connections must be refused, its answer must still arrive complete once
released, the process must exit 0, and the access count that search recorded
must reach Neo4j (the lifespan flushes it on the way out).

Nothing here depends on how fast the machine is: the test waits for each
state (the search at the gate, the listener closed) instead of sleeping for a
guessed time, and the bounds are generous deadlines, not measurements.
"""

from __future__ import annotations

import asyncio
import signal
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memlattice.core.settings import Settings
from memlattice.server.serving import DRAIN_S
from tests.integration._apps import spawned_server

PATIENCE_S = 60


@pytest.fixture
def server(settings: Settings, tmp_path: Path) -> Iterator[tuple[Any, str, Path, Path]]:
    log_path = tmp_path / "server.log"
    gate = tmp_path / "gate"
    gate.mkdir()
    with spawned_server(settings, log_path, MEMLATTICE_TEST_GATE=str(gate)) as (process, base):
        yield process, base, log_path, gate


async def eventually(check: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not await check():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        await asyncio.sleep(0.05)


async def refuses_connections(base: str) -> bool:
    try:
        async with httpx.AsyncClient(base_url=base, timeout=2) as fresh:
            await fresh.get("/healthz")
    except httpx.ConnectError:
        return True
    return False


async def test_sigterm_drains_the_request_in_flight(server: Any, graph_client: Any,
                                                    namespace: str) -> None:
    process, base, log_path, gate = server
    async with httpx.AsyncClient(base_url=base, timeout=PATIENCE_S) as http:
        id = str(uuid.uuid4())
        written = await http.post("/graphql", json={
            "query": "mutation($i: MemoryInput!) { writeMemory(input: $i) { id } }",
            "variables": {"i": {"namespace": namespace, "id": id,
                                "content": "drain the kettle"}}})
        assert not written.json().get("errors"), written.json()
        search = asyncio.create_task(http.post("/graphql", json={
            "query": "query($in: SearchInput!) { search(input: $in) { memory { id } } }",
            "variables": {"in": {"filter": {"namespace": namespace}, "query": "kettle",
                                 "mode": "LEXICAL", "reranker": "slow"}}}))

        async def at_the_gate() -> bool:
            assert not search.done(), search.result().text
            return (gate / "started").exists()

        await eventually(at_the_gate, "the search to reach the reranker")
        process.send_signal(signal.SIGTERM)
        await eventually(lambda: refuses_connections(base), "new connections to be refused")
        assert not search.done(), "the search ended before it was released"
        assert process.poll() is None, "the server exited with a request in flight"
        released = time.monotonic()
        (gate / "release").touch()
        response = await search
    assert response.status_code == 200
    body = response.json()
    assert not body.get("errors"), body
    assert [h["memory"]["id"] for h in body["data"]["search"]] == [id]
    code = await asyncio.to_thread(process.wait, PATIENCE_S)
    # uvicorn re-raises the signal once it has shut down cleanly.
    assert code in (0, -signal.SIGTERM), log_path.read_text()
    assert "Application shutdown complete" in log_path.read_text()
    # Shutdown did not sit out the whole drain period after the last request.
    assert time.monotonic() - released < DRAIN_S
    records = await graph_client.read((
        "MATCH (m:Memory {id: $id}) RETURN m.accessCount AS n", {"id": id}))
    assert records[0]["n"] == 1, "the access recorded by the drained search was lost"
