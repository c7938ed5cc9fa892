"""The last value read for each key and how old it is: the small cache of
counts that searches read without waiting (memlattice.search.index_shares,
memlattice.search.lexical_stats)."""

from __future__ import annotations

import time
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class _Known(Generic[V]):
    at: float
    value: V


class Remembered(Generic[K, V]):
    """The last value read for each key, how old it is, and which keys are being
    read now; at most `max_entries`, the least recently read forgotten first."""

    def __init__(self, ttl_s: float, max_entries: int) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._known: dict[K, _Known[V]] = {}
        self.reading: set[K] = set()

    def get(self, key: K) -> V | None:
        known = self._known.get(key)
        return known.value if known is not None else None

    def due(self, key: K) -> bool:
        """Missing or stale, and nobody reading it yet."""
        if key in self.reading:
            return False
        known = self._known.get(key)
        return known is None or time.monotonic() - known.at >= self.ttl_s

    def put(self, key: K, value: V) -> None:
        self._known.pop(key, None)
        while len(self._known) >= self.max_entries:
            del self._known[next(iter(self._known))]  # dicts keep insertion order
        self._known[key] = _Known(at=time.monotonic(), value=value)
