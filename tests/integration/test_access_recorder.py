"""The access recorder's loop against the real graph: no count lost to a shutdown.

`GatedGraph` is the real `MemoryGraph` whose `bump_access` waits at a gate the
test opens, so a flush can be caught half-way (its batch taken from the
pending counts, its write not yet sent) without guessing at timings.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from memlattice.graph.memories import MemoryGraph
from memlattice.services.access import AccessRecorder
from tests.conftest import GraphQLClient

WRITE = "mutation($i: MemoryInput!) { writeMemory(input: $i) { id } }"
# Generous: these only bound a wait for something that should happen at once.
PATIENCE_S = 30


class GatedGraph(MemoryGraph):
    """Holds every access write at a gate; can fail the first one on purpose."""

    def __init__(self, graph: MemoryGraph, *, fail_first: bool = False) -> None:
        super().__init__(graph.client)
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()
        self.written = asyncio.Queue[int]()
        self.fail_first = fail_first

    async def bump_access(self, rows: list[dict[str, Any]], *, now: datetime) -> None:
        self.entered.set()
        await self.gate.wait()
        if self.fail_first:
            self.fail_first = False
            raise RuntimeError("an unexpected failure in one flush")
        await super().bump_access(rows, now=now)
        self.written.put_nowait(sum(row["count"] for row in rows))


async def written_memory(gql: GraphQLClient, namespace: str) -> str:
    data = await gql.ok(WRITE, {"i": {"namespace": namespace, "content": "count me"}})
    return str(data["writeMemory"]["id"])


async def access_count(graph_client: Any, id: str) -> int | None:
    records = await graph_client.read((
        "MATCH (m:Memory {id: $id}) RETURN m.accessCount AS n", {"id": id}))
    return records[0]["n"]  # type: ignore[no-any-return]


async def test_stop_during_a_flush_keeps_its_counts(gql: GraphQLClient, graph_client: Any,
                                                    namespace: str) -> None:
    id = await written_memory(gql, namespace)
    graph = GatedGraph(MemoryGraph(graph_client))
    recorder = AccessRecorder(graph, interval_s=0.01)
    recorder.record(namespace, [id])
    recorder.start()
    await asyncio.wait_for(graph.entered.wait(), PATIENCE_S)
    # The loop's flush holds the batch; shutdown starts now, and a search that
    # finishes meanwhile records one more access.
    stopping = asyncio.create_task(recorder.stop())
    await asyncio.sleep(0)
    recorder.record(namespace, [id])
    graph.gate.set()
    await asyncio.wait_for(stopping, PATIENCE_S)
    assert await access_count(graph_client, id) == 2


async def test_the_loop_outlives_a_failed_flush(gql: GraphQLClient, graph_client: Any,
                                                namespace: str) -> None:
    id = await written_memory(gql, namespace)
    graph = GatedGraph(MemoryGraph(graph_client), fail_first=True)
    graph.gate.set()
    recorder = AccessRecorder(graph, interval_s=0.01)
    recorder.start()
    try:
        recorder.record(namespace, [id])  # lost with the failed flush (logged)
        await asyncio.wait_for(graph.entered.wait(), PATIENCE_S)
        recorder.record(namespace, [id])
        # Written by the loop itself, not by the flush of stop().
        assert await asyncio.wait_for(graph.written.get(), PATIENCE_S) >= 1
    finally:
        await recorder.stop()
    # The failed batch is dropped (and logged), not retried forever.
    assert await access_count(graph_client, id) == 1
