"""The update judge's queue in the graph (memlattice.services.judge_queue): a memory
whose judging failed is judged later, across restarts, by one process at a time,
against the real Neo4j and the loopback fake model of tests/integration/_judge.py.

Nothing here is timed: each test waits for the outcome it expects with a generous
deadline (`eventually`), so a slow machine only makes it slower.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from memlattice.core.settings import Settings
from tests.integration._judge import (
    BLOCK,
    WRITE,
    FakeJudge,
    JudgedApp,
    eventually,
    judge,
    judged_app,
)

__all__ = ["judge"]  # the fake model, a fixture

OLD = "Bergen has been home for Ines since 2019."
NEW = "Ines settled into a flat in Tromsø with her partner."
# Retry soon and look often: the tests wait for the loop, never sleep for it.
QUICK = {"judge_retry_s": 0.2, "judge_retry_max_s": 0.5, "judge_poll_s": 0.2}


def judged_as_new(fake: FakeJudge, content: str) -> int:
    """How many times `content` was shown to the model as the new memory."""
    return sum(1 for prompt in fake.prompts for line in prompt.splitlines()
               if (m := BLOCK.match(line)) and m.group(1) and m.group(3) == content)


async def linked(app: JudgedApp, namespace: str, new: str, old: str) -> bool:
    return any((link["newer"]["id"], link["older"]["id"]) == (new, old)
               for link in await app.links(namespace))


async def written_while_down(app: JudgedApp, fake: FakeJudge,
                             namespace: str) -> tuple[str, str]:
    """Ines's old home judged, then her new one written while the model is down: the
    ids (old, new); the new one waits."""
    fake.mode = "judge"
    old = await app.write(namespace, OLD, "2025-01-10T10:00:00Z")
    fake.mode = "down"
    new = await app.write(namespace, NEW, "2025-06-02T09:00:00Z")
    assert await app.waiting(namespace) == 1
    return old, new


async def test_a_write_judged_while_the_model_was_down_is_linked_once_it_is_back(
    settings: Settings, judge: tuple[FakeJudge, str], namespace: str,
) -> None:
    fake, url = judge
    async with judged_app(settings, url, QUICK) as app:
        old, new = await written_while_down(app, fake, namespace)
        assert app.outcomes("model_error") >= 1
        fake.mode = "judge"
        await eventually(lambda: linked(app, namespace, new, old))
        await eventually(lambda: _none_waiting(app, namespace))
        assert app.outcomes("retried") >= 1 and app.outcomes("linked") == 1


async def _none_waiting(app: JudgedApp, namespace: str) -> bool:
    return await app.waiting(namespace) == 0


async def test_a_restarted_service_judges_what_was_waiting(
    settings: Settings, judge: tuple[FakeJudge, str], namespace: str,
) -> None:
    fake, url = judge
    async with judged_app(settings, url, QUICK) as before:
        old, new = await written_while_down(before, fake, namespace)
    fake.mode = "judge"
    # A new process on the same database: the mark, and the writer's view, were kept.
    async with judged_app(settings, url, QUICK) as after:
        await eventually(lambda: linked(after, namespace, new, old))
        await eventually(lambda: _none_waiting(after, namespace))


async def test_two_services_on_one_database_judge_each_memory_once(
    settings: Settings, judge: tuple[FakeJudge, str], namespace: str,
) -> None:
    fake, url = judge
    fake.mode = "judge"
    # Contents of this test only, so that no other test's prompts are counted.
    contents = [f"Bergen has been home for Ines ({namespace}).",
                f"Ines settled into a flat in Tromsø ({namespace}).",
                f"Ines moved on to Oslo for work ({namespace})."]
    async with judged_app(settings, url, QUICK) as one, judged_app(settings, url, QUICK) as two:
        ids = []
        for app, content, at in zip((one, two, one), contents,
                                    ("2025-01-10T10:00:00Z", "2025-03-02T09:00:00Z",
                                     "2025-06-02T09:00:00Z")):
            ids.append(await app.write(namespace, content, at))
        await eventually(lambda: _none_waiting(one, namespace))
        await eventually(lambda: linked(one, namespace, ids[2], ids[1]))
        assert await linked(one, namespace, ids[1], ids[0])
        assert Counter(judged_as_new(fake, c) for c in contents[1:]) == Counter({1: 2})
        assert sum(a.judge.queue.holding for a in (one, two)) <= 1


async def test_a_model_that_keeps_answering_garbage_is_given_up_on_and_counted(
    settings: Settings, judge: tuple[FakeJudge, str], namespace: str,
) -> None:
    fake, url = judge
    fake.mode = "judge"
    judging: dict[str, Any] = {**QUICK, "judge_max_malformed": 2}
    async with judged_app(settings, url, judging) as app:
        await app.write(namespace, OLD, "2025-01-10T10:00:00Z")
        fake.mode = "garbage"
        await app.write(namespace, NEW, "2025-06-02T09:00:00Z")
        await eventually(lambda: _none_waiting(app, namespace))
        assert app.outcomes("abandoned") == 1 and app.outcomes("malformed") >= 2
        assert await app.links(namespace) == []


INGEST = """mutation($input: ConversationInput!) { ingestConversation(input: $input) { created } }"""


async def test_a_write_commits_with_its_mark_and_the_models_own_facts_get_none(
    settings: Settings, judge: tuple[FakeJudge, str], namespace: str,
) -> None:
    fake, url = judge
    fake.mode = "judge"
    slow = {**QUICK, "judge_retry_s": 600.0, "judge_retry_max_s": 600.0}
    async with judged_app(settings, url, slow) as app:
        await app.write(namespace, OLD, "2025-01-10T10:00:00Z")  # nothing to offer: judged
        fake.mode = "down"  # from here nothing is judged, so what was marked stays marked
        # Asked the moment the write has answered, nothing drained: the mark was made
        # by the write's own transaction, not after it.
        await app.ok(WRITE, {"input": {"namespace": namespace, "content": NEW,
                                       "now": "2025-06-02T09:00:00Z"}})
        assert await app.waiting(namespace) == 1
        await app.ok(WRITE, {"input": {"namespace": namespace, "content": "Ines lives in Oslo.",
                                       "sourceType": "session_facts",
                                       "now": "2025-06-03T09:00:00Z"}})
        assert await app.waiting(namespace) == 1
        await app.ok(INGEST, {"input": {"namespace": namespace, "sessionId": "s1", "messages": [
            {"id": "t1", "speaker": "Ines", "content": "Oslo is home now.",
             "at": "2025-07-01T09:00:00Z"},
            {"id": "t2", "speaker": "Ole", "content": "Congratulations!",
             "at": "2025-07-01T09:01:00Z"}]}})
        assert await app.waiting(namespace) == 3
