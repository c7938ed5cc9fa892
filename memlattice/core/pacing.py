"""Stage boundaries: where a running operation may let other keys' work go first.

An admitted operation runs in the one event loop of its process, beside every
other: its Python segments (ranking, serialization) hold the loop while they
run, and its queries share Neo4j's cores. Between two such steps it is not
holding anything another operation needs, so that is where it can wait without
harm. `boundary()` marks such a point (graph.client before and after each
driver call, the search resolver before serializing its hits); what happens
there is the pacer of the operation the current task works for, set by whoever
admitted it (memlattice.server.throttle: wait, bounded, while a lighter key's
operations are in flight, memlattice.core.sharing). Without a pacer, as in
background work, the CLI and tests, a boundary costs one context-variable read.

A pacer follows its operation into the tasks it starts (asyncio copies the
context). Work that another operation may be waiting for, such as a read shared
by several callers (memlattice.core.read_through) or a subscription tail every
subscriber reads, runs `detached()` (or in a `detached_context()`): it must not
wait on behalf of one of them for the others, which would wait on it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import Context, ContextVar, copy_context

Pacer = Callable[[], Awaitable[None]]

_PACER: ContextVar[Pacer | None] = ContextVar("memlattice_pacer", default=None)


async def boundary() -> None:
    """A stage boundary of the current operation: wait here if its pacer says so."""
    pacer = _PACER.get()
    if pacer is not None:
        await pacer()


@contextmanager
def paced(pacer: Pacer) -> Iterator[None]:
    """Run the block (and the tasks it starts) as an operation paced by `pacer`."""
    token = _PACER.set(pacer)
    try:
        yield
    finally:
        _PACER.reset(token)


def detached() -> None:
    """From here on in the current task, no boundary waits: for a task whose result
    other operations may share (call it first thing inside that task; its context
    is its own copy, so the operation that started it keeps its pacer)."""
    _PACER.set(None)


def detached_context() -> Context:
    """A copy of the current context without a pacer, for a task started on others'
    behalf too (`loop.create_task(..., context=detached_context())`)."""
    context = copy_context()
    context.run(_PACER.set, None)
    return context
