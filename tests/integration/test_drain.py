"""Graceful shutdown: SIGTERM mid-request lets the request finish, then drains the rest.

A real uvicorn process (served by `memlattice.server.serving.run_server`, like
`memlattice serve`) on the suite's Neo4j. A search that takes 3 s is in
flight when SIGTERM arrives: its answer must still arrive complete, new
connections must be refused, the process must exit 0, and the access count
that search recorded must reach Neo4j (the lifespan flushes it on the way out).
"""

from __future__ import annotations

import asyncio
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memlattice.core.settings import Settings
from tests.integration._apps import spawned_server
from tests.integration._support import seeded


@pytest.fixture
def server(settings: Settings, tmp_path: Path) -> Iterator[tuple[Any, str, Path]]:
    log_path = tmp_path / "server.log"
    with spawned_server(settings, log_path) as (process, base):
        yield process, base, log_path


async def test_sigterm_drains_the_request_in_flight(server: Any, graph_client: Any,
                                                    namespace: str) -> None:
    process, base, log_path = server
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        id = str(uuid.uuid4())
        written = await http.post("/graphql", json={
            "query": "mutation($i: MemoryInput!) { writeMemory(input: $i) { id } }",
            "variables": {"i": {"namespace": namespace, "id": id, "content": "drain the kettle",
                                "embedding": seeded(3)}}})
        assert not written.json().get("errors"), written.json()
        search = asyncio.create_task(http.post("/graphql", json={
            "query": "query($in: SearchInput!) { search(input: $in) { memory { id } } }",
            "variables": {"in": {"filter": {"namespace": namespace}, "query": "kettle",
                                 "mode": "LEXICAL", "reranker": "slow"}}}))
        await asyncio.sleep(1.0)
        assert not search.done()
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        await asyncio.sleep(0.5)
        with pytest.raises(httpx.ConnectError):
            async with httpx.AsyncClient(base_url=base, timeout=2) as fresh:
                await fresh.get("/healthz")
        response = await search
    assert response.status_code == 200
    body = response.json()
    assert not body.get("errors"), body
    assert [h["memory"]["id"] for h in body["data"]["search"]] == [id]
    code = await asyncio.to_thread(process.wait, 30)
    # uvicorn re-raises the signal once it has shut down cleanly.
    assert code in (0, -signal.SIGTERM), log_path.read_text()
    assert "Application shutdown complete" in log_path.read_text()
    assert time.monotonic() - started < 15
    records = await graph_client.read((
        "MATCH (m:Memory {id: $id}) RETURN m.accessCount AS n", {"id": id}))
    assert records[0]["n"] == 1, "the access recorded by the drained search was lost"
