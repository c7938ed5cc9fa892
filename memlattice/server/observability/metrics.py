"""Prometheus metrics of one app, in a registry of its own.

Each `create_app` gets its own `CollectorRegistry` (tests build several apps
in one process; a global registry would refuse the second set of metrics).

A label whose values are a known, finite set (an error code, an outcome, a kind
of operation) has every value's series created at 0 when the metric is
registered, so a scrape of a process that just started already shows each one:
`rate()`, `increase()` and `absent()` need a series before its first increment.
Labels with open-ended values (`key`, `operation`, `query`, `provider`) get a
series when the value first occurs; one per key is never made ahead.

    memlattice_request_seconds{operation,type}   GraphQL operations, by root field
    memlattice_neo4j_seconds{query}              each query, by the graph method that sent it
    memlattice_embedding_seconds{provider}       real embedding calls (cache hits excluded)
    memlattice_errors_total{code}                errors returned, by stable code
    memlattice_requests_in_flight                HTTP requests being handled
    memlattice_rate_limited_total{key,limit}     refusals of a key over one of its limits
                                                 (rate, concurrent, streams, cost), or
                                                 waiting its turn in a busy process (share)
    memlattice_cost_charged_total{key}           the query cost charged to a key's cost
                                                 budget (admitted operations only)
    memlattice_key_operations{key,kind}          a key's operations in flight in this
                                                 process (kind: requests, streams)
    memlattice_process_operations{kind}          the process's HTTP operations of all keys:
                                                 in_flight, waiting (for their turn),
                                                 yielding (running, giving way at a stage
                                                 boundary), and the capacity at which it is
                                                 busy and shared (memlattice.core.sharing)
    memlattice_session_fact_answers_total{outcome}  the facts model's answers (answered,
                                                 malformed, model_error, write_error)
    memlattice_session_facts_written_total       facts it wrote
    memlattice_update_judge_answers_total{outcome}  the same model's update judgements
    memlattice_update_judge_waiting              memories queued in the graph for the judge
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from memlattice.core.errors import MemlatticeError
from memlattice.core.fairness import Refusal
from memlattice.core.session_facts import FACT_ANSWER_OUTCOMES, FactsOutcome
from memlattice.core.sharing import ProcessShare
from memlattice.core.update_judging import JUDGE_OUTCOMES, JudgeOutcome
from memlattice.embeddings.base import Embedder
from memlattice.server.persisted_queries import NOT_FOUND_CODE, NOT_SUPPORTED_CODE

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                   10.0, 30.0)
# `memlattice_process_operations{kind}`: what the fairness gate measures (fairness on).
PROCESS_KINDS = ("in_flight", "waiting", "yielding", "capacity")


def error_codes() -> tuple[str, ...]:
    """Every stable code an error returned to a client may carry: the exception tree's
    (memlattice.core.errors), INTERNAL for masked ones, and the persisted queries'."""
    codes = {MemlatticeError.code, NOT_FOUND_CODE, NOT_SUPPORTED_CODE}
    pending: list[type[MemlatticeError]] = [MemlatticeError]
    while pending:
        kind = pending.pop()
        codes.add(kind.code)
        pending.extend(kind.__subclasses__())
    return tuple(sorted(codes))


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Histogram(
            "memlattice_request_seconds", "GraphQL operation latency by root field and type.",
            ["operation", "type"], registry=self.registry, buckets=LATENCY_BUCKETS)
        self.neo4j = Histogram(
            "memlattice_neo4j_seconds", "Neo4j query time by the graph method that sent it.",
            ["query"], registry=self.registry, buckets=LATENCY_BUCKETS)
        self.embedding = Histogram(
            "memlattice_embedding_seconds", "Time spent in the embedding provider.",
            ["provider"], registry=self.registry, buckets=LATENCY_BUCKETS)
        self.errors = Counter(
            "memlattice_errors", "Errors returned to clients, by stable code.",
            ["code"], registry=self.registry)
        self.in_flight = Gauge(
            "memlattice_requests_in_flight", "HTTP requests being handled.",
            registry=self.registry)
        self.refusals = Counter(
            "memlattice_rate_limited", "Operations refused because their API key was over"
            " one of its limits, by key id and limit.", ["key", "limit"], registry=self.registry)
        self.cost_charged_total = Counter(
            "memlattice_cost_charged", "Estimated query cost (resolvers.limits) of the"
            " operations admitted for an API key: what its cost budget is spent on.",
            ["key"], registry=self.registry)
        self.key_in_flight = Gauge(
            "memlattice_key_operations", "An API key's operations in flight in this process"
            " (requests, and WebSocket operations as streams).", ["key", "kind"],
            registry=self.registry)
        self.process_in_flight = Gauge(
            "memlattice_process_operations", "HTTP operations of all keys in this process:"
            " in flight, waiting for their turn, yielding (running, giving way to lighter"
            " keys' work), and the capacity at which the process is"
            " busy and shared among the keys (0: not shared).", ["kind"],
            registry=self.registry)
        self.fact_answers = Counter(
            "memlattice_session_fact_answers",
            "The write-side LLM's answers about sessions, by outcome.",
            ["outcome"], registry=self.registry)
        self.judge_outcomes = Counter(
            "memlattice_update_judge_answers",
            "The write-side LLM's judgements of which earlier memories new ones replace,"
            " by outcome (answered, malformed, model_error, linked, refused, disputed;"
            " and of the queue: retried, abandoned).",
            ["outcome"], registry=self.registry)
        self.judge_waiting = Gauge(
            "memlattice_update_judge_waiting",
            "Memories waiting in the graph to be judged by the update judge (all"
            " namespaces, as this process last looked).", registry=self.registry)
        self.facts_written = Counter(
            "memlattice_session_facts_written", "Facts the write-side LLM wrote.",
            registry=self.registry)
        for code in error_codes():
            self.errors.labels(code=code)
        for outcome in FACT_ANSWER_OUTCOMES:
            self.fact_answers.labels(outcome=outcome)
        for judged in JUDGE_OUTCOMES:
            self.judge_outcomes.labels(outcome=judged)

    def session_facts(self, outcome: FactsOutcome, n: int) -> None:
        """Count an outcome of memlattice.services.session_facts (`written`: facts)."""
        if outcome == "written":
            self.facts_written.inc(n)
        else:
            self.fact_answers.labels(outcome=outcome).inc(n)

    def update_judge(self, outcome: JudgeOutcome, n: int) -> None:
        """Count an outcome of memlattice.services.update_judge."""
        self.judge_outcomes.labels(outcome=outcome).inc(n)

    def update_judge_waiting(self, n: int) -> None:
        """How many memories wait to be judged (memlattice.services.judge_queue)."""
        self.judge_waiting.set(n)

    def rate_limited(self, key: str, refusal: Refusal) -> None:
        self.refusals.labels(key=key, limit=refusal.limit.value).inc()

    def cost_charged(self, key: str, cost: float) -> None:
        self.cost_charged_total.labels(key=key).inc(cost)

    def key_operations(self, key: str, requests: int, streams: int) -> None:
        self.key_in_flight.labels(key=key, kind="requests").set(requests)
        self.key_in_flight.labels(key=key, kind="streams").set(streams)

    def watch_share(self, share: ProcessShare) -> None:
        """Read the process's operations in flight and capacity at each scrape (every
        kind is shown from the start: those `watch_turns` reads are 0 until it does)."""
        for kind in PROCESS_KINDS:
            self.process_in_flight.labels(kind=kind)
        self.process_in_flight.labels(kind="in_flight").set_function(lambda: share.total)
        self.process_in_flight.labels(kind="capacity").set(share.capacity or 0)

    def watch_turns(self, turns: Any) -> None:
        """Read the requests waiting for their turn, and the running ones giving way at
        a stage boundary (memlattice.server.throttle.Turns)."""
        self.process_in_flight.labels(kind="waiting").set_function(lambda: turns.waiting)
        self.process_in_flight.labels(kind="yielding").set_function(lambda: turns.yielding)

    def observe_query(self, label: str, seconds: float) -> None:
        self.neo4j.labels(query=label).observe(seconds)

    def error(self, code: str) -> None:
        self.errors.labels(code=code).inc()

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class TimedEmbedder(Embedder):
    """Times every call into the wrapped provider; otherwise it is the provider."""

    def __init__(self, inner: Embedder, metrics: Metrics, provider: str) -> None:
        self.inner = inner
        self.model = inner.model
        self.dimension = inner.dimension
        self._histogram = metrics.embedding.labels(provider=provider)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        started = time.perf_counter()
        try:
            return await self.inner.embed(texts)
        finally:
            self._histogram.observe(time.perf_counter() - started)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
