"""An adapter operation written once, as a generator of client calls, run by either client.

An operation that needs several requests (a store's put: write, and on CONFLICT
update) is a generator that yields each `Call` and receives its result, or has
the call's `MemlatticeError` thrown into it, so its logic exists once and the
sync and async adapters only differ in how they send (as the client's own
methods are built from `_operations.py`).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, TypeVar

from memlattice_client._client import AsyncMemlatticeClient, MemlatticeClient
from memlattice_client._errors import MemlatticeError
from memlattice_client._operations import Call

T = TypeVar("T")
Steps = Generator[Call[Any], Any, T]


def run_sync(client: MemlatticeClient, steps: Steps[T]) -> T:
    """Drive `steps` to its return value with blocking requests."""
    try:
        call = next(steps)
        while True:
            try:
                result = client.send(call)
            except MemlatticeError as exc:
                call = steps.throw(exc)
            else:
                call = steps.send(result)
    except StopIteration as stop:
        value: T = stop.value
        return value


async def run_async(client: AsyncMemlatticeClient, steps: Steps[T]) -> T:
    """Drive `steps` to its return value with the async client."""
    try:
        call = next(steps)
        while True:
            try:
                result = await client.send(call)
            except MemlatticeError as exc:
                call = steps.throw(exc)
            else:
                call = steps.send(result)
    except StopIteration as stop:
        value: T = stop.value
        return value
