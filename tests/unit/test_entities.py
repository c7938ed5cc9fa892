"""The rule-based entity extractor and the entity signal of recall (pure)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memlattice.core.entities import entity_key, mentions, query_keys
from memlattice.core.messages import speaker_key
from memlattice.search.entity_signal import entity_signal, named_entities


def keys(text: str) -> list[str]:
    return [m.key for m in mentions(text)]


def test_names_places_and_acronyms_are_found() -> None:
    assert keys("Alice moved to Lisbon with Bob in 2023.") == ["alice", "lisbon", "bob"]
    assert keys("I went to a LGBTQ support group in New York.") == ["lgbtq", "new york"]
    assert keys("She works at the Bank of America now.") == ["bank of america"]


def test_a_sentence_opener_is_not_a_name_but_a_name_opening_a_sentence_is() -> None:
    assert keys("Yesterday I went hiking. Then we ate.") == []
    assert keys("Maria joined a gym. Nothing else happened.") == ["maria"]


def test_people_spoken_to_are_not_mentioned() -> None:
    assert keys("Hey Caroline! Good to see you.") == []
    assert keys("Thanks, Melanie! That's sweet.") == []
    assert keys("Wow, Jon, that looks great!") == []
    assert keys("Yeah Jon, let's go.") == []
    assert keys("Caroline, look at this.") == []
    # ... while a name inside a sentence is a mention.
    assert keys("I told Caroline about the trip.") == ["caroline"]
    # ... and so is a value after a label's colon.
    assert "ines duarte" in keys("Main contact: Ines Duarte, procurement manager.")
    # ... but not after a turn's speaker, where the sentence starts.
    assert keys("Ben: Lisbon, near the river.") == ["ben"]


def test_keys_fold_case_possessives_and_spacing() -> None:
    assert keys("We met at Melanie's house.") == ["melanie"]
    assert entity_key("  New   York ") == "new york"
    assert entity_key("Melanie’s") == "melanie"
    # A speaker and a mention of them meet on one key.
    assert entity_key("Caroline") == speaker_key("Caroline")


def test_each_key_once_first_spelling_kept() -> None:
    found = mentions("Lisbon is lovely. I loved Lisbon.")
    assert [(m.key, m.name) for m in found] == [("lisbon", "Lisbon")]


def test_query_keys_are_word_runs_whatever_their_case() -> None:
    found = query_keys("what does melanie do in new york?")
    assert {"melanie", "new york", "new"} <= found
    assert "what does melanie do" not in found  # at most three words


@given(st.text(max_size=300))
def test_any_text_gives_folded_nonempty_keys(text: str) -> None:
    for m in mentions(text):
        assert m.key and m.key == entity_key(m.key)


def test_the_signal_counts_named_entities_each_candidate_is_about() -> None:
    about = {"a": ("melanie",), "b": ("caroline",), "c": ("melanie", "pottery club")}
    named = named_entities("What did Melanie make at the Pottery Club?", about.values())
    assert named == {"melanie", "pottery club"}
    assert entity_signal(named, about) == {"a": 1.0, "b": 0.0, "c": 2.0}


def test_no_signal_when_the_query_names_no_entity_of_the_pool() -> None:
    about = {"a": ("melanie",), "b": ()}
    assert named_entities("what did she paint?", about.values()) == frozenset()
    assert entity_signal(frozenset(), about) is None
    assert named_entities("Melanie?", [(), ()]) == frozenset()


def test_a_month_or_a_weekday_alone_is_a_time_not_an_entity() -> None:
    assert keys("Alice moved to Berlin in May 2022.") == ["alice", "berlin"]
    assert keys("On Saturday we met Jon. Tuesday was quiet.") == ["jon"]
    assert keys("We celebrated May Day in Paris.") == ["may day", "paris"]


def test_a_sentence_opener_before_a_name_is_not_part_of_it() -> None:
    assert keys("Then Alice left. When Bob came, we ate.") == ["alice", "bob"]
    assert keys("The Bank of America branch closed.") == ["bank of america"]
