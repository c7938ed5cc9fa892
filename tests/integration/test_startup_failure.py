"""A start-up that fails half-way stops what it had started and closes the driver."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgi_lifespan import LifespanManager

from memlattice.core.settings import Settings
from memlattice.graph.client import GraphClient
from memlattice.server import app as app_module
from memlattice.server import runtime as runtime_module


async def test_a_late_start_up_failure_leaves_no_loop_running(
    settings: Settings, monkeypatch: pytest.MonkeyPatch,
) -> None:
    closed: list[GraphClient] = []
    close = GraphClient.close

    async def recorded_close(self: GraphClient) -> None:
        closed.append(self)
        await close(self)

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the consolidation schedule could not start")

    monkeypatch.setattr(GraphClient, "close", recorded_close)
    monkeypatch.setattr(runtime_module, "consolidation_scheduler", fail)
    before = set(asyncio.all_tasks())  # the suite's own app runs loops of the same names
    app = app_module.create_app(settings)
    with pytest.raises(RuntimeError, match="could not start"):
        async with LifespanManager(app, startup_timeout=300, shutdown_timeout=60):
            pass
    loops = {"memlattice-access-recorder", "memlattice-reembed", "memlattice-consolidation"}
    assert not [t for t in asyncio.all_tasks() - before
                if t.get_name() in loops and not t.done()]
    assert len(closed) == 1


async def test_a_command_runtime_has_every_part_and_runs_no_loop(settings: Settings) -> None:
    """What the CLI opens (`background=False`): the service the server builds, with its
    access recorder, vector spaces, rerankers and event bus, but no loop running."""
    loops = {"memlattice-access-recorder", "memlattice-reembed", "memlattice-consolidation"}
    before = set(asyncio.all_tasks())
    async with runtime_module.open_runtime(settings, background=False) as runtime:
        service = runtime.service
        assert service.access is not None
        assert service.spaces is runtime.spaces is runtime.reembedder.spaces
        assert service.embedder is not None
        assert runtime.consolidation is not None
        assert runtime.consolidation.consolidator.memories is service
        assert not [t for t in asyncio.all_tasks() - before
                    if t.get_name() in loops and not t.done()]
        await runtime.client.verify()
