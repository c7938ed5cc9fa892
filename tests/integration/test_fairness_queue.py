"""A client's parallel requests wait in their key's own queue while the key is served
(memlattice.core.turn_waits): a page that sends several searches at once to a busy
process is answered, not refused, however long its last one waits behind its first;
and a request whose client leaves while it waits is not waited for.

Which search runs when is set by the test (a reranker that lets one search go on at
each step), so the outcome does not depend on the machine's speed: the waits are
longer than the turn wait in all and shorter than it between steps, by seconds.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.types import Message

from memlattice.core.settings import Settings
from tests.integration._support import WRITE, mem
from tests.integration.test_fairness import (
    READ,
    BusyProcess,
    assert_rate_limited,
    busy_process,
)

# The turn wait; the test steps the page's searches `STEP_S` apart, so the last one
# waits 2 x STEP_S (longer than WAIT_S) in all, and less than WAIT_S after each step.
# Long: with two busy processes beside it, a fresh app's first search took 13 s, so
# 8 s was not enough; 9 s are left after each step for a search to end.
WAIT_S = 30.0
STEP_S = 0.7 * WAIT_S


def stepped_search(namespace: str) -> tuple[str, dict[str, Any]]:
    """A search held in flight until the test lets one `stepped` search go on."""
    return ("query($in: SearchInput!) { search(input: $in) { memory { id } } }",
            {"in": {"filter": {"namespace": namespace}, "query": "kettle", "mode": "LEXICAL",
                    "reranker": "stepped"}})


async def until_waiting(busy: BusyProcess, count: int,
                        page: list[asyncio.Task[Any]]) -> None:
    """Until `count` requests wait for their turn (a condition, not a duration)."""
    while f'memlattice_process_operations{{kind="waiting"}} {count}.0' not in await busy.metrics():
        assert not any(task.done() for task in page), [t.result().text for t in page
                                                        if t.done()]
        await asyncio.sleep(0.01)


async def three_parallel_searches(settings: Settings, namespace: str,
                                  queue: int) -> list[Any]:
    """A page (key `flood`) sends three searches at once on a process of capacity 1
    while the other key (`quiet`) has one in flight: the page's first runs, the two
    others wait; the test ends the page's searches one at a time, `STEP_S` apart."""
    async with busy_process(settings, namespace, turn_wait_s=WAIT_S, holder="quiet", held=1,
                            capacity=1, yield_s=0, queue=queue) as busy:
        search = stepped_search(namespace)
        page = [asyncio.create_task(busy.send("flood", *search)) for _ in range(3)]
        await until_waiting(busy, 2, page)
        for waiting in (1, 0):
            await asyncio.sleep(STEP_S)
            busy.step.release()  # the running search ends; a waiting one may start
            while True:
                metrics = await busy.metrics()
                if (f'memlattice_process_operations{{kind="waiting"}} {waiting}.0' in metrics
                        or any(task.done() and task.result().status_code == 429
                               for task in page)):
                    break
                await asyncio.sleep(0.01)
        for _ in page:
            busy.step.release()
        return list(await asyncio.gather(*page))


async def test_a_pages_parallel_searches_are_served_in_turn_not_refused(
    settings: Settings, namespace: str,
) -> None:
    """Each end of the page's searches gives its waiting ones the turn wait again: the
    last waits twice the step (longer than the turn wait) and is served."""
    answers = await three_parallel_searches(settings, namespace, queue=8)
    assert [answer.status_code for answer in answers] == [200, 200, 200], \
        [answer.text for answer in answers]


async def test_without_a_queue_the_last_one_is_refused_after_the_turn_wait(
    settings: Settings, namespace: str,
) -> None:
    """`MEMLATTICE_FAIRNESS_QUEUE=0` (the rule before): a request waits the turn wait
    from its arrival only, so the page's last search is refused its turn."""
    answers = await three_parallel_searches(settings, namespace, queue=0)
    assert sorted(answer.status_code for answer in answers) == [200, 200, 429]
    assert_rate_limited(next(a for a in answers if a.status_code == 429), "share")


async def test_a_request_whose_client_leaves_while_it_waits_never_runs(
    settings: Settings, namespace: str,
) -> None:
    """memlattice.server.read_ahead: a write waiting for its turn whose client
    disconnects stops waiting at once, is answered to no one, and never runs, not
    even once the process is free."""
    async with busy_process(settings, namespace, turn_wait_s=60) as busy:
        assert (await busy.send("quiet", READ, {"ns": namespace})).status_code == 200
        body = json.dumps({"query": WRITE,
                           "variables": {"input": mem(namespace, "never written")}}).encode()
        pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]
        left = asyncio.Event()
        answered: list[Message] = []

        async def receive() -> Message:
            if pending:
                return pending.pop(0)
            await left.wait()  # the client closes its connection
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            answered.append(message)

        headers = [(b"host", b"test"), (b"content-type", b"application/json"),
                   (b"content-length", str(len(body)).encode()),
                   (b"authorization", busy.keys["flood"][1]["authorization"].encode())]
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": "POST", "scheme": "http", "path": "/graphql",
                 "raw_path": b"/graphql", "query_string": b"", "root_path": "",
                 "headers": headers, "client": ("127.0.0.1", 50000),
                 "server": ("test", 80)}
        app = busy.client._transport.app  # type: ignore[attr-defined]
        request = asyncio.create_task(app(scope, receive, send))
        await until_waiting(busy, 1, [request])
        left.set()
        # Before: it kept waiting its 60 s turn. A generous bound against a hang only.
        await asyncio.wait_for(request, timeout=50)
        assert answered == []
        assert 'memlattice_process_operations{kind="waiting"} 0.0' in await busy.metrics()
        busy.go.set()  # the process is free: a request still waiting would run now
        await asyncio.gather(*busy.held)
        total = await busy.send("flood", READ, {"ns": namespace})
    assert total.json()["data"]["memories"]["totalCount"] == 1, total.text  # "kettle on"
