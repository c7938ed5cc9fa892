"""A turn's words for its session's keyphrases (memlattice.graph.session_keys.spoken_text)."""

from __future__ import annotations

from memlattice.graph.session_keys import spoken_text


def test_the_speaker_prefix_is_dropped_whatever_spelling_the_entity_was_first_given() -> None:
    # The speaker's entity may have been created by a memory that wrote "Alice".
    assert spoken_text("alice: Where should I live?", "alice") == "Where should I live?"
    assert spoken_text("Alice  Smith: hi there", "alice smith") == "hi there"


def test_words_that_only_look_like_a_prefix_stay() -> None:
    assert spoken_text("note: buy milk", "alice") == "note: buy milk"
    assert spoken_text("alice said hello", "alice") == "alice said hello"
    assert spoken_text("alice: hello", None) == "alice: hello"
