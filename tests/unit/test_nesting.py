"""Nesting is measured by loops, exactly, and refused past its limit."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlattice.core.nesting import TooDeep, check_json, document_depth, json_depth, loads

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=30)


def recursive_depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(recursive_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(recursive_depth, value), default=0)
    return 0


@given(JSON)
def test_json_depth_is_the_recursive_definition(value: object) -> None:
    assert json_depth(value, 1000) == recursive_depth(value)


def test_the_walk_stops_past_the_limit() -> None:
    deep: list[object] = []
    for _ in range(100_000):  # far past anything a recursive walk survives
        deep = [deep]
    assert json_depth(deep, 64) == 65
    with pytest.raises(TooDeep, match="64 levels"):
        check_json(deep, "value")
    assert check_json([[1.0] * 300], "value") == [[1.0] * 300]


def test_loads_refuses_what_the_decoder_cannot_parse_and_what_is_too_deep() -> None:
    with pytest.raises(TooDeep):
        loads("[" * 100_000 + "]" * 100_000)
    with pytest.raises(TooDeep):
        loads("[" * 101 + "]" * 101)
    assert loads("[" * 100 + "]" * 100, limit=100)
    with pytest.raises(json.JSONDecodeError):
        loads("{nope")


def test_document_depth_skips_strings_block_strings_and_comments() -> None:
    assert document_depth("{" * 150 + "}" * 150) == 101
    text = ('{ a(s: "' + "{[(" * 100 + '\\" {{{", t: """' + "{" * 200 + '\\""" {{"""'
            + ') { b } } # ' + "(" * 200 + "\n{ c }")
    assert document_depth(text, 10) == 2  # `{ a(...)` and `{ b }` inside `{`
    assert document_depth("{ a { b } }") == 0  # few brackets: not scanned at all
