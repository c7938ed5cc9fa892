"""`MemlatticeClient` and `AsyncMemlatticeClient`: two thin transports over one set of
operations.

Each method is generated from its builder in `_operations.py` (`_sync` and
`_async` wrap it with a send), so an operation's arguments, document and
result parsing exist once and both clients stay identical by construction;
only sending (and the few helpers that loop, such as `iter_memories`) differs.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, Self, TypeVar, Unpack

import httpx

from memlattice_client import _knowledge as kn
from memlattice_client import _operations as ops
from memlattice_client import _updates as up
from memlattice_client._causal import HEADER as BOOKMARK_HEADER
from memlattice_client._causal import CausalChain
from memlattice_client._errors import (
    BadBookmarkError,
    MemlatticeError,
    RateLimitedError,
    RequestTimeoutError,
    UnavailableError,
    error_from_graphql,
    error_from_status,
)
from memlattice_client._events import EventFilter, EventStream, subscribe
from memlattice_client._inputs import FilterFields, SearchOptions
from memlattice_client._models import Memory
from memlattice_client._operations import Call
from memlattice_client._prompt import TokenCounter, estimate_tokens, format_memories
from memlattice_client._selections import Detail
from memlattice_client._turns import DEFAULT_PATIENCE_S, next_wait

DEFAULT_URL = "http://127.0.0.1:8000"
ACTOR_HEADER = "x-memlattice-actor"

P = ParamSpec("P")
T = TypeVar("T")


class _Base:
    """Configuration and response reading shared by both clients (no I/O here)."""

    def __init__(self, url: str | None, api_key: str | None, actor: str | None,
                 headers: Mapping[str, str] | None, causal: bool, bookmark: str | None,
                 rate_limit_patience: float = DEFAULT_PATIENCE_S) -> None:
        if rate_limit_patience < 0:
            raise ValueError("rate_limit_patience is a number of seconds, 0 or more")
        self.rate_limit_patience = rate_limit_patience
        # Carried from each response to the next request (see _causal.py); None: off.
        self._chain = CausalChain(bookmark) if causal else None
        base = (url or os.environ.get("MEMLATTICE_URL") or DEFAULT_URL).rstrip("/")
        self.endpoint = base if base.endswith("/graphql") else base + "/graphql"
        key = api_key if api_key is not None else os.environ.get("MEMLATTICE_API_KEY")
        self.headers: dict[str, str] = {"accept": "application/json", **(headers or {})}
        if key:
            self.headers["authorization"] = f"Bearer {key}"
        if actor:
            self.headers[ACTOR_HEADER] = actor

    @property
    def bookmark(self) -> str | None:
        """The causal bookmark the next request will send (None: none yet, or
        `causal=False`). Hand it to another client (`bookmark=`) to make that
        client's requests see this one's writes, whichever replica serves them."""
        return self._chain.value if self._chain is not None else None

    @staticmethod
    def _payload(call: Call[Any]) -> dict[str, Any]:
        return {"query": call.document, "variables": call.variables}

    def _outgoing(self) -> tuple[tuple[str, ...], dict[str, str] | None]:
        """The tokens this request sends, and the header that sends them."""
        sent = self._chain.outgoing() if self._chain is not None else ()
        return sent, ({BOOKMARK_HEADER: ",".join(sent)} if sent else None)

    def _answered(self, call: Call[T], sent: tuple[str, ...], response: httpx.Response) -> T:
        """Advance the causal chain with the response's bookmark, then read it."""
        if self._chain is None:
            return self._read(call, response)
        self._chain.advance(sent, response.headers.get(BOOKMARK_HEADER))
        try:
            return self._read(call, response)
        except BadBookmarkError:
            self._chain.forget(sent)  # a retry then runs without the refused bookmark
            raise

    @staticmethod
    def _read(call: Call[T], response: httpx.Response) -> T:
        try:
            body = response.json()
        except ValueError:
            raise error_from_status(response.status_code, response.text) from None
        if not isinstance(body, dict):
            raise error_from_status(response.status_code, response.text)
        if body.get("errors"):
            raise error_from_graphql(body["errors"][0])
        if response.is_error or not isinstance(body.get("data"), dict):
            raise error_from_status(response.status_code, response.text)
        return call.result(body["data"])

    @staticmethod
    def _unavailable(exc: httpx.HTTPError, endpoint: str) -> MemlatticeError:
        cls = RequestTimeoutError if isinstance(exc, httpx.TimeoutException) else UnavailableError
        return cls(f"cannot reach {endpoint}: {exc.__class__.__name__}: {exc}")


def _signature(builder: Callable[..., Any]) -> inspect.Signature:
    """The builder's signature as a method's: `self` first, returning what the Call parses."""
    sig = inspect.signature(builder)
    returns = str(sig.return_annotation).removeprefix("Call[").removesuffix("]")
    me = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    return sig.replace(parameters=[me, *sig.parameters.values()], return_annotation=returns)


def _sync(builder: Callable[P, Call[T]]) -> Callable[Concatenate[MemlatticeClient, P], T]:
    @functools.wraps(builder)
    def method(self: MemlatticeClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self.send(builder(*args, **kwargs))

    method.__signature__ = _signature(builder)  # type: ignore[attr-defined]
    return method


def _async(
    builder: Callable[P, Call[T]],
) -> Callable[Concatenate[AsyncMemlatticeClient, P], Coroutine[Any, Any, T]]:
    @functools.wraps(builder)
    async def method(self: AsyncMemlatticeClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self.send(builder(*args, **kwargs))

    method.__signature__ = _signature(builder)  # type: ignore[attr-defined]
    return method


class MemlatticeClient(_Base):
    """Blocking client. `MemlatticeClient()` reads `MEMLATTICE_URL` and `MEMLATTICE_API_KEY`.

    Every method raises a `MemlatticeError` subclass named after the error code
    (`NotFoundError`, `VersionConflictError`, ...); a server that cannot be
    reached raises `UnavailableError`. Use it as a context manager, or `close()`.
    Each request sends the causal bookmark of the responses before it, so it sees
    their writes through any replica; `causal=False` turns that off, `bookmark=`
    starts from another client's `bookmark`. A request the server refuses for now
    (HTTP 429, `RateLimitedError`: nothing ran) is sent again after the
    `Retry-After` it was given, up to `rate_limit_patience` seconds in all
    (10 by default; 0 raises at once).
    """

    def __init__(
        self, url: str | None = None, *, api_key: str | None = None, actor: str | None = None,
        timeout: float = 30.0, headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None, causal: bool = True,
        bookmark: str | None = None, rate_limit_patience: float = DEFAULT_PATIENCE_S,
    ) -> None:
        super().__init__(url, api_key, actor, headers, causal, bookmark, rate_limit_patience)
        self._http = httpx.Client(headers=self.headers, timeout=timeout, transport=transport)

    def send(self, call: Call[T]) -> T:
        """Send one operation and parse its result (the methods below all come here),
        again after a 429's `Retry-After` while `rate_limit_patience` lasts."""
        waited = 0.0
        while True:
            sent, headers = self._outgoing()
            try:
                response = self._http.post(self.endpoint, json=self._payload(call),
                                           headers=headers)
            except httpx.HTTPError as exc:
                raise self._unavailable(exc, self.endpoint) from exc
            try:
                return self._answered(call, sent, response)
            except RateLimitedError as refused:
                wait = next_wait(refused, waited, self.rate_limit_patience)
                if wait is None:
                    raise
            waited += wait
            time.sleep(wait)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        self._http.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    write_memory = _sync(ops.write_memory)
    write_memories = _sync(ops.write_memories)
    ingest_conversation = _sync(ops.ingest_conversation)
    update_memory = _sync(ops.update_memory)
    supersede_memory = _sync(ops.supersede_memory)
    configure_namespace = _sync(ops.configure_namespace)
    add_edge = _sync(ops.add_edge)
    add_edges = _sync(ops.add_edges)
    delete_edge = _sync(ops.delete_edge)
    forget = _sync(ops.forget)
    delete_memory = _sync(ops.delete_memory)
    wipe_namespace = _sync(ops.wipe_namespace)
    memory = _sync(ops.memory)
    session = _sync(ops.session)
    memory_history = _sync(ops.memory_history)
    memories = _sync(ops.memories)
    edges = _sync(ops.edges)
    namespace_config = _sync(ops.namespace_config)
    namespaces = _sync(ops.namespaces)
    embedding_status = _sync(ops.embedding_status)
    summarize = _sync(ops.summarize)
    audit_trail = _sync(ops.audit_trail)
    search = _sync(ops.search)
    record = _sync(kn.record)
    records = _sync(kn.records)
    recall_facts = _sync(kn.recall_facts)
    facts_by_evidence = _sync(kn.facts_by_evidence)
    write_record = _sync(kn.write_record)
    update_record = _sync(kn.update_record)
    discard_task = _sync(kn.discard_task)
    store_fact = _sync(kn.store_fact)
    invalidate_facts = _sync(kn.invalidate_facts)
    supersede_record = _sync(kn.supersede_record)
    fork_record = _sync(kn.fork_record)
    contest_record = _sync(kn.contest_record)
    retract_record = _sync(kn.retract_record)
    merge_records = _sync(kn.merge_records)
    consolidate = _sync(kn.consolidate)
    memory_updates = _sync(up.memory_updates)
    confirm_update = _sync(up.confirm_update)
    reject_update = _sync(up.reject_update)
    propose_update = _sync(up.propose_update)
    may_replace = _sync(up.may_replace)

    def iter_memories(self, namespace: str, *, page_size: int = 20, detail: Detail = "brief",
                      **filter: Unpack[FilterFields]) -> Iterator[Memory]:
        """Every memory matching the filter, newest first, `page_size` a page (20: within
        a key's cost bucket), with their main fields (`detail="full"`: every field)."""
        after: str | None = None
        while True:
            page = self.memories(namespace, first=page_size, after=after, detail=detail,
                                 **filter)
            yield from page.items
            if not page.has_next_page:
                return
            after = page.end_cursor

    # Overlap of `limit` and `now` with SearchOptions (PEP 692): the named arguments
    # take them (`now` dates the prompt's lines; the search runs at the server's now).
    def recall_for_prompt(  # type: ignore[misc]
        self, query: str, budget_tokens: int, *, namespace: str, limit: int = 20,
        count_tokens: TokenCounter = estimate_tokens, show_scores: bool = True,
        now: datetime | None = None, **options: Unpack[SearchOptions],
    ) -> str:
        """Search, then format the best memories as a prompt block of at most
        `budget_tokens` (see `memlattice_client.format_memories`)."""
        hits = self.search(namespace, query, limit=limit, **options)
        return format_memories(hits, budget_tokens, query=query, now=now,
                               count_tokens=count_tokens, show_scores=show_scores)


class AsyncMemlatticeClient(_Base):
    """The same methods as `MemlatticeClient`, as coroutines; `async with` it, or `aclose()`.
    Requests that overlap each keep their answer's bookmark (see `_causal.py`)."""

    def __init__(
        self, url: str | None = None, *, api_key: str | None = None, actor: str | None = None,
        timeout: float = 30.0, headers: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None, causal: bool = True,
        bookmark: str | None = None, rate_limit_patience: float = DEFAULT_PATIENCE_S,
    ) -> None:
        super().__init__(url, api_key, actor, headers, causal, bookmark, rate_limit_patience)
        self._http = httpx.AsyncClient(headers=self.headers, timeout=timeout, transport=transport)

    async def send(self, call: Call[T]) -> T:
        """Send one operation and parse its result (the methods below all come here),
        again after a 429's `Retry-After` while `rate_limit_patience` lasts."""
        waited = 0.0
        while True:
            sent, headers = self._outgoing()
            try:
                response = await self._http.post(self.endpoint, json=self._payload(call),
                                                 headers=headers)
            except httpx.HTTPError as exc:
                raise self._unavailable(exc, self.endpoint) from exc
            try:
                return self._answered(call, sent, response)
            except RateLimitedError as refused:
                wait = next_wait(refused, waited, self.rate_limit_patience)
                if wait is None:
                    raise
            waited += wait
            await asyncio.sleep(wait)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        await self._http.__aenter__()  # enters the transport too (e.g. a WebSocket one)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    write_memory = _async(ops.write_memory)
    write_memories = _async(ops.write_memories)
    ingest_conversation = _async(ops.ingest_conversation)
    update_memory = _async(ops.update_memory)
    supersede_memory = _async(ops.supersede_memory)
    configure_namespace = _async(ops.configure_namespace)
    add_edge = _async(ops.add_edge)
    add_edges = _async(ops.add_edges)
    delete_edge = _async(ops.delete_edge)
    forget = _async(ops.forget)
    delete_memory = _async(ops.delete_memory)
    wipe_namespace = _async(ops.wipe_namespace)
    memory = _async(ops.memory)
    session = _async(ops.session)
    memory_history = _async(ops.memory_history)
    memories = _async(ops.memories)
    edges = _async(ops.edges)
    namespace_config = _async(ops.namespace_config)
    namespaces = _async(ops.namespaces)
    embedding_status = _async(ops.embedding_status)
    summarize = _async(ops.summarize)
    audit_trail = _async(ops.audit_trail)
    search = _async(ops.search)
    record = _async(kn.record)
    records = _async(kn.records)
    recall_facts = _async(kn.recall_facts)
    facts_by_evidence = _async(kn.facts_by_evidence)
    write_record = _async(kn.write_record)
    update_record = _async(kn.update_record)
    discard_task = _async(kn.discard_task)
    store_fact = _async(kn.store_fact)
    invalidate_facts = _async(kn.invalidate_facts)
    supersede_record = _async(kn.supersede_record)
    fork_record = _async(kn.fork_record)
    contest_record = _async(kn.contest_record)
    retract_record = _async(kn.retract_record)
    merge_records = _async(kn.merge_records)
    consolidate = _async(kn.consolidate)
    memory_updates = _async(up.memory_updates)
    confirm_update = _async(up.confirm_update)
    reject_update = _async(up.reject_update)
    propose_update = _async(up.propose_update)
    may_replace = _async(up.may_replace)

    async def iter_memories(self, namespace: str, *, page_size: int = 20,
                            detail: Detail = "brief",
                            **filter: Unpack[FilterFields]) -> AsyncIterator[Memory]:
        """Every memory matching the filter, newest first, `page_size` a page (20: within
        a key's cost bucket), with their main fields (`detail="full"`: every field)."""
        after: str | None = None
        while True:
            page = await self.memories(namespace, first=page_size, after=after,
                                       detail=detail, **filter)
            for item in page.items:
                yield item
            if not page.has_next_page:
                return
            after = page.end_cursor

    def memory_events(
        self, namespace: str, *, timeout: float | None = None, after: str | None = None,
        **filter: Unpack[EventFilter],
    ) -> AbstractAsyncContextManager[EventStream]:
        """Subscribe to `namespace`'s committed changes (`memoryEvents`); use as
        `async with client.memory_events(ns) as events: async for e in events: ...`.
        Needs the httpx-ws package; `timeout` bounds each wait for an event; `after`
        (an earlier event's `cursor`) first delivers what followed that event."""
        return subscribe(self._http, self.endpoint, self.headers.get("authorization"),
                         namespace, filter, timeout=timeout, after=after)

    # Overlap of `limit` and `now` with SearchOptions (PEP 692): the named arguments
    # take them (`now` dates the prompt's lines; the search runs at the server's now).
    async def recall_for_prompt(  # type: ignore[misc]
        self, query: str, budget_tokens: int, *, namespace: str, limit: int = 20,
        count_tokens: TokenCounter = estimate_tokens, show_scores: bool = True,
        now: datetime | None = None, **options: Unpack[SearchOptions],
    ) -> str:
        """Search, then format the best memories as a prompt block of at most
        `budget_tokens` (see `memlattice_client.format_memories`)."""
        hits = await self.search(namespace, query, limit=limit, **options)
        return format_memories(hits, budget_tokens, query=query, now=now,
                               count_tokens=count_tokens, show_scores=show_scores)
