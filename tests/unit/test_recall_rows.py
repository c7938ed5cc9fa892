"""Reading a recall record (memlattice.graph.recall_rows): rows joined across lists,
neighbours' words resolved once."""

from __future__ import annotations

from typing import Any

from memlattice.graph.recall_rows import search_result


def _row(id: str, eid: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"m": {"id": id, "content": content, "createdAt": 0}, "eid": eid, "conflicts": [],
            **extra}


def test_a_lexical_row_seen_by_the_vector_side_is_that_memory_with_its_fulltext_score() -> None:
    record = {
        "semantic": [_row("a", "e1", "orchids bloom", score=0.9, context=[])],
        "lexical": [{"eid": "e1", "score": 4.2, "seen": True},
                    _row("b", "e2", "orchid care", score=3.1, similarity=0.4, context=[])],
    }
    result = search_result(record)
    assert [f.id for f in result.lexical] == ["a", "b"]
    joined = result.lexical[0]
    assert joined.score == 4.2 and joined.similarity == 0.9
    assert joined.props["content"] == "orchids bloom"


def test_a_seen_row_whose_memory_is_missing_is_dropped() -> None:
    record = {"semantic": [], "lexical": [{"eid": "gone", "score": 1.0, "seen": True}]}
    assert search_result(record).lexical == []


def test_neighbours_named_by_id_read_their_words_from_rows_or_the_shared_texts() -> None:
    record = {
        "lexical": [_row("a", "e1", "first", score=1.0,
                         context=[{"hop": 1, "eid": "e2"}, {"hop": 2, "eid": "e9"},
                                  {"hop": 3, "eid": "deleted"}])],
        "adjacent": [_row("b", "e2", "second", context=[{"hop": 1, "eid": "e1"}])],
        "contextTexts": [{"eid": "e9", "content": "ninth"}],
    }
    result = search_result(record)
    assert result.lexical[0].context == ((1, "second"), (2, "ninth"))
    assert result.adjacent[0].context == ((1, "first"),)


def test_neighbours_carried_with_their_words_are_read_as_they_are() -> None:
    record = {"lexical": [_row("a", "e1", "x", score=1.0, context=[{"hop": 1, "content": "y"}])]}
    assert search_result(record).lexical[0].context == ((1, "y"),)


def test_a_memory_deleted_while_its_row_was_read_is_dropped_as_a_hit_and_as_a_conflict() -> None:
    # Read committed: the properties read after a concurrent delete come back null.
    torn = {"id": "c", "content": None, "createdAt": None}
    record = {"semantic": [_row("a", "e1", "orchids", score=0.9, conflicts=[torn]),
                           {"m": {"id": "b", "content": None, "createdAt": None}, "eid": "e2",
                            "score": 0.8, "conflicts": []}]}
    result = search_result(record)
    assert [f.id for f in result.semantic] == ["a"]
    assert result.conflicts == {}
