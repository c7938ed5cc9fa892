"""The persisted-query store: hashes checked, per owner, bounded in bytes (LRU)."""

from __future__ import annotations

import hashlib

import pytest

from memlattice.core.errors import BadRequest
from memlattice.server.persisted_queries import (
    ENTRY_OVERHEAD_BYTES,
    NOT_FOUND_CODE,
    NOT_SUPPORTED_CODE,
    PersistedQueries,
    PersistedQueryMiss,
)


def ext(query: str) -> dict[str, object]:
    return {"persistedQuery": {"version": 1,
                               "sha256Hash": hashlib.sha256(query.encode()).hexdigest()}}


def test_hash_first_then_text_then_hash_alone() -> None:
    store = PersistedQueries(10_000)
    query = "{ __typename }"
    with pytest.raises(PersistedQueryMiss) as miss:
        store.resolve("key-a", None, ext(query))
    assert (miss.value.message, miss.value.code) == ("PersistedQueryNotFound", NOT_FOUND_CODE)
    assert store.resolve("key-a", query, ext(query)) == query
    assert store.resolve("key-a", None, ext(query)) == query
    with pytest.raises(PersistedQueryMiss):  # another key never sees it
        store.resolve("key-b", None, ext(query))


def test_a_text_that_does_not_match_its_hash_is_refused_and_not_kept() -> None:
    store = PersistedQueries(10_000)
    with pytest.raises(BadRequest, match="does not match"):
        store.resolve("k", "{ __typename }", ext("{ other }"))
    assert len(store) == 0


@pytest.mark.parametrize("extension", [
    {"version": 2, "sha256Hash": "a" * 64}, {"version": 1}, {"version": 1, "sha256Hash": "xyz"},
    {"version": 1, "sha256Hash": "g" * 64}, "abc", [1]])
def test_a_malformed_extension_is_a_bad_request(extension: object) -> None:
    with pytest.raises(BadRequest):
        PersistedQueries(10_000).resolve("k", None, {"persistedQuery": extension})


def test_the_store_keeps_the_most_recently_used_within_its_bytes() -> None:
    queries = [f"{{ q{i}: __typename }}" for i in range(5)]
    each = len(queries[0]) + ENTRY_OVERHEAD_BYTES
    store = PersistedQueries(3 * each)
    for query in queries[:3]:
        store.resolve("k", query, ext(query))
    store.resolve("k", None, ext(queries[0]))  # used again: the freshest now
    store.resolve("k", queries[3], ext(queries[3]))
    assert len(store) == 3 and store.size_bytes <= 3 * each
    assert store.resolve("k", None, ext(queries[0])) == queries[0]
    with pytest.raises(PersistedQueryMiss):
        store.resolve("k", None, ext(queries[1]))  # the least recently used went
    huge = "{ __typename }" + " " * (4 * each)
    assert store.resolve("k", huge, ext(huge)) == huge  # runs, but is not kept
    assert len(store) == 3


def test_off_answers_not_supported_and_still_runs_full_text() -> None:
    store = PersistedQueries(0)
    with pytest.raises(PersistedQueryMiss) as miss:
        store.resolve("k", None, ext("{ __typename }"))
    assert miss.value.code == NOT_SUPPORTED_CODE
    assert store.resolve("k", "{ __typename }", ext("{ __typename }")) == "{ __typename }"
    assert store.resolve("k", "{ a }", None) == "{ a }"
