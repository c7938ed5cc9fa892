"""memlattice.search.lexical: the English analyzer's terms and BM25 on namespace statistics."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from memlattice.search.lexical import (
    Bm25,
    Field,
    NamespaceStats,
    length,
    mean_length,
    query_terms,
    split_speaker,
    terms,
)


def test_terms_follow_the_english_analyzer() -> None:
    assert terms("The dog's Running, and the cats ran!") == ["dog", "run", "cat", "ran"]
    assert terms("don't 3.14 U.S.A") == ["don't", "3.14", "u.s.a"]
    assert terms("the a an of") == []


def test_query_terms_keep_one_word_per_term() -> None:
    assert query_terms("Running runs the RUN") == {"run": "running"}
    assert query_terms("Caroline's garden") == {"carolin": "caroline's", "garden": "garden"}


def test_length_counts_index_terms_as_lucene_does() -> None:
    assert length("the cat sat on the mat") == 3  # stop words are not counted
    assert length("") == 0
    assert mean_length(["the cat", "dogs run", ""]) == 1.0
    assert mean_length([]) == 0.0


def bm25(documents: int, mean: float, **df: int) -> Bm25:
    return Bm25(stats=NamespaceStats(documents=documents, mean_length=mean), frequencies=df)


def test_score_is_the_bm25_formula() -> None:
    scorer = bm25(10, 4.0, orchid=2)
    idf = math.log(1 + (10 - 2 + 0.5) / (2 + 0.5))
    norm = 1.2 * (1 - 0.75 + 0.75 * 8 / 4.0)
    assert math.isclose(scorer.score(["orchid", "x", "orchid"], 8), idf * 2 * 2.2 / (2 + norm))


def test_rare_terms_weigh_more_and_absent_terms_nothing() -> None:
    scorer = bm25(100, 5.0, rare=1, common=60)
    assert scorer.score(["rare"], 5) > scorer.score(["common"], 5) > 0
    assert scorer.score(["other"], 5) == 0.0


def test_shorter_documents_score_higher_for_the_same_matches() -> None:
    scorer = bm25(100, 10.0, term=5)
    assert scorer.score(["term"], 5) > scorer.score(["term"], 40)


def test_a_term_counted_before_its_memory_was_written_still_scores() -> None:
    # Statistics a minute old may know neither the memory nor the term.
    assert bm25(0, 0.0, new=0).score(["new"], 3) > 0


@given(st.integers(0, 10_000), st.floats(0, 1e4), st.integers(0, 10_000), st.integers(1, 500),
       st.integers(1, 50))
def test_scores_are_finite_and_non_negative(n: int, mean: float, df: int, size: int,
                                            tf: int) -> None:
    score = bm25(n, mean, t=df).score(["t"] * tf, size)
    assert math.isfinite(score) and score >= 0


def test_bm25f_with_one_field_is_bm25() -> None:
    scorer = bm25(50, 6.0, orchid=3, spring=10)
    text = "orchid spring orchid pot"
    assert math.isclose(scorer.score_fields([scorer.field([text])]),
                        scorer.score(terms(text), length(text)))


def test_a_field_counts_query_terms_and_length_once_per_text() -> None:
    scorer = bm25(50, 4.0, orchid=3)
    assert scorer.field(["the orchids", "an orchid pot"]) == Field({"orchid": 2}, 3)
    assert scorer.count("orchid orchid") == ({"orchid": 2}, 2)


def test_a_term_in_two_fields_saturates_once() -> None:
    scorer = bm25(50, 4.0, orchid=3)
    one = scorer.score_fields([scorer.field(["orchid a b c"])])
    both = scorer.score_fields([scorer.field(["orchid a b c"]), scorer.field(["orchid d"])])
    assert one < both < 2 * one


def test_context_fields_weigh_less_with_distance() -> None:
    scorer = bm25(50, 4.0, orchid=3)
    fields = scorer.context_fields(
        [(1, "orchids bloom"), (2, "orchid pots"), (1, "yes"), (4, "far")], hops=3, decay=0.5)
    assert [f.weight for f in fields] == [0.5, 0.25]
    assert fields[0] == Field({"orchid": 1}, 3, 0.5, 8.0)
    own = scorer.field(["pot"])
    near = scorer.score_fields([own, fields[0]])
    far = scorer.score_fields([own, fields[1]])
    assert near > far > 0


def test_a_query_is_searched_by_its_content_words() -> None:
    from memlattice.core.lucene import query_any_terms
    from memlattice.search.lexical import query_terms

    assert set(query_terms("What did Melanie paint?").values()) == {"melanie", "paint"}
    assert query_any_terms("When did you go there?") == "go"
    # A query of stop words only is searched as written.
    assert query_any_terms("what is it") == "what is it"
    assert set(query_terms("Who’s he?").values()) == {"who’s", "he"}


def test_a_turn_is_split_into_its_speaker_and_its_words() -> None:
    assert split_speaker("Marco: Good idea, yes please.", "Marco") == (
        "Marco", "Good idea, yes please.")
    assert split_speaker("Note: the port is 9100.", None) == (None, "Note: the port is 9100.")
    assert split_speaker("Marco: hi", "Ines") == (None, "Marco: hi")


def test_naming_the_speaker_favours_no_turn_of_theirs_for_being_short() -> None:
    """In one text, the speaker's name scored a short filler above a long answer; as a
    field of its own it scores every turn of theirs alike."""
    scorer = bm25(50, 8.0, marco=20, employer=5)
    short, long = "Good idea, yes please.", "I work at Siemens as a controls engineer on automation."
    in_text = [scorer.score_fields([scorer.field([f"Marco: {t}"])]) for t in (short, long)]
    assert in_text[0] > in_text[1]
    apart = [scorer.score_fields([scorer.field([t]), scorer.speaker_field("Marco")])
             for t in (short, long)]
    assert math.isclose(apart[0], apart[1]) and apart[0] > 0

