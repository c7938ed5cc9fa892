"""Waiting on a service under a fault, for the fault tests (test_faults*.py).

What those tests hold the service to in time is never a speed: a request under
a fault is answered at all (with a typed error, not a hang), and once the
fault is over the service serves again by itself. Neither is a wall-clock
guess here:

* an answer is awaited for `answer_cap_s`, several times the request budget
  the test gave the service (`LimitsSettings.request_timeout_s`, past which the
  service cancels whatever still runs): a loaded machine answers far inside
  it, a request that nothing bounds never does;
* a state that normally comes in seconds (the service serving again, a load
  getting going) is polled for until `DEADLINE_S`, and failing says what was
  seen meanwhile.

The figures themselves (how long giving up or recovering took) are printed,
not asserted: speed belongs in bench/.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from memlattice.core.settings import LimitsSettings

T = TypeVar("T")

# How long to wait for a state that takes seconds on an idle machine and tens of
# seconds on a loaded one: reaching it means the state never comes.
DEADLINE_S = 300.0

# Answers a service may give while it recovers: Neo4j not reachable yet, or a request
# that ran past its budget on a machine busy with Neo4j's restart (a speed, not a
# fault). Any other code fails at once.
RECOVERING = ("UNAVAILABLE", "TIMEOUT")


def answer_cap_s(limits: LimitsSettings) -> float:
    """How long to wait for one answer from a service running with `limits`: twice its
    request budget plus half a minute for a loaded machine to unwind the cancelled
    work and write the error out."""
    return 2 * limits.request_timeout_s + 30


def operation(query: str) -> str:
    """The first field a GraphQL document asks for (`writeMemory`), to name it."""
    return query.split("{", 1)[-1].split("(")[0].split("{")[0].split("}")[0].strip()


async def answered(request: Awaitable[T], *, within_s: float, what: str) -> T:
    """`request`'s result; a failure naming `what` when it does not come in `within_s`."""
    try:
        return await asyncio.wait_for(request, within_s)
    except TimeoutError:
        pytest.fail(f"{what}: no answer in {within_s:g}s, the request hangs")


async def until(condition: Callable[[], bool], *, within_s: float,
                failure: Callable[[], str]) -> float:
    """Poll `condition` until it holds; the seconds it took. Fails with `failure()` (what
    was seen meanwhile) when `within_s` passes first."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > within_s:
            pytest.fail(f"{failure()} (after {within_s:g}s)")
        await asyncio.sleep(0.1)
    return time.monotonic() - started


async def until_served(send: Callable[[], Awaitable[dict[str, Any]]], *, what: str,
                       answer_within_s: float, within_s: float = DEADLINE_S
                       ) -> tuple[dict[str, Any], float]:
    """Send again until the service serves the request (a body without errors): that
    body and the seconds it took. Each answer is awaited for `answer_within_s`; an error
    other than `RECOVERING` fails at once, and still no success after `within_s` fails
    with the answers seen."""
    started = time.monotonic()
    seen: list[str] = []
    while True:
        body = await answered(send(), within_s=answer_within_s, what=what)
        if not body.get("errors"):
            if seen:
                print(f"# {what}: served after {seen}")
            return body, time.monotonic() - started
        code = body["errors"][0]["extensions"]["code"]
        assert code in RECOVERING, body
        waited = time.monotonic() - started
        seen.append(f"{code} at {waited:.1f}s")
        if waited > within_s:
            pytest.fail(f"{what}: not served again in {within_s:g}s; {len(seen)} answers,"
                        f" the latest: {seen[-10:]}; the last: {body['errors'][0]}")
        await asyncio.sleep(0.5)
