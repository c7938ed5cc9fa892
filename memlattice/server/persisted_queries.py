"""Automatic persisted queries, as Apollo Client's persisted-query link sends them.

A client first sends only the SHA-256 of its document,
`extensions: {persistedQuery: {version: 1, sha256Hash: "<hex>"}}`, without
`query`. When this process knows the hash for the caller's key, the document
it stands for runs; otherwise the answer is Apollo's standard
`PersistedQueryNotFound` (code `PERSISTED_QUERY_NOT_FOUND`, HTTP 200, no
`data`, not cacheable) and the client sends the hash again with the full
text, which is checked against the hash and remembered.

What a stored document gets is exactly what its full text would get: the
key is checked first (memlattice.server.http_auth), and the text runs
through the same parser, validation, depth / alias / cost limits and
resolvers. Documents are remembered per key (a hash one key registered is
unknown to another, so a cache hit tells nobody what another tenant asked),
in a least-recently-used store bounded in bytes
(`MEMLATTICE_LIMIT_PERSISTED_QUERIES_BYTES`; 0 turns the feature off and
answers `PersistedQueryNotSupported`, after which Apollo's link sends full
text). Each process keeps its own store: after a restart or on another
replica, a client simply sends the text once more.
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from typing import Any

from memlattice.core.errors import BadRequest

NOT_FOUND_MESSAGE = "PersistedQueryNotFound"
NOT_FOUND_CODE = "PERSISTED_QUERY_NOT_FOUND"
NOT_SUPPORTED_MESSAGE = "PersistedQueryNotSupported"
NOT_SUPPORTED_CODE = "PERSISTED_QUERY_NOT_SUPPORTED"
# Apollo Server's answer to both: 200, so that nothing masks the body, and never cached.
ANSWER_HEADERS = {"cache-control": "private, no-cache, must-revalidate"}
# What one remembered document costs beyond its text (key, hash, bookkeeping).
ENTRY_OVERHEAD_BYTES = 256
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


class PersistedQueryMiss(Exception):
    """The hash is not known (or the feature is off): the client should send the text."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def requested_hash(extensions: dict[str, Any] | None) -> str | None:
    """The SHA-256 a request names in `extensions.persistedQuery`, lower case; None
    when it names none; BadRequest when the extension is malformed."""
    persisted = (extensions or {}).get("persistedQuery")
    if persisted is None:
        return None
    if not isinstance(persisted, dict) or persisted.get("version") != 1:
        raise BadRequest("`extensions.persistedQuery` must be {version: 1, sha256Hash: ...}"
                         " (only version 1 is supported)")
    digest = persisted.get("sha256Hash")
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
        raise BadRequest("`extensions.persistedQuery.sha256Hash` must be 64 hex digits")
    return digest.lower()


class PersistedQueries:
    """Documents by (owner, SHA-256), least recently used first out, at most
    `max_bytes` of text and overhead in all."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._documents: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._documents)

    @property
    def size_bytes(self) -> int:
        return self._bytes

    @staticmethod
    def _cost(query: str) -> int:
        return len(query.encode()) + ENTRY_OVERHEAD_BYTES

    def _remember(self, key: tuple[str, str], query: str) -> None:
        if key in self._documents:
            self._documents.move_to_end(key)
            return
        cost = self._cost(query)
        if cost > self.max_bytes:
            return  # runs, but is too large to keep
        self._documents[key] = query
        self._bytes += cost
        while self._bytes > self.max_bytes:
            _, evicted = self._documents.popitem(last=False)
            self._bytes -= self._cost(evicted)

    def resolve(self, owner: str, query: str | None,
                extensions: dict[str, Any] | None) -> str | None:
        """The document to run for a request of `owner` (an API key's identity):
        its own `query` when it names no persisted hash; with a hash, the text it
        sent (checked against the hash, then remembered) or the one remembered.
        Raises BadRequest for a malformed extension or a text that does not match
        its hash, PersistedQueryMiss for a hash without text that is not known."""
        digest = requested_hash(extensions)
        if digest is None:
            return query
        if self.max_bytes == 0:
            if query is not None:
                return query  # the full text is always fine
            raise PersistedQueryMiss(NOT_SUPPORTED_MESSAGE, NOT_SUPPORTED_CODE)
        key = (owner, digest)
        if query is not None:
            if hashlib.sha256(query.encode()).hexdigest() != digest:
                raise BadRequest("provided sha does not match query",
                                 field="extensions.persistedQuery.sha256Hash")
            self._remember(key, query)
            return query
        remembered = self._documents.get(key)
        if remembered is None:
            raise PersistedQueryMiss(NOT_FOUND_MESSAGE, NOT_FOUND_CODE)
        self._documents.move_to_end(key)
        return remembered
