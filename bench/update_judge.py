"""What the service's update judge gives recall, with a judge of known error rates.

    python -m bench.update_judge [--files dev,holdout,unseen,fresh] [--miss 0] [--false-link 0]
    python -m bench.update_judge --endpoint URL --model NAME    # a real chat model

With the write-side LLM on, every memory a write creates is shown to the model
with its first three offers (`Memory.mayReplace`), and the pairs it names become
update links (memlattice.services.update_judge). No model runs on this machine
(issue 28), so by default the judge is simulated on loopback: an
OpenAI-compatible chat endpoint that reads the prompt the service sends and
answers from the scenarios' truth: it names a true update it is shown (or one
that skips states of a chain) unless it misses it, with probability `--miss`,
and names any other pair it is shown with probability `--false-link` (a fixed
draw per pair, so runs repeat). The scenarios load
as bench.knowledge_update loads them (`ingestConversation` per session, the
server's own embedder); each is judged before its questions are asked through
the default search. Its table follows, then the judge's counts.

With `--endpoint` and `--model` the same runs against a real model (its API key
in `MEMLATTICE_FACTS_LLM_API_KEY`); the model's session facts are then written
too, as the product does. It prints counts only, so it may run on sealed files.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import os
import re
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from bench._harness import bench_service
from bench._update_scoring import replaced_by
from bench.knowledge_update import (
    PARALLEL,
    READABLE,
    Results,
    Scenario,
    evaluate,
    load,
    print_failures,
    read_scenarios,
)
from bench.knowledge_update import report as question_report
from memlattice.core.messages import MessageInput, turn_content
from memlattice.core.settings import EmbeddingSettings, FactsLLMSettings
from memlattice.core.update_judging import MAX_SHOWN_CHARS
from memlattice.server.app import runtime_of
from tests._live import serve_in_thread

SHOWN = re.compile(r"^(?:New memory (\d+)|  (\d+[a-z]))(?: \(said [^)]*\))?: (.*)$")
_SPACES = re.compile(r"\s+")
OUTCOMES = ("answered", "malformed", "model_error", "linked", "refused", "disputed", "retried",
            "abandoned")


def shown_text(content: str) -> str:
    """A memory's text as the prompt shows it (core.update_judging)."""
    return _SPACES.sub(" ", content).strip()[:MAX_SHOWN_CHARS]


class TruthJudge:
    """Answers the service's judging prompts from the scenarios' truth, missing a true
    pair with probability `miss` and naming another with probability `false_link`;
    answers session-fact prompts with no facts."""

    def __init__(self, scenarios: list[Scenario], miss: float, false_link: float) -> None:
        self.miss, self.false_link = miss, false_link
        self.replaces: set[tuple[str, str]] = set()  # (newer text, older text)
        for scenario in scenarios:
            text = {message["id"]: shown_text(turn_content(MessageInput(**message)))
                    for _, message in scenario.turns()}
            truth = scenario.truth()
            for newer in {new for new, _ in truth}:
                self.replaces |= {(text[newer], text[old]) for old in replaced_by(truth, newer)}
        self.asked: Counter[str] = Counter()

    @staticmethod
    def draw(newer: str, older: str) -> float:
        """A number in [0, 1) fixed for the pair."""
        digest = hashlib.sha256(f"{newer}\x1f{older}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64

    def verdicts(self, prompt: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        newer = ""
        for line in prompt.splitlines():
            match = SHOWN.match(line)
            if match is None:
                continue
            if match.group(1):
                newer = match.group(3)
                continue
            older = match.group(3)
            true = (newer, older) in self.replaces
            self.asked["true pairs" if true else "other pairs"] += 1
            draw = self.draw(newer, older)
            if (draw >= self.miss) if true else (draw < self.false_link):
                found.append({"earlier": match.group(2), "attribute": "", "confidence": 0.9})
        return found

    async def chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        answer = ({"replaces": self.verdicts(user)} if '"replaces"' in system
                  else {"facts": []})
        return JSONResponse({
            "id": "bench", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": json.dumps(answer)}}]})


@contextmanager
def judge_endpoint(args: argparse.Namespace, scenarios: list[Scenario]
                   ) -> Iterator[tuple[FactsLLMSettings, TruthJudge | None]]:
    if args.endpoint:
        yield FactsLLMSettings(model=args.model, base_url=args.endpoint), None
        return
    judge = TruthJudge(scenarios, args.miss, args.false_link)
    app = Starlette(routes=[Route("/v1/chat/completions", judge.chat, methods=["POST"])])
    with serve_in_thread(app, lifespan="off", startup_timeout=60) as url:
        yield FactsLLMSettings(model="truth-judge", base_url=url + "/v1"), judge


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="dev,holdout,unseen,fresh",
                        help="scenario files of bench/knowledge_updates, comma-separated")
    parser.add_argument("--miss", type=float, default=0.0,
                        help="the simulated judge's chance of missing a true update")
    parser.add_argument("--false-link", type=float, default=0.0,
                        help="its chance of naming a pair that is not an update")
    parser.add_argument("--endpoint", help="an OpenAI-compatible base URL (a real model)")
    parser.add_argument("--model", default="", help="the real model's name")
    parser.add_argument("--dump", type=Path,
                        help="write every question's ranked hits as numbers, no text"
                             " (as bench.knowledge_update --dump)")
    parser.add_argument("--verbose", action="store_true",
                        help="print every failed question with its top 3 hits"
                             " (dev and holdout only: the blind files stay unread)")
    args = parser.parse_args()
    if bool(args.endpoint) != bool(args.model):
        raise SystemExit("--endpoint and --model go together")
    files = [name.strip() for name in args.files.split(",") if name.strip()]
    if args.verbose and not set(files) <= READABLE:
        raise SystemExit("--verbose prints scenario text: only with " + ", ".join(sorted(READABLE)))
    scenarios = read_scenarios(files)
    os.environ.setdefault("MEMLATTICE_LIMIT_REQUEST_TIMEOUT_S", "600")
    for chatty in ("httpx", "httpx2", "memlattice.access", "memlattice.services.update_judge"):
        logging.getLogger(chatty).setLevel(logging.WARNING)
    results = Results()
    with judge_endpoint(args, scenarios) as (facts_llm, judge):
        async with bench_service(dimension=256, heap="1g", pagecache="512m",
                                 embedding=EmbeddingSettings(provider="local"),
                                 facts_llm=facts_llm) as bench:
            runtime = runtime_of(bench.app)
            assert runtime.update_judge is not None
            gate = asyncio.Semaphore(PARALLEL)
            started = time.monotonic()

            async def one(scenario: Scenario) -> None:
                async with gate:
                    await load(bench, scenario)
                    await runtime.update_judge.drain()  # type: ignore[union-attr]
                    if runtime.session_facts is not None:
                        await runtime.session_facts.drain()
                    await evaluate(bench, results, scenario)

            await asyncio.gather(*(one(s) for s in scenarios))
            registry = bench.app.state.metrics.registry
            counts = {o: registry.get_sample_value("memlattice_update_judge_answers_total",
                                                   {"outcome": o}) or 0 for o in OUTCOMES}
    print(f"# {len(scenarios)} scenarios ({', '.join(files)}) in"
          f" {time.monotonic() - started:.1f}s; judge: "
          + (f"simulated, miss {args.miss}, false link {args.false_link}" if judge else f"{args.model} at {args.endpoint}"))
    question_report(results, files)
    print("# judge: " + ", ".join(f"{o} {int(n)}" for o, n in counts.items())
          + (f"; pairs shown: {dict(judge.asked)}" if judge else ""))
    if args.dump is not None:
        args.dump.write_text(json.dumps(results.ranked_rows))
    if args.verbose:
        print_failures(results)


if __name__ == "__main__":
    asyncio.run(main())
