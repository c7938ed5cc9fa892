"""memories(filter, first, after): keyset pagination and every filter field."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import GraphQLClient
from tests.integration._support import FORGET, LIST, SUPERSEDE, WRITE, WRITE_MANY, code, mem


async def listing(gql: GraphQLClient, flt: dict[str, Any], first: int = 50,
                  after: str | None = None) -> dict[str, Any]:
    data = await gql.ok(LIST, {"filter": flt, "first": first, "after": after})
    result: dict[str, Any] = data["memories"]
    return result


async def ids_of(gql: GraphQLClient, flt: dict[str, Any]) -> list[str]:
    return [e["node"]["id"] for e in (await listing(gql, flt))["edges"]]


async def write_seven(gql: GraphQLClient, namespace: str) -> list[dict[str, Any]]:
    """Seven memories at distinct, known times: m0 oldest ... m6 newest."""
    written = []
    for i in range(7):
        written.append((await gql.ok(WRITE, {"input": mem(
            namespace, f"memory number {i}", now=f"2024-01-0{i + 1}T00:00:00+00:00")}))[
            "writeMemory"])
    return written


async def test_pages_of_three_over_seven(gql: GraphQLClient, namespace: str) -> None:
    written = await write_seven(gql, namespace)
    newest_first = [m["id"] for m in reversed(written)]
    flt = {"namespace": namespace}

    page1 = await listing(gql, flt, first=3)
    assert [e["node"]["id"] for e in page1["edges"]] == newest_first[:3]
    assert page1["pageInfo"]["hasNextPage"] is True
    assert page1["totalCount"] == 7
    assert page1["pageInfo"]["endCursor"] == page1["edges"][-1]["cursor"]

    page2 = await listing(gql, flt, first=3, after=page1["pageInfo"]["endCursor"])
    assert [e["node"]["id"] for e in page2["edges"]] == newest_first[3:6]
    assert page2["pageInfo"]["hasNextPage"] is True
    assert page2["totalCount"] == 7

    page3 = await listing(gql, flt, first=3, after=page2["pageInfo"]["endCursor"])
    assert [e["node"]["id"] for e in page3["edges"]] == newest_first[6:]
    assert page3["pageInfo"]["hasNextPage"] is False
    assert page3["totalCount"] == 7

    page4 = await listing(gql, flt, first=3, after=page3["pageInfo"]["endCursor"])
    assert page4["edges"] == []
    assert page4["pageInfo"] == {"hasNextPage": False, "endCursor": None}

    # Every edge's own cursor resumes right after it.
    resumed = await listing(gql, flt, first=2, after=page1["edges"][0]["cursor"])
    assert [e["node"]["id"] for e in resumed["edges"]] == newest_first[1:3]


async def test_exact_page_size_has_no_next_page(gql: GraphQLClient, namespace: str) -> None:
    await gql.ok(WRITE_MANY, {"inputs": [mem(namespace, f"n{i}") for i in range(3)]})
    page = await listing(gql, {"namespace": namespace}, first=3)
    assert len(page["edges"]) == 3 and page["pageInfo"]["hasNextPage"] is False


async def test_pagination_breaks_ties_on_equal_created_at(
    gql: GraphQLClient, namespace: str
) -> None:
    # One batch shares one timestamp: order must still be total and stable.
    written = (await gql.ok(WRITE_MANY, {"inputs": [mem(namespace, f"tie {i}")
                                                    for i in range(7)]}))["writeMemories"]
    seen: list[str] = []
    after = None
    while True:
        page = await listing(gql, {"namespace": namespace}, first=3, after=after)
        seen += [e["node"]["id"] for e in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert sorted(seen) == sorted(m["id"] for m in written)
    assert len(seen) == 7
    assert seen == sorted(seen, reverse=True)


async def test_empty_namespace_lists_nothing(gql: GraphQLClient, namespace: str) -> None:
    page = await listing(gql, {"namespace": namespace}, first=5)
    assert page == {"totalCount": 0, "pageInfo": {"hasNextPage": False, "endCursor": None},
                    "edges": []}


async def test_bad_cursor_is_validation(gql: GraphQLClient, namespace: str) -> None:
    await gql.ok(WRITE, {"input": mem(namespace, "one")})
    for cursor in ("garbage", "!!!", "bm90IGpzb24=", "WzEsMl0=", "IjEi", "W10=", "e30="):
        body = await gql.raw(LIST, {"filter": {"namespace": namespace}, "first": 3,
                                    "after": cursor})
        assert body.get("errors"), (cursor, body)
        assert code(body["errors"][0]) == "VALIDATION", (cursor, body)
    # An empty `after` is treated as "from the start".
    page = await listing(gql, {"namespace": namespace}, first=3, after="")
    assert len(page["edges"]) == 1


@pytest.mark.parametrize("first", [0, -1, 501])
async def test_first_out_of_range_is_validation(
    gql: GraphQLClient, namespace: str, first: int
) -> None:
    error = await gql.error(LIST, {"filter": {"namespace": namespace}, "first": first})
    assert code(error) == "VALIDATION"


async def test_tag_filters(gql: GraphQLClient, namespace: str) -> None:
    a = (await gql.ok(WRITE, {"input": mem(namespace, "a", tags=["red", "big"])}))["writeMemory"]
    b = (await gql.ok(WRITE, {"input": mem(namespace, "b", tags=["red"])}))["writeMemory"]
    c = (await gql.ok(WRITE, {"input": mem(namespace, "c", tags=["blue", "big"])}))["writeMemory"]
    await gql.ok(WRITE, {"input": mem(namespace, "d")})

    def s(ids: list[str]) -> set[str]:
        return set(ids)

    assert s(await ids_of(gql, {"namespace": namespace, "tagsAny": ["red"]})) == {a["id"], b["id"]}
    assert s(await ids_of(gql, {"namespace": namespace, "tagsAny": ["blue", "big"]})) == {
        a["id"], c["id"]}
    assert s(await ids_of(gql, {"namespace": namespace, "tagsAll": ["red", "big"]})) == {a["id"]}
    assert s(await ids_of(gql, {"namespace": namespace, "tagsAll": ["big"]})) == {a["id"], c["id"]}
    assert await ids_of(gql, {"namespace": namespace, "tagsAll": ["red", "blue"]}) == []
    assert await ids_of(gql, {"namespace": namespace, "tagsAny": ["RED"]}) == []  # exact
    assert s(await ids_of(gql, {"namespace": namespace, "tagsAny": ["red"],
                                "tagsAll": ["big"]})) == {a["id"]}
    page = await listing(gql, {"namespace": namespace, "tagsAny": ["big"]})
    assert page["totalCount"] == 2


async def test_key_and_source_type_filters(gql: GraphQLClient, namespace: str) -> None:
    a = (await gql.ok(WRITE, {"input": mem(namespace, "a", key="user.name",
                                           sourceType="chat")}))["writeMemory"]
    b = (await gql.ok(WRITE, {"input": mem(namespace, "b", key="user.city",
                                           sourceType="doc")}))["writeMemory"]
    assert await ids_of(gql, {"namespace": namespace, "key": "user.name"}) == [a["id"]]
    assert await ids_of(gql, {"namespace": namespace, "key": "user"}) == []
    assert await ids_of(gql, {"namespace": namespace, "sourceType": "doc"}) == [b["id"]]
    assert await ids_of(gql, {"namespace": namespace, "sourceType": "doc",
                              "key": "user.name"}) == []


async def test_metadata_equality_filter(gql: GraphQLClient, namespace: str) -> None:
    a = (await gql.ok(WRITE, {"input": mem(namespace, "a", metadata={
        "lang": "en", "n": 3, "flag": True, "cfg": {"x": 1, "y": [1, 2]}})}))["writeMemory"]
    b = (await gql.ok(WRITE, {"input": mem(namespace, "b", metadata={
        "lang": "pt", "n": 4, "cfg": {"x": 1, "y": [2, 1]}})}))["writeMemory"]
    c = (await gql.ok(WRITE, {"input": mem(namespace, "c", metadata={
        "lang": "en", "n": "3"})}))["writeMemory"]

    async def match(meta: dict[str, Any]) -> set[str]:
        return set(await ids_of(gql, {"namespace": namespace, "metadata": meta}))

    assert await match({"lang": "en"}) == {a["id"], c["id"]}
    assert await match({"n": 3}) == {a["id"]}  # a number is not its string
    assert await match({"n": "3"}) == {c["id"]}
    assert await match({"lang": "en", "n": 3}) == {a["id"]}
    assert await match({"flag": True}) == {a["id"]}
    # Nested values compare as JSON: key order does not matter, list order does.
    assert await match({"cfg": {"y": [1, 2], "x": 1}}) == {a["id"]}
    assert await match({"cfg": {"x": 1, "y": [2, 1]}}) == {b["id"]}
    assert await match({"cfg": {"x": 1}}) == set()
    assert await match({"missing": "x"}) == set()
    assert await match({}) == {a["id"], b["id"], c["id"]}


async def test_scope_and_id_filters(gql: GraphQLClient, namespace: str) -> None:
    s1 = (await gql.ok(WRITE, {"input": mem(namespace, "s1", scope="SESSION", sessionId="s-1",
                                            userId="u-1")}))["writeMemory"]
    s2 = (await gql.ok(WRITE, {"input": mem(namespace, "s2", scope="SESSION", sessionId="s-2",
                                            userId="u-1")}))["writeMemory"]
    u1 = (await gql.ok(WRITE, {"input": mem(namespace, "u1", scope="USER",
                                            userId="u-1")}))["writeMemory"]
    plain = (await gql.ok(WRITE, {"input": mem(namespace, "plain",
                                               sessionId="s-1")}))["writeMemory"]

    async def match(flt: dict[str, Any]) -> set[str]:
        return set(await ids_of(gql, {"namespace": namespace, **flt}))

    assert await match({"scope": "SESSION", "sessionId": "s-1"}) == {s1["id"]}
    assert await match({"scope": "USER", "userId": "u-1"}) == {u1["id"]}
    # Without a scope, an id narrows by property whatever the level.
    assert await match({"sessionId": "s-1"}) == {s1["id"], plain["id"]}
    assert await match({"userId": "u-1"}) == {s1["id"], s2["id"], u1["id"]}
    assert await match({"userId": "u-1", "sessionId": "s-2"}) == {s2["id"]}
    error = await gql.error(LIST, {"filter": {"namespace": namespace, "scope": "SESSION"},
                                   "first": 5})
    assert code(error) == "VALIDATION"


async def test_scope_filter_still_narrows_by_other_ids(
    gql: GraphQLClient, namespace: str
) -> None:
    await gql.ok(WRITE, {"input": mem(namespace, "u1's session note", scope="SESSION",
                                      sessionId="shared-session", userId="u-1")})
    found = await ids_of(gql, {"namespace": namespace, "scope": "SESSION",
                               "sessionId": "shared-session", "userId": "u-2"})
    assert found == []


async def test_status_filter(gql: GraphQLClient, namespace: str) -> None:
    old = (await gql.ok(WRITE, {"input": mem(namespace, "old fact")}))["writeMemory"]
    sup = (await gql.ok(SUPERSEDE, {"id": old["id"], "memory": mem(namespace, "new fact")}))[
        "supersedeMemory"]
    gone = (await gql.ok(WRITE, {"input": mem(namespace, "to forget")}))["writeMemory"]
    await gql.ok(FORGET, {"ns": namespace, "p": {"id": gone["id"]}})
    new_id = sup["current"]["id"]

    async def match(statuses: list[str] | None) -> set[str]:
        flt: dict[str, Any] = {"namespace": namespace}
        if statuses is not None:
            flt["statuses"] = statuses
        return set(await ids_of(gql, flt))

    assert await match(None) == {new_id}
    assert await match(["ACTIVE"]) == {new_id}
    assert await match(["SUPERSEDED"]) == {old["id"]}
    assert await match(["FORGOTTEN"]) == {gone["id"]}
    assert await match(["ACTIVE", "SUPERSEDED", "FORGOTTEN"]) == {new_id, old["id"], gone["id"]}
    error = await gql.error(LIST, {"filter": {"namespace": namespace, "statuses": []},
                                   "first": 5})
    assert code(error) == "VALIDATION"


async def test_created_after_and_before(gql: GraphQLClient, namespace: str) -> None:
    written = await write_seven(gql, namespace)  # 2024-01-01 ... 2024-01-07
    ids = [m["id"] for m in written]

    async def match(flt: dict[str, Any]) -> list[str]:
        return await ids_of(gql, {"namespace": namespace, **flt})

    # createdAfter is inclusive, createdBefore exclusive.
    assert await match({"createdAfter": "2024-01-05T00:00:00+00:00"}) == ids[6:3:-1]
    assert await match({"createdBefore": "2024-01-03T00:00:00+00:00"}) == ids[1::-1]
    assert await match({"createdAfter": "2024-01-02T00:00:00+00:00",
                        "createdBefore": "2024-01-04T00:00:00+00:00"}) == [ids[2], ids[1]]
    assert await match({"createdAfter": "2024-01-02T12:00:00+00:00",
                        "createdBefore": "2024-01-02T13:00:00+00:00"}) == []
    # Other offsets and naive (UTC) times work away from the boundary.
    assert await match({"createdAfter": "2024-01-05T01:00:00+02:00"}) == ids[6:3:-1]
    assert await match({"createdBefore": "2024-01-03T01:00:00+02:00"}) == ids[1::-1]
    assert await match({"createdAfter": "2024-01-05T00:00:00"}) == ids[6:3:-1]
    page = await listing(gql, {"namespace": namespace,
                               "createdAfter": "2024-01-05T00:00:00+00:00"}, first=1)
    assert page["totalCount"] == 3 and page["pageInfo"]["hasNextPage"] is True


async def test_filters_compose_with_pagination(gql: GraphQLClient, namespace: str) -> None:
    inputs = [mem(namespace, f"item {i}", tags=["even" if i % 2 == 0 else "odd"],
                  now=f"2024-02-{i + 10}T00:00:00+00:00") for i in range(9)]
    written = (await gql.ok(WRITE_MANY, {"inputs": inputs}))["writeMemories"]
    evens = [m["id"] for m in reversed(written) if "even" in m["tags"]]  # 5 of them
    flt = {"namespace": namespace, "tagsAll": ["even"]}
    page1 = await listing(gql, flt, first=2)
    page2 = await listing(gql, flt, first=2, after=page1["pageInfo"]["endCursor"])
    page3 = await listing(gql, flt, first=2, after=page2["pageInfo"]["endCursor"])
    got = [e["node"]["id"] for p in (page1, page2, page3) for e in p["edges"]]
    assert got == evens
    assert page1["totalCount"] == page3["totalCount"] == 5
    assert page3["pageInfo"]["hasNextPage"] is False


async def test_other_namespaces_never_leak(gql: GraphQLClient, namespace: str) -> None:
    mine = (await gql.ok(WRITE, {"input": mem(namespace, "mine")}))["writeMemory"]
    await gql.ok(WRITE, {"input": mem(namespace + "/child", "child")})
    await gql.ok(WRITE, {"input": mem(namespace + "x", "sibling")})
    assert await ids_of(gql, {"namespace": namespace}) == [mine["id"]]


async def test_time_bounds_compare_instants_whatever_the_offset(
    gql: GraphQLClient, namespace: str
) -> None:
    m = (await gql.ok(WRITE, {"input": mem(namespace, "boundary",
                                           now="2024-01-05T00:00:00+00:00")}))["writeMemory"]
    same_instant = "2024-01-05T02:00:00+02:00"
    assert await ids_of(gql, {"namespace": namespace, "createdAfter": same_instant}) == [m["id"]]
    assert await ids_of(gql, {"namespace": namespace, "createdBefore": same_instant}) == []


async def test_metadata_number_equality_ignores_int_float_spelling(
    gql: GraphQLClient, namespace: str
) -> None:
    m = (await gql.ok(WRITE, {"input": mem(namespace, "scored", metadata={"score": 1})}))[
        "writeMemory"]
    assert await ids_of(gql, {"namespace": namespace, "metadata": {"score": 1.0}}) == [m["id"]]
