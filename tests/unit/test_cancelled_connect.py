"""A driver call cancelled while the driver connects leaks no socket (issue 30).

The driver (6.4.1) leaves the socket of a TCP connect it is cancelled in
unclosed (issue 30). These run the real driver against a port whose connects
hang (tests._stalled), so no Neo4j is needed: the call is cancelled, as a
request's budget cancels it, once the kernel shows its connect under way.
Nothing here waits on a time: states are polled for, under generous caps, and
the connects end by the driver's own connection timeout or, sooner, refused
once the port is closed.
"""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import Any

import pytest

from memlattice.graph.backup.reads import StoreSnapshot, in_store_snapshot
from memlattice.graph.client import GraphClient
from tests._stalled import StalledPort

# The driver's connect to the stalled port lasts this long, unless the port closes.
CONNECT_S = 60.0
# How long any state here may take to come on a loaded machine.
CAP_S = 120.0


@pytest.fixture
def stalled() -> Iterator[StalledPort]:
    port = StalledPort()
    try:
        yield port
    finally:
        port.close()


@pytest.fixture
async def client(stalled: StalledPort) -> AsyncIterator[GraphClient]:
    client = GraphClient.connect(f"bolt://127.0.0.1:{stalled.port}", "neo4j", "secret",
                                 "neo4j", connection_timeout_s=CONNECT_S,
                                 acquisition_timeout_s=2 * CONNECT_S, max_retry_time_s=1.0)
    yield client
    stalled.close()  # the connect still under way is refused at its next SYN
    await asyncio.wait_for(client.close(), CAP_S)


async def until(condition: Any, what: str) -> None:
    for _ in range(int(CAP_S / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    pytest.fail(f"{what}: not within {CAP_S:g}s")


async def cancelled_while_connecting(client: GraphClient, stalled: StalledPort,
                                     call: Coroutine[Any, Any, Any] | None = None) -> set[int]:
    """Start `call` (a read by default), cancel it once its connect is under way; the
    connecting ports."""
    read = asyncio.ensure_future(call or client.read(("RETURN 1", {})))
    await until(lambda: stalled.connecting() or read.done(), "the driver connecting")
    assert not read.done(), read
    connecting = stalled.connecting()
    read.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(read), CAP_S)
    return connecting


async def test_a_call_cancelled_while_the_driver_connects_leaks_no_socket(
        client: GraphClient, stalled: StalledPort) -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", ResourceWarning)
        await cancelled_while_connecting(client, stalled)
        stalled.close()
        await asyncio.wait_for(client.close(), CAP_S)
        gc.collect()
    leaked = [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)]
    assert not leaked


async def test_its_caller_does_not_wait_for_the_connect(
        client: GraphClient, stalled: StalledPort) -> None:
    connecting = await cancelled_while_connecting(client, stalled)
    # The caller has its answer (a request would say TIMEOUT) while the connect it
    # gave up on is still under way: it lasts until CONNECT_S, or until the port closes.
    assert stalled.connecting() & connecting


async def test_a_backup_cut_short_while_the_driver_connects_leaks_no_socket(
        client: GraphClient, stalled: StalledPort) -> None:
    # The backup's scan opens a transaction of its own (graph.backup.reads), which a
    # Ctrl-C of `memlattice backup` cancels as a budget cancels a read.
    async def scan(snapshot: StoreSnapshot) -> None:
        async for _ in snapshot.nodes():
            pass

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", ResourceWarning)
        await cancelled_while_connecting(client, stalled, in_store_snapshot(client, scan))
        stalled.close()
        await asyncio.wait_for(client.close(), CAP_S)
        gc.collect()
    leaked = [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)]
    assert not leaked
