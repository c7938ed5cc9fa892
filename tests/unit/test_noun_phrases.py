"""Salient lower-case noun phrases as entities (memlattice.core.entities.noun_phrases)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memlattice.core.entities import MAX_PHRASE_WORDS, mentions, noun_phrases, query_keys
from memlattice.core.keyphrases import stop_words


def phrases(text: str) -> list[str]:
    return [m.key for m in noun_phrases(text)]


def test_a_determiner_opens_a_phrase_and_its_last_word_is_folded_to_singular() -> None:
    assert phrases("I signed up for a pottery class with Melanie.") == ["pottery class"]
    assert phrases("We called the adoption agencies again.") == ["adoption agency"]
    assert phrases("Her kids love the beach trips; my beach trip was short.") == ["beach trip"]


def test_single_nouns_generic_adjectives_and_clauses_are_not_phrases() -> None:
    assert phrases("I have a dog and the cat.") == []
    assert phrases("It was a really great time.") == []
    assert phrases("my new pottery classes") == ["pottery class"]  # "new" says nothing
    assert phrases("a very long winding mountain road trip") == []  # a clause, not a phrase


def test_phrases_follow_names_and_never_duplicate_a_names_key() -> None:
    found = mentions("Caroline joined the support group. The support groups were kind.",
                     phrases=True)
    assert [(m.key, m.kind) for m in found] == [("caroline", "name"),
                                                ("support group", "phrase")]
    assert [m.key for m in mentions("Caroline joined the support group.",
                                    phrases=False)] == ["caroline"]


def test_a_question_meets_a_phrase_in_its_plural_or_singular() -> None:
    assert "pottery class" in query_keys("when did she start pottery classes?")
    assert "adoption agency" in query_keys("Which adoption agency did Caroline call?")


words = st.sampled_from(["a", "the", "my", "pottery", "class", "classes", "agency",
                         "really", "went", "Alice", ",", ".", "new", "big", "green", "tea"])


@given(st.lists(words, max_size=30).map(" ".join))
def test_every_phrase_is_two_or_three_lower_case_content_words(text: str) -> None:
    stop = stop_words()
    keys = phrases(text)
    assert len(keys) == len(set(keys))
    for key in keys:
        parts = key.split(" ")
        assert 2 <= len(parts) <= MAX_PHRASE_WORDS
        assert key == key.casefold()
        assert not set(parts) & stop
    names = [m.key for m in mentions(text, phrases=False)]
    assert [m.key for m in mentions(text, phrases=True)][:len(names)] == names


def test_names_alone_by_default_and_phrases_when_the_process_turns_them_on() -> None:
    from memlattice.graph.entities import link_noun_phrases, mention_rows

    text = "Caroline joined the support group."
    assert [r["key"] for r in mention_rows(text)] == ["caroline"]
    link_noun_phrases(True)
    try:
        assert mention_rows(text) == [
            {"key": "caroline", "name": "Caroline", "kind": "name"},
            {"key": "support group", "name": "support group", "kind": "phrase"}]
    finally:
        link_noun_phrases(False)
    assert [r["key"] for r in mention_rows(text)] == ["caroline"]
