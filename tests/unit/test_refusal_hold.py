"""The early refusal's hold (memlattice.server.throttle.RefuseEarly): a key back within
a second of a refusal while still over its limits waits for its 429; one whose client
was refused nothing yet is answered at once; the answer is the usual one."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from memlattice.core.auth import Principal, Scope, Sensitivity
from memlattice.core.fairness import KeyLimits, Limiter
from memlattice.core.gate import Gate
from memlattice.server.throttle import RefuseEarly
from memlattice.services.apikeys import digest

TOKEN = "mlk_0123456789ab_" + "s" * 32


def over_its_rate(*, refused: bool = True) -> Gate:
    """A gate whose key `0123456789ab` just authenticated and spent its one token;
    with `refused`, its client was then refused (told to wait) too."""
    gate = Gate(Limiter(KeyLimits(rate=0.001, burst=1.0)), early_s=60.0)
    principal = Principal(key_id="0123456789ab", name="k", namespaces=None,
                          max_scope=Scope.AGENT, clearance=Sensitivity.LOW, can_write=True,
                          limits=KeyLimits(rate=0.001, burst=1.0))
    gate.seen(principal, digest(TOKEN))
    assert gate.admit(principal) is None
    gate.release(principal)
    if refused:
        assert gate.admit(principal) is not None
    return gate


async def never_called(scope: Any, receive: Any, send: Any) -> None:
    raise AssertionError("a refused request reached the app")


async def call(early: RefuseEarly, sent: list[dict[str, Any]]) -> None:
    scope = {"type": "http", "method": "POST", "path": "/graphql", "query_string": b"",
             "headers": [(b"authorization", f"Bearer {TOKEN}".encode())]}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await early(scope, receive, send)


def answer(sent: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    return sent[0]["status"], json.loads(sent[1]["body"])


def test_a_held_refusal_is_sent_after_its_hold_with_the_usual_answer() -> None:
    async def run() -> None:
        early = RefuseEarly(never_called, over_its_rate(), hold_s=0.05, max_held=4)
        sent: list[dict[str, Any]] = []
        task = asyncio.create_task(call(early, sent))
        for _ in range(5):
            await asyncio.sleep(0)
        assert early.held == 1 and sent == []  # held, nothing sent yet
        await task
        assert early.held == 0
        status, body = answer(sent)
        assert status == 429 and body["errors"][0]["extensions"]["code"] == "RATE_LIMITED"
        headers = dict(sent[0]["headers"])
        assert headers[b"retry-after"] == str(body["errors"][0]["extensions"]["retryAfter"]).encode()

    asyncio.run(run())


def test_past_max_held_and_by_default_a_refusal_is_answered_at_once() -> None:
    async def run() -> None:
        for early in (RefuseEarly(never_called, over_its_rate()),  # hold 0: the default
                      RefuseEarly(never_called, over_its_rate(), hold_s=60.0, max_held=0)):
            sent: list[dict[str, Any]] = []
            await asyncio.wait_for(call(early, sent), timeout=30)  # not held for 60 s
            assert early.held == 0 and answer(sent)[0] == 429

    asyncio.run(run())


def test_a_refusal_straight_after_a_success_is_not_held() -> None:
    """Its client was told nothing yet (the request that spent the budget succeeded):
    it ignores no Retry-After, so its refusal, and the Retry-After in it, comes at once."""
    async def run() -> None:
        early = RefuseEarly(never_called, over_its_rate(refused=False), hold_s=60.0,
                            max_held=4)
        sent: list[dict[str, Any]] = []
        task = asyncio.create_task(call(early, sent))
        for _ in range(5):
            await asyncio.sleep(0)
        assert early.held == 0 and sent, "the refusal was held"
        await task
        assert answer(sent)[0] == 429
        # That refusal told the client to wait: coming back at once, it is held.
        again: list[dict[str, Any]] = []
        held = asyncio.create_task(call(early, again))
        for _ in range(5):
            await asyncio.sleep(0)
        assert early.held == 1 and again == []
        held.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await held
        assert early.held == 0

    asyncio.run(run())
