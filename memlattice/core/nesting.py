"""How deeply a request may nest, measured without recursion.

    MAX_JSON_DEPTH     64   a JSON scalar value (`metadata`, `value`, `provenance`,
                            a record's `payload`, ...): `{"a": [1]}` is 2 levels
    MAX_REQUEST_DEPTH  100  a whole request: the HTTP body or a WebSocket message
                            (its envelope around the variables included), and the
                            brackets `{ [ (` of a GraphQL document

Why: Python's JSON decoder, graphql-core's parser and value coercion, pydantic
and the JSON encoder all recurse once per level, so a body nested ~1,000 deep
ended in a `RecursionError` (HTTP 500) or in whichever recursive step came
next. The limits are far below the interpreter's recursion limit, and every
check here is a loop, so a request over a limit is refused before anything
recursive looks at it (the JSON decoder's own recursion is guarded by the
interpreter: it raises `RecursionError`, which is refused the same way).
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_JSON_DEPTH = 64
MAX_REQUEST_DEPTH = 100

_CONTAINERS = (dict, list)
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


class TooDeep(ValueError):
    """The value nests more levels than its limit allows."""

    def __init__(self, what: str, limit: int) -> None:
        super().__init__(f"{what} is nested more than {limit} levels deep")
        self.limit = limit


def json_depth(value: Any, limit: int) -> int:
    """Levels of lists and objects in a decoded JSON value (a scalar is 0), counted
    up to `limit + 1` at most: the walk stops as soon as the limit is passed.

    A list of numbers (an embedding) is skipped in C (`set(map(type, ...))`), so
    a batch of vectors costs about one call per list, not one per number.
    """
    if not isinstance(value, _CONTAINERS):
        return 0
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        items = node.values() if isinstance(node, dict) else node
        if set(map(type, items)) <= _SCALAR_TYPES:
            continue
        stack.extend((item, depth + 1) for item in items if isinstance(item, _CONTAINERS))
    return deepest


def check_json(value: Any, what: str, limit: int = MAX_JSON_DEPTH) -> Any:
    """`value` itself, or TooDeep when it nests more than `limit` levels."""
    if json_depth(value, limit) > limit:
        raise TooDeep(what, limit)
    return value


def loads(data: str | bytes, what: str = "the request body",
          limit: int = MAX_REQUEST_DEPTH) -> Any:
    """`json.loads`, refusing (TooDeep) what nests more than `limit` levels.

    Raises json.JSONDecodeError for text that is not JSON, like `json.loads`.
    """
    try:
        value = json.loads(data)
    except RecursionError:
        raise TooDeep(what, limit) from None
    return check_json(value, what, limit)


# GraphQL text that can hold brackets without nesting: block strings, strings,
# comments. Block strings first, so `"""` is not read as an empty string.
_GRAPHQL_SKIPPED = re.compile(
    r'"""(?:\\"""|[^"]|"(?!""))*"""|"(?:[^"\\\n\r]|\\.)*"|#[^\n\r]*')
_OPENERS = "{[("
_BRACKETS = re.compile(r"[{}\[\]()]")


def document_depth(source: str, limit: int = MAX_REQUEST_DEPTH) -> int:
    """Bracket nesting of a GraphQL document, counted up to `limit + 1`.

    Cheap for ordinary documents: when the text has no more opening brackets
    than `limit`, it cannot nest deeper, and nothing is scanned.
    """
    if sum(map(source.count, _OPENERS)) <= limit:
        return 0
    text = _GRAPHQL_SKIPPED.sub(" ", source)
    depth = deepest = 0
    for match in _BRACKETS.finditer(text):
        if match.group() in _OPENERS:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        else:
            depth -= 1
    return deepest
