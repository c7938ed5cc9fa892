"""What the update judge shows the model and keeps of its answer (core.update_judging)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from memlattice.core.update_judging import (
    MAX_ATTRIBUTE_CHARS,
    UNSTATED_CONFIDENCE,
    Judged,
    Shown,
    labels,
    parse_verdicts,
    parts,
    render,
)

AT = datetime(2025, 6, 2, 9, 0, tzinfo=UTC)


def item(new: str, *offers: str) -> Judged:
    return Judged(memory=Shown(id=new, content=f"content of {new}", at=AT),
                  offers=tuple(Shown(id=o, content=f"content of {o}", at=None) for o in offers))


ITEMS = [item("n1", "o1", "o2"), item("n2", "o3")]


def answer(*entries: dict[str, object]) -> str:
    return json.dumps({"replaces": list(entries)})


def test_each_new_memory_is_numbered_with_its_offers_labelled_under_it() -> None:
    text = render(ITEMS)
    assert text.splitlines() == [
        "New memory 1 (said 2025-06-02 09:00 UTC): content of n1",
        "  1a: content of o1",
        "  1b: content of o2",
        "",
        "New memory 2 (said 2025-06-02 09:00 UTC): content of n2",
        "  2a: content of o3",
    ]
    assert labels(2, ITEMS[1]) == {"2a": "o3"}


def test_a_verdict_names_a_shown_offer_and_keeps_attribute_and_confidence() -> None:
    (verdict,) = parse_verdicts(answer({"earlier": "1B", "attribute": " home  city ",
                                        "confidence": 0.8}), ITEMS) or []
    assert (verdict.newer, verdict.older) == ("n1", "o2")
    assert verdict.attribute == "home city" and verdict.confidence == 0.8


def test_labels_not_shown_repeats_and_bad_confidences_are_dropped() -> None:
    verdicts = parse_verdicts(answer(
        {"earlier": "2b"}, {"earlier": "3a"}, {"earlier": 1}, {"new": 1},
        {"earlier": "1a", "confidence": 1.5}, {"earlier": "1a", "confidence": "high"},
        {"earlier": "1a", "confidence": True}, {"earlier": "2a", "confidence": "0.7"},
        {"earlier": "2a", "confidence": 0.2}, "1a"), ITEMS)
    assert verdicts is not None
    assert [(v.newer, v.older, v.confidence) for v in verdicts] == [("n2", "o3", 0.7)]


def test_a_verdict_without_confidence_is_kept_below_any_auto_threshold() -> None:
    (verdict,) = parse_verdicts(answer({"earlier": "2a", "attribute": ["x"]}), ITEMS) or []
    assert verdict.confidence == UNSTATED_CONFIDENCE and verdict.attribute == ""
    (long,) = parse_verdicts(answer({"earlier": "2a", "attribute": "y" * 999}), ITEMS) or []
    assert len(long.attribute) == MAX_ATTRIBUTE_CHARS


def test_an_answer_that_is_not_the_json_asked_for_is_none_and_an_empty_list_is_no_link(
) -> None:
    for text in ("", "no", "[]", '{"facts": []}', '{"replaces": {}}'):
        assert parse_verdicts(text, ITEMS) is None
    assert parse_verdicts(answer(), ITEMS) == []


def test_a_long_batch_is_judged_in_parts_that_each_fit() -> None:
    many = [item(f"n{i}", f"o{i}") for i in range(40)]
    split = parts(many, 300)
    assert [x for part in split for x in part] == many
    assert len(split) > 1
    assert all(len(render(part)) <= 300 for part in split if len(part) > 1)
    assert parts([], 300) == []


@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["earlier", "replaces", "confidence", "attribute"]),
                      inner, max_size=4),
    max_leaves=20))
def test_no_answer_links_a_pair_that_was_not_shown(data: object) -> None:
    shown = {("n1", "o1"), ("n1", "o2"), ("n2", "o3")}
    for text in (json.dumps(data), json.dumps({"replaces": data}),
                 json.dumps({"replaces": [data]})):
        for verdict in parse_verdicts(text, ITEMS) or []:
            assert (verdict.newer, verdict.older) in shown
            assert 0.0 <= verdict.confidence <= 1.0
