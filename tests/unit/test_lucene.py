"""User text never reaches Lucene as syntax."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memlattice.core.lucene import MAX_TERMS, all_terms, any_terms, escape, words


def test_words_are_lowercased_deduplicated_and_ordered() -> None:
    assert words("Alice met alice in LISBON, then Porto") == [
        "alice", "met", "in", "lisbon", "then", "porto"]


def test_inner_punctuation_stays_for_the_analyzer() -> None:
    assert words("pi is 3.14, isn't it?") == ["pi", "is", "3.14", "isn't", "it"]
    assert all_terms("don't") == "+don't"


def test_operators_and_fields_become_plain_words() -> None:
    assert any_terms("foo AND (bar") == "foo and bar"
    assert any_terms("content:x") == "content x"
    assert any_terms("*:*") is None
    assert any_terms('"unbalanced') == "unbalanced"
    assert all_terms("green tea") == "+green +tea"


def test_no_words_means_no_query() -> None:
    assert any_terms("?!  -- ") is None
    assert all_terms("") is None


def test_escape_covers_lucene_specials() -> None:
    assert escape('a+b-c!d(e)f{g}h[i]j^k"l~m*n?o:p\\q/r&s|t') == (
        'a\\+b\\-c\\!d\\(e\\)f\\{g\\}h\\[i\\]j\\^k\\"l\\~m\\*n\\?o\\:p\\\\q\\/r\\&s\\|t')


def test_term_count_is_bounded() -> None:
    text = " ".join(f"w{i}" for i in range(500))
    assert len(words(text)) == MAX_TERMS


@given(st.text())
def test_no_special_character_survives_unescaped(text: str) -> None:
    query = any_terms(text)
    if query is not None:
        for term in query.split(" "):
            assert term
            unescaped = term.replace("\\\\", "")
            for i, ch in enumerate(unescaped):
                if ch in '+-!(){}[]^"~*?:/&|':
                    assert i > 0 and unescaped[i - 1] == "\\"
