"""RAKE keyphrases of a session's turns, and the plural fold they share with entities."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memlattice.core.keyphrases import MAX_WORDS, candidates, fold_plural, keyphrases, phrase_key


def test_regular_plurals_fold_and_words_the_rules_cannot_tell_stay() -> None:
    assert [fold_plural(w) for w in ("classes", "agencies", "dogs", "boxes", "churches")] == [
        "class", "agency", "dog", "box", "church"]
    assert [fold_plural(w) for w in ("glass", "bus", "news", "analysis", "gas", "is")] == [
        "glass", "bus", "news", "analysis", "gas", "is"]


@given(st.from_regex(r"[a-z]{1,12}", fullmatch=True))
def test_folding_twice_changes_nothing_more_than_once_for_singulars(word: str) -> None:
    # A fold never lengthens a word and never empties it.
    folded = fold_plural(word)
    assert 0 < len(folded) <= len(word)
    assert folded[:1] == word[:1]


def test_a_phrase_key_folds_case_possessive_and_its_last_words_plural() -> None:
    assert phrase_key(["Pottery", "Classes"]) == "pottery class"
    assert phrase_key(["dog's", "toys"]) == "dog toy"


def test_candidates_split_at_stop_words_punctuation_numbers_and_names() -> None:
    text = "I signed up for a pottery class with Melanie, and 3 adoption agencies called back."
    assert candidates(text) == [("signed",), ("pottery", "class"), ("adoption", "agencies"),
                                ("back",)]


def test_a_clause_longer_than_a_phrase_is_no_candidate() -> None:
    long_run = " ".join(["blue"] + ["green"] * MAX_WORDS)
    assert candidates(f"the {long_run} house") == []
    assert candidates(f"the {long_run}, and a house") == [("house",)]


def test_multi_word_phrases_that_turns_repeat_rank_first() -> None:
    turns = [
        "I went to the adoption agency today.",
        "The adoption agency was friendly.",
        "My pottery classes start soon.",
        "I enjoy my pottery class.",
        "Nice weather.",
    ]
    found = keyphrases(turns)
    # "pottery classes" and "pottery class" are one key; single words come last.
    assert found.index("pottery class") < found.index("enjoy")
    assert found.index("adoption agency") < found.index("weather")
    assert found[-2:] == ["enjoy", "weather"]
    assert keyphrases(turns, 2) == found[:2]


@given(st.lists(st.text(max_size=80), max_size=8), st.integers(min_value=0, max_value=12))
def test_keyphrases_are_bounded_distinct_and_lower_case(texts: list[str], limit: int) -> None:
    found = keyphrases(texts, limit)
    assert len(found) <= limit
    assert len(found) == len(set(found))
    for phrase in found:
        assert phrase == phrase.casefold()
        assert 1 <= len(phrase.split(" ")) <= MAX_WORDS


def test_keyphrases_do_not_depend_on_nothing_but_the_texts() -> None:
    turns = ["a red kite flew", "the red kite again", "green tea"]
    assert keyphrases(turns) == keyphrases(list(turns))
    assert keyphrases([]) == []
