"""The MCP tools' text: every memory an agent reads carries the id it acts on, and
recall's block keeps to its budget; the server's default namespace is checked early."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlattice.mcp.results import Link, memory_view
from memlattice.mcp.runner import default_namespace
from memlattice.mcp.text import memory_text, neighbourhood_text, page_text, recall_text
from memlattice_client import Memory, SearchHit, estimate_tokens

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def memory(id: str, content: str, *, days: int = 0, **fields: object) -> Memory:
    at = NOW - timedelta(days=days)
    return Memory.model_validate({"id": id, "namespace": "n", "content": content,
                                  "created_at": at, "updated_at": at, "version": 1,
                                  **fields})


def hit(id: str, content: str, score: float, **fields: object) -> SearchHit:
    return SearchHit(memory=memory(id, content, **fields), score=score)


def test_recall_text_starts_every_memory_with_its_id() -> None:
    conflict = memory("m-old", "The window is Monday")
    hits = [hit("m-2", "Two approvals per deploy", 0.4, tags=("ops",)),
            SearchHit(memory=memory("m-1", "The window is Tuesday", key="deploy.window"),
                      score=0.9, conflicts=(conflict,))]
    text = recall_text(hits, 500, query="deploy window", now=NOW)
    lines = text.splitlines()
    assert "[id]" in lines[0] and "supersede" in lines[0]
    assert lines[1].startswith("- [m-1] 2026-06-01 (today) deploy.window: The window is")
    assert "score 0.90" in lines[1] and "CONTRADICTS [m-old]" in lines[1]
    assert lines[2].startswith("- [m-2] ") and "tags: ops" in lines[2]


def test_recall_text_cuts_the_last_memory_rather_than_dropping_it() -> None:
    hits = [hit("a", "short", 0.9), hit("b", "word " * 200, 0.5), hit("c", "never", 0.1)]
    text = recall_text(hits, 120, query="q", now=NOW)
    assert estimate_tokens(text) <= 120
    last = text.splitlines()[-1]
    assert last.startswith("- [b] ") and "…" in last
    assert "[c]" not in text


def test_recall_text_without_hits_says_so() -> None:
    assert recall_text([], 100, query="x", now=NOW) == 'No memories found for "x".'


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=300), st.floats(0, 1)), max_size=10),
       st.integers(60, 600))
def test_recall_text_never_exceeds_the_budget(items: list[tuple[str, float]],
                                              budget: int) -> None:
    hits = [hit(f"id-{i}", content, score) for i, (content, score) in enumerate(items)]
    text = recall_text(hits, budget, query="what do we know?", now=NOW)
    assert estimate_tokens(text) <= budget or len(text.splitlines()) == 1


def test_a_superseded_memory_names_its_successor() -> None:
    old = memory("m-1", "Ana lives in Porto", days=3, status="SUPERSEDED",
                 superseded_by="m-2", scope="USER", user_id="ana")
    text = memory_text(old, now=NOW)
    assert text.startswith("- [m-1] 2026-05-29 (3 days ago) Ana lives in Porto"
                           " (SUPERSEDED by m-2)")
    assert "scope USER (user_id=ana)" in text
    view = memory_view(old).model_dump(exclude_none=True)
    assert view["superseded_by"] == "m-2" and "confidence" not in view  # nulls left out


def test_page_and_neighbourhood_text() -> None:
    page = page_text([memory("b", "second"), memory("a", "first")], total=3,
                     namespace="team/n", next_cursor="CUR")
    assert page.splitlines()[0].startswith("2 of 3 memories in team/n, newest first")
    assert page.splitlines()[-1] == "(more: call browse again with cursor=CUR)"
    links = [Link(edge_id="e1", type="SUPPORTS", direction="IN", neighbour_id="b"),
             Link(edge_id="e2", type="RELATED", direction="OUT", neighbour_id="hidden")]
    text = neighbourhood_text(memory("a", "first"), links, [memory("b", "second")], now=NOW)
    assert text.splitlines()[1:] == ["  <- SUPPORTS [b] 2026-06-01 (today) second",
                                     "  RELATED -> [hidden] (not visible to this key)"]


def test_the_default_namespace_is_checked_when_the_server_starts() -> None:
    assert default_namespace(None) is None and default_namespace("  ") is None
    assert default_namespace(" team/notes ") == "team/notes"
    with pytest.raises(ValueError, match="MEMLATTICE_MCP_NAMESPACE"):
        default_namespace("/absolute")
