"""bench._question_misses: a present question's miss described by shape, without text."""

from __future__ import annotations

from bench._question_misses import Turn, describe, rank_band

TURNS = {
    "a1": Turn(0, "a", "Ines", "Ines: I live in Bergen."),
    "a2": Turn(1, "a", "Sam", "Sam: Where do you work?"),
    "b1": Turn(2, "b", "Ines", "Ines: We finally moved to Tromsø."),
    "b2": Turn(3, "b", "Ines", "Ines: the flat is lovely, great views"),
}


def test_a_replaced_statement_first_is_named_as_such() -> None:
    keys = describe("Where does Ines live?", ["a1", "b1"], ["b1"], {"a1"}, TURNS)
    assert keys == ["newest 2-3", "top replaced statement"]


def test_another_turn_first_is_described_by_speaker_time_form_and_kind() -> None:
    keys = describe("Where does Ines live?", ["b2", "a1", "a2", "x", "b1"], ["b1"], {"a1"},
                    TURNS)
    assert keys == ["newest 4-10", "top same speaker", "top after newest", "top tells",
                    "top lacks asked kind", "newest holds asked kind",
                    "shape same speaker/after newest/tells"]
    keys = describe("What does Ines do?", ["a2"], ["b1"], {"a1"}, TURNS)
    assert keys[:4] == ["newest missing", "top other speaker",
                        "top before newest (other session)", "top asks"]
    assert "question types nothing" in keys


def test_rank_bands() -> None:
    assert [rank_band(p) for p in (None, 1, 2, 3, 9)] == [
        "newest missing", "newest 2-3", "newest 2-3", "newest 4-10", "newest 4-10"]
