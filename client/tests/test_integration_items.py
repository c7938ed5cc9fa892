"""How the LangGraph store maps items onto memories (`integrations/_items.py`): pure,
so it runs with the client alone (no framework, no server)."""

from __future__ import annotations

import pytest

from memlattice_client.integrations import _items


def test_namespaces_round_trip_under_a_root_and_refuse_a_slash() -> None:
    assert _items.namespace_of("agents/bot", ("users", "alice")) == "agents/bot/users/alice"
    assert _items.namespace_of(None, ("users",)) == "users"
    assert _items.labels_of("agents/bot", "agents/bot/users/alice") == ("users", "alice")
    assert _items.labels_of("agents/bot", "agents/bottle/x") is None
    assert _items.labels_of(None, "a/b") == ("a", "b")
    with pytest.raises(ValueError, match="separates"):
        _items.namespace_of(None, ("a/b",))


def test_item_ids_are_stable_and_distinct_per_namespace_and_key() -> None:
    one = _items.item_id("a/b", "k")
    assert one == _items.item_id("a/b", "k")
    assert len({one, _items.item_id("a/b", "k2"), _items.item_id("a/c", "k"),
                _items.item_id("a", "b\x1fk")}) == 4


def test_content_is_the_indexed_text_else_the_json() -> None:
    assert _items.content_of({"text": "hi"}, ["hi", " "]) == "hi"
    assert _items.content_of({"b": 1, "a": "é"}, []) == '{"a": "é", "b": 1}'


def test_only_plain_equalities_go_to_the_server() -> None:
    flt = {"kind": "pref", "tags": ["a", "b"], "rank": {"$gte": 3}, "who": {"$eq": "bob"},
           "nested": {"x": 1}, "gone": None, " padded": "x", "list": [{"x": 1}]}
    assert _items.server_filter(flt) == {"kind": "pref", "tags": ["a", "b"], "who": "bob"}
    assert _items.filterable({"kind": 1, "": 2, "tab\tkey": 3}) == {"kind": 1}


def test_filters_match_as_langgraph_stores_do() -> None:
    value = {"kind": "pref", "rank": 3, "meta": {"lang": "en", "x": 1}, "tags": ["a"]}
    assert _items.matches(value, None)
    assert _items.matches(value, {"kind": "pref", "meta": {"lang": "en"}, "tags": ["a"]})
    assert _items.matches(value, {"rank": {"$gte": 3, "$lt": 4}, "kind": {"$ne": "fact"}})
    assert not _items.matches(value, {"rank": {"$gt": 3}})
    assert not _items.matches(value, {"missing": {"$gt": 0}})
    assert not _items.matches(value, {"tags": ["a", "b"]})
    with pytest.raises(ValueError, match="unknown filter operator"):
        _items.matches(value, {"rank": {"$in": [3]}})
