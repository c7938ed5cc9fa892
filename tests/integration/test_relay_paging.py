"""memories as a complete Relay connection: hasPreviousPage, startCursor, and backward
paging with last/before, against the real graph (forward paging and the filters are
tests/integration/test_memories_connection.py's)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.conftest import GraphQLClient
from tests.integration._support import WRITE, WRITE_MANY, code, mem

PAGE = """
query($filter: MemoryFilterInput!, $first: Int, $after: String, $last: Int, $before: String) {
  memories(filter: $filter, first: $first, after: $after, last: $last, before: $before) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { id } }
  }
}
"""


async def page(gql: GraphQLClient, namespace: str, **args: Any) -> dict[str, Any]:
    data = await gql.ok(PAGE, {"filter": {"namespace": namespace}, **args})
    found: dict[str, Any] = data["memories"]
    return found


def ids(found: dict[str, Any]) -> list[str]:
    return [e["node"]["id"] for e in found["edges"]]


def flags(found: dict[str, Any]) -> tuple[bool, bool]:
    info = found["pageInfo"]
    return info["hasPreviousPage"], info["hasNextPage"]


async def seven(gql: GraphQLClient, namespace: str) -> list[str]:
    """Seven memories at known, distinct times; their ids newest first."""
    written = [(await gql.ok(WRITE, {"input": mem(
        namespace, f"memory number {i}", now=f"2024-01-0{i + 1}T00:00:00+00:00")}))[
        "writeMemory"]["id"] for i in range(7)]
    return list(reversed(written))


async def test_backward_pages_walk_the_list_from_the_oldest(
    gql: GraphQLClient, namespace: str,
) -> None:
    newest_first = await seven(gql, namespace)

    oldest = await page(gql, namespace, last=3)
    assert ids(oldest) == newest_first[4:]  # still in list order, newest first
    assert flags(oldest) == (True, False)
    info = oldest["pageInfo"]
    assert info["startCursor"] == oldest["edges"][0]["cursor"]
    assert info["endCursor"] == oldest["edges"][-1]["cursor"]

    middle = await page(gql, namespace, last=3, before=info["startCursor"])
    assert ids(middle) == newest_first[1:4]
    assert flags(middle) == (True, True)

    newest = await page(gql, namespace, last=3, before=middle["pageInfo"]["startCursor"])
    assert ids(newest) == newest_first[:1]
    assert flags(newest) == (False, True)
    assert newest["totalCount"] == 7

    nothing = await page(gql, namespace, last=3, before=newest["pageInfo"]["startCursor"])
    assert nothing["edges"] == [] and flags(nothing) == (False, True)
    assert nothing["pageInfo"]["startCursor"] is None


async def test_forward_pages_say_whether_anything_precedes_them(
    gql: GraphQLClient, namespace: str,
) -> None:
    newest_first = await seven(gql, namespace)
    first = await page(gql, namespace, first=3)
    assert flags(first) == (False, True)
    assert first["pageInfo"]["startCursor"] == first["edges"][0]["cursor"]
    second = await page(gql, namespace, first=3, after=first["pageInfo"]["endCursor"])
    assert ids(second) == newest_first[3:6] and flags(second) == (True, True)
    # Back from the second page with its startCursor: exactly the first page again.
    back = await page(gql, namespace, last=3, before=second["pageInfo"]["startCursor"])
    assert ids(back) == ids(first) and flags(back) == (False, True)


async def test_after_and_before_together_keep_what_lies_between(
    gql: GraphQLClient, namespace: str,
) -> None:
    newest_first = await seven(gql, namespace)
    every = await page(gql, namespace, first=7)
    cursor = [e["cursor"] for e in every["edges"]]
    between = await page(gql, namespace, first=10, after=cursor[1], before=cursor[5])
    assert ids(between) == newest_first[2:5] and flags(between) == (True, False)
    tail = await page(gql, namespace, last=2, after=cursor[1], before=cursor[5])
    assert ids(tail) == newest_first[3:5] and flags(tail) == (True, True)


async def test_backward_paging_breaks_ties_on_equal_created_at(
    gql: GraphQLClient, namespace: str,
) -> None:
    # One batch shares one timestamp: backward pages must still cover it exactly once.
    written = (await gql.ok(WRITE_MANY, {"inputs": [mem(namespace, f"tie {i}")
                                                    for i in range(7)]}))["writeMemories"]
    seen: list[str] = []
    before = None
    while True:
        found = await page(gql, namespace, last=3, before=before)
        seen = ids(found) + seen
        if not found["pageInfo"]["hasPreviousPage"]:
            break
        before = found["pageInfo"]["startCursor"]
    assert seen == sorted((m["id"] for m in written), reverse=True)


async def test_an_as_of_listing_pages_backward_too(gql: GraphQLClient, namespace: str) -> None:
    newest_first = await seven(gql, namespace)
    data = await gql.ok(PAGE, {"filter": {"namespace": namespace,
                                          "asOf": datetime.now(UTC).isoformat()}, "last": 2})
    assert ids(data["memories"]) == newest_first[5:]
    assert flags(data["memories"]) == (True, False)


@pytest.mark.parametrize("args", [
    {"first": 2, "last": 2}, {"last": 0}, {"last": 501}, {"last": 2, "before": "garbage"},
])
async def test_contradicting_or_bad_arguments_are_validation(
    gql: GraphQLClient, namespace: str, args: dict[str, Any],
) -> None:
    error = await gql.error(PAGE, {"filter": {"namespace": namespace}, **args})
    assert code(error) == "VALIDATION"
    assert error["extensions"]["field"] in {"first", "last", "before"}
