"""What the write-side LLM is shown of a session and what of its answer is kept
(memlattice.core.session_facts)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from memlattice.core.session_facts import (
    MAX_ABOUT_CHARS,
    MAX_FACT_CHARS,
    About,
    PromptTurn,
    Reconciled,
    Stated,
    fact_id,
    parse_facts,
    parts,
    prompt,
    reconcile,
    render,
)

IDS = ["t-1", "t-2", "t-3"]


def answer(*facts: Any) -> str:
    return json.dumps({"facts": list(facts)})


def test_turns_are_numbered_from_one_with_their_time() -> None:
    turns = [PromptTurn("a", "Caroline: hi", datetime(2023, 5, 7, 10, 0, tzinfo=UTC)),
             PromptTurn("b", "Melanie: hello", None)]
    assert render(turns, 1000) == ("[1] (2023-05-07 10:00 UTC) Caroline: hi\n"
                                   "[2] Melanie: hello")
    assert "At most 7 facts" in prompt(7) and '"facts"' in prompt(7)


def test_a_long_session_is_shown_in_parts_that_fit() -> None:
    turns = [PromptTurn(str(i), "x" * 90, None) for i in range(10)]
    split = parts(turns, 300)
    assert [t for part in split for t in part] == turns  # every turn once, in order
    assert len(split) == 4 and all(len(render(part, 300)) <= 300 for part in split)
    alone = parts([PromptTurn("big", "y" * 5000, None), turns[0]], 1000)
    assert [[t.id for t in part] for part in alone] == [["big"], ["0"]]
    assert len(render(alone[0], 1000)) < 1010  # cut, not sent whole


def test_valid_facts_map_turn_numbers_to_the_session_turn_ids() -> None:
    found = parse_facts(answer({"fact": "Melanie  went camping\nin May 2023.", "turns": [2, 3]},
                               {"fact": "Caroline asked.", "turns": ["1"]}), IDS, 10)
    assert found is not None
    assert [(f.text, f.turn_ids) for f in found] == [
        ("Melanie went camping in May 2023.", ("t-2", "t-3")), ("Caroline asked.", ("t-1",))]


def test_numbers_not_shown_are_dropped_and_so_is_a_fact_left_without_any() -> None:
    found = parse_facts(answer({"fact": "kept", "turns": [0, 3, 4, True, -1, 3]},
                               {"fact": "invented source", "turns": [9]},
                               {"fact": "no source", "turns": []},
                               {"fact": "no list", "turns": 2}), IDS, 10)
    assert found is not None and [(f.text, f.turn_ids) for f in found] == [("kept", ("t-3",))]


def test_malformed_items_are_skipped_and_a_malformed_answer_is_none() -> None:
    for garbage in ("not json", "[]", '{"facts": "nope"}', '{"observations": []}', ""):
        assert parse_facts(garbage, IDS, 10) is None
    found = parse_facts(answer("a string", None, {"fact": 3, "turns": [1]},
                               {"fact": " \u200b ", "turns": [1]},
                               {"fact": "x" * (MAX_FACT_CHARS + 1), "turns": [1]},
                               {"turns": [1]}, {"fact": "ok", "turns": [1]}), IDS, 10)
    assert found is not None and [f.text for f in found] == ["ok"]
    assert parse_facts(answer(), IDS, 10) == []


def test_facts_are_capped_and_the_same_sentence_is_kept_once() -> None:
    many = [{"fact": f"fact {i}", "turns": [1]} for i in range(30)]
    found = parse_facts(answer({"fact": "Same thing.", "turns": [1]},
                               {"fact": "same  THING.", "turns": [2]}, *many), IDS, 5)
    assert found is not None
    assert [f.text for f in found] == ["Same thing.", "fact 0", "fact 1", "fact 2", "fact 3"]


def test_a_fact_id_names_the_sentence_in_its_session_and_namespace() -> None:
    assert fact_id("ns", "s", "Melanie went camping.") == fact_id("ns", "s",
                                                                   " melanie  went CAMPING.")
    assert fact_id("ns", "s", "a") != fact_id("ns", "s2", "a") != fact_id("ns2", "s", "a")


def test_a_fact_may_name_its_subject_and_attribute_both_or_neither() -> None:
    found = parse_facts(answer(
        {"fact": "Ines lives in Bergen.", "subject": " Ines ", "attribute": "home  city",
         "turns": [1]},
        {"fact": "Ines went hiking.", "turns": [2]},
        {"fact": "only a subject", "subject": "Ines", "turns": [1]},
        {"fact": "not a name", "subject": "Ines", "attribute": 3, "turns": [1]},
        {"fact": "blank", "subject": " ", "attribute": "city", "turns": [1]},
        {"fact": "too long", "subject": "x" * (MAX_ABOUT_CHARS + 1), "attribute": "city",
         "turns": [1]}), IDS, 10)
    assert found is not None
    assert [(f.text, f.about) for f in found] == [
        ("Ines lives in Bergen.", About("Ines", "home city")), ("Ines went hiking.", None)]
    assert About("INES.", " Home City").keys == About("ines", "home city").keys == (
        "ines", "home city")
    assert '"subject"' in prompt(5) and '"attribute"' in prompt(5)


def at(day: int) -> datetime:
    return datetime(2024, 1, day, tzinfo=UTC)


def fact(id: str, text: str, day: int, *, known: bool,
         keys: tuple[str, str] = ("ines", "home city")) -> Stated:
    return Stated(id=id, text=text, keys=keys, at=at(day), known=known)


def test_a_new_value_replaces_the_current_one_and_the_same_words_reinforce_it() -> None:
    bergen = fact("old", "Ines lives in Bergen.", 1, known=True)
    assert reconcile([fact("again", "ines lives in  Bergen", 2, known=False)],
                     [bergen]) == Reconciled(reinforce={"again": "old"})
    assert reconcile([fact("new", "Ines lives in Tromsø.", 3, known=False)],
                     [bergen]) == Reconciled(supersede=[("new", "old")])
    other = fact("job", "Ines works as a nurse.", 3, known=False, keys=("ines", "job"))
    assert reconcile([other], [bergen]) == Reconciled()  # another attribute: just written


def test_a_session_that_moves_twice_makes_a_chain_and_a_late_session_is_replaced() -> None:
    bergen = fact("old", "Ines lives in Bergen.", 1, known=True)
    oslo = fact("oslo", "Ines lives in Oslo.", 2, known=False)
    tromso = fact("tromso", "Ines lives in Tromsø.", 3, known=False)
    assert reconcile([tromso, oslo], [bergen]).supersede == [("oslo", "old"),
                                                             ("tromso", "oslo")]
    late = fact("late", "Ines lives in Oslo.", 1, known=False)  # said before what is stored
    assert reconcile([late], [fact("now", "Ines lives in Bergen.", 2, known=True)]) == (
        Reconciled(supersede=[("now", "late")]))
    # a repeat said before a later repeat of the same words reinforces it, replacing nothing
    assert reconcile([fact("rep", "Ines lives in Bergen.", 1, known=False)],
                     [fact("b2", "Ines lives in Bergen.", 2, known=True)]) == (
        Reconciled(reinforce={"rep": "b2"}))
