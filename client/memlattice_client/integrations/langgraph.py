"""A LangGraph `BaseStore` backed by Memlattice: an agent's long-term store as memories.

    from langgraph.graph import StateGraph
    from memlattice_client import MemlatticeClient
    from memlattice_client.integrations.langgraph import MemlatticeStore

    store = MemlatticeStore(MemlatticeClient(), root="agents/support")
    graph = builder.compile(store=store)   # nodes get it as `store` / `runtime.store`

Each item is one memory (see `_items.py` for the mapping): `put` writes it under
an id derived from its namespace and key, `get` reads that id, `search` is
Memlattice's search (with `query`) or its listing (without), filtered by the
value's fields, and `list_namespaces` is `namespaces`. Errors are the client's
typed ones (`ForbiddenError` for a namespace the key may not use, ...), except a
namespace refused as a name, which is also LangGraph's `InvalidNamespaceError`.
Needs the `langgraph` extra: `pip install './client[langgraph]'`.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        IndexConfig,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
    )
    from langgraph.store.base.embed import get_text_at_path
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ImportError("MemlatticeStore needs LangGraph: pip install 'memlattice-client"
                      "[langgraph]' (or './client[langgraph]' from a checkout)") from exc

from memlattice_client import _operations as ops
from memlattice_client._client import AsyncMemlatticeClient, MemlatticeClient
from memlattice_client._errors import ConflictError, NotFoundError, ValidationError
from memlattice_client._inputs import SearchOptions
from memlattice_client._models import Memory, MemoryPage, SearchHit, Status
from memlattice_client.integrations import _items
from memlattice_client.integrations._steps import Steps, run_async, run_sync

__all__ = ["MemlatticeStore", "NamespaceRefusedError"]

# The API's caps: a search returns at most 200 hits, a page at most 500 memories,
# `namespaces` at most 1000 names.
MAX_HITS = 200
MAX_PAGE = 500
MAX_NAMESPACES = 1000
MEMORY_TYPE = "langgraph_item"


class NamespaceRefusedError(ValidationError, InvalidNamespaceError):
    """A namespace Memlattice refuses as a name (code VALIDATION): LangGraph's
    `InvalidNamespaceError`, and the client's `ValidationError` with the server's
    code and extensions."""


class MemlatticeStore(BaseStore):
    """LangGraph's store interface over a Memlattice server.

    `client` serves `batch` (and the sync methods); `async_client` serves `abatch`
    (and the `a*` methods), which otherwise run the sync client in a thread.
    `root` is prefixed to every namespace. `index` lists the value fields whose
    text is embedded and searched (LangGraph's path syntax, `"text"`,
    `"items[*].name"`), or is an `IndexConfig` whose `fields` do (its `embed` and
    `dims` are the server's business); without it, a value's JSON is.
    `search_options` go to every search (`scoring=`, `min_score=`, `user_id=`, ...).
    A `ttl` on put (minutes) becomes the memory's `expiresAt`; reads do not extend it.
    """

    supports_ttl = True

    def __init__(self, client: MemlatticeClient | None = None, *,
                 async_client: AsyncMemlatticeClient | None = None, root: str | None = None,
                 index: IndexConfig | list[str] | None = None,
                 search_options: SearchOptions | None = None) -> None:
        if client is None and async_client is None:
            raise TypeError("MemlatticeStore needs a client, an async_client or both")
        self.client = client
        self.async_client = async_client
        self.root = root.strip("/") if root else None
        # An IndexConfig's `embed` and `dims` do not apply: the server embeds.
        fields = index.get("fields") if isinstance(index, Mapping) else index
        self.index_fields = list(fields) if fields else None
        self.search_options: SearchOptions = search_options or {}

    # ---------------------------------------------------------------- BaseStore

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if self.client is None:
            raise TypeError("this MemlatticeStore has only an async_client: use abatch/a*")
        results: list[Result] = []
        with _namespace_refusals():
            for op in ops:
                results.append(run_sync(self.client, self._steps(op)))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        if self.async_client is None:
            return await asyncio.to_thread(self.batch, list(ops))
        results: list[Result] = []
        with _namespace_refusals():
            for op in ops:
                results.append(await run_async(self.async_client, self._steps(op)))
        return results

    # ---------------------------------------------------------------- operations

    def _steps(self, op: Op) -> Steps[Result]:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise TypeError(f"unknown store operation {type(op).__name__}")

    def _namespace(self, labels: tuple[str, ...]) -> str:
        try:
            return _items.namespace_of(self.root, labels)
        except ValueError as exc:
            raise NamespaceRefusedError(str(exc), code="VALIDATION",
                                        extensions={"field": "namespace"}) from exc

    def _get(self, op: GetOp) -> Steps[Result]:
        namespace = self._namespace(op.namespace)
        try:
            memory: Memory = yield ops.memory(namespace, _items.item_id(namespace, op.key))
        except NotFoundError:
            return None
        if memory.status is not Status.ACTIVE:  # forgotten or superseded through the API
            return None
        return _item(self.root, memory)

    def _put(self, op: PutOp) -> Steps[Result]:
        namespace = self._namespace(op.namespace)
        id = _items.item_id(namespace, op.key)
        if op.value is None:
            try:
                yield ops.delete_memory(namespace, id)
            except NotFoundError:
                pass
            return None
        value = dict(op.value)
        fields: dict[str, Any] = {
            "content": _items.content_of(value, self._texts(value, op.index)),
            "value": value, "metadata": _items.filterable(value),
            "expires_at": (datetime.now(UTC) + timedelta(minutes=op.ttl)
                           if op.ttl is not None else None)}
        created = {k: v for k, v in fields.items() if v is not None}
        content = created.pop("content")
        try:  # a new key: one request; the id is ours or refused (CONFLICT)
            yield ops.write_memory(namespace, content, id=id, key=op.key,
                                   memory_type=MEMORY_TYPE, allow_duplicate=True, **created)
            return None
        except ConflictError:
            pass
        try:  # the key exists: replace what it holds (a None expiry clears it)
            yield ops.update_memory(namespace, id, **fields)
        except (NotFoundError, ConflictError):
            # Held by a memory that cannot be updated (expired, forgotten through the
            # API): it is erased, and the item written afresh.
            try:
                yield ops.delete_memory(namespace, id)
            except NotFoundError:
                pass
            yield ops.write_memory(namespace, content, id=id, key=op.key,
                                   memory_type=MEMORY_TYPE, allow_duplicate=True, **created)
        return None

    def _texts(self, value: dict[str, Any], index: Any) -> list[str]:
        fields = self.index_fields if index is None else (index or None)
        if not fields:
            return []
        return [text for path in fields for text in get_text_at_path(value, path)]

    def _search(self, op: SearchOp) -> Steps[Result]:
        prefix = self._namespace(op.namespace_prefix) if op.namespace_prefix else self.root
        listed: list[str] = yield ops.namespaces(prefix=prefix or None, limit=MAX_NAMESPACES)
        # A named prefix is always searched itself, so a namespace the key may not read
        # is refused (FORBIDDEN) as the API refuses it, not answered with nothing.
        names = [prefix] if prefix and op.namespace_prefix else []
        names += [n for n in listed if n != prefix and _items.labels_of(self.root, n) is not None
                  and (prefix is None or n.startswith(prefix + _items.SEPARATOR))]
        want = op.offset + op.limit
        # Equality on plain fields runs in Neo4j; the rest is checked here, on more hits.
        on_server = _items.server_filter(op.filter)
        exact = on_server == dict(op.filter or {})
        options: dict[str, Any] = {
            **self.search_options, "limit": min(MAX_HITS, want if exact else MAX_HITS),
            "filter": {**self.search_options.get("filter", {}), "metadata": on_server}}
        # Best first: by score with a query, else newest first (the listing's order).
        found: list[tuple[float, SearchItem]] = []
        for name in names:
            if op.query:
                hits: list[SearchHit] = yield ops.search(name, op.query, **options)
                found += [(h.score, _search_item(self.root, h.memory, h.score)) for h in hits
                          if _items.matches(_items.value_of(h.memory), op.filter)]
            else:
                newest = yield from self._listing(name, on_server, op.filter, want)
                found += [(m.created_at.timestamp(), _search_item(self.root, m, None))
                          for m in newest]
        best = heapq.nlargest(want, found, key=lambda pair: pair[0])
        return [item for _, item in best[op.offset:]]

    def _listing(self, namespace: str, on_server: dict[str, Any],
                 flt: Mapping[str, Any] | None, want: int) -> Steps[list[Memory]]:
        """The newest `want` memories of a namespace that pass the filter."""
        kept: list[Memory] = []
        after: str | None = None
        while len(kept) < want:
            page: MemoryPage = yield ops.memories(namespace, first=min(MAX_PAGE, max(want, 10)),
                                                  after=after, metadata=on_server)
            kept += [m for m in page.items if _items.matches(_items.value_of(m), flt)]
            if not page.has_next_page:
                break
            after = page.end_cursor
        return kept[:want]

    def _list_namespaces(self, op: ListNamespacesOp) -> Steps[Result]:
        conditions = op.match_conditions or ()
        # Every condition must hold: the longest fixed start of a prefix narrows the most.
        fixed: list[tuple[str, ...]] = [tuple(c.path[:_first_wildcard(tuple(c.path))])
                                        for c in conditions if c.match_type == "prefix"]
        start = max(fixed, key=len, default=())
        prefix = self._namespace(start) if start else None
        names: list[str] = yield ops.namespaces(prefix=prefix or self.root or None,
                                                limit=MAX_NAMESPACES)
        found: set[tuple[str, ...]] = set()
        for name in names:
            labels = _items.labels_of(self.root, name)
            if labels is not None and all(_matches(c, labels) for c in conditions):
                found.add(labels[:op.max_depth] if op.max_depth is not None else labels)
        return sorted(found)[op.offset:op.offset + op.limit]


def _labels(root: str | None, memory: Memory) -> tuple[str, ...]:
    return _items.labels_of(root, memory.namespace) or (memory.namespace,)


def _item(root: str | None, memory: Memory) -> Item:
    return Item(namespace=_labels(root, memory), key=memory.key or memory.id,
                value=_items.value_of(memory), created_at=memory.created_at,
                updated_at=memory.updated_at)


def _search_item(root: str | None, memory: Memory, score: float | None) -> SearchItem:
    return SearchItem(namespace=_labels(root, memory), key=memory.key or memory.id,
                      value=_items.value_of(memory), created_at=memory.created_at,
                      updated_at=memory.updated_at, score=score)


def _first_wildcard(path: tuple[str, ...]) -> int:
    return next((i for i, label in enumerate(path) if label == "*"), len(path))


def _matches(condition: MatchCondition, labels: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(labels) < len(path):
        return False
    part = labels[:len(path)] if condition.match_type == "prefix" else labels[-len(path):]
    return all(p in ("*", label) for p, label in zip(path, part, strict=True))


@contextlib.contextmanager
def _namespace_refusals() -> Iterator[None]:
    """Re-raise the server's refusal of a namespace (VALIDATION naming the field
    `namespace`) as NamespaceRefusedError, LangGraph's InvalidNamespaceError too."""
    try:
        yield
    except NamespaceRefusedError:
        raise
    except ValidationError as exc:
        named = [exc.extensions.get("field"), *(exc.extensions.get("fields") or [])]
        if not any(isinstance(f, str) and (f == "namespace" or f.endswith(".namespace"))
                   for f in named):
            raise
        raise NamespaceRefusedError(exc.message, code=exc.code, path=exc.path,
                                    extensions=exc.extensions) from exc

