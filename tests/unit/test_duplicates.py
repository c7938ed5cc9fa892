"""core.duplicates: what counts as the same content, identity, reinforcement, near-duplicates."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memlattice.core.duplicates import (
    Kept,
    content_hash,
    groups,
    identity_of,
    near_duplicates,
    normalise_content,
    plan_writes,
    reinforcement,
)
from memlattice.core.model import MAX_TAGS, MemoryInput, Scope, Sensitivity
from memlattice.core.records.hints import Claim


@pytest.mark.parametrize(("text", "expected"), [
    ("Alice likes tea.", "alice likes tea"),
    ("  Alice\tlikes \n\n tea  ", "alice likes tea"),
    ("ALICE LIKES TEA!!!", "alice likes tea"),
    ("Alice likes tea?!\u2026", "alice likes tea"),  # ellipsis counts as punctuation
    ("Alice likes tea .", "alice likes tea"),
    ("Stra\u00dfe", "strasse"),  # case folding, not lower-casing
    ("\uff21lice likes tea", "alice likes tea"),  # fullwidth A (NFKC)
    ("caf\u0065\u0301", "caf\u00e9"),  # combining accent composed
    ("Alice\u00a0likes\u2003tea", "alice likes tea"),  # no-break and em spaces
    ("Alice li\u200bkes tea", "alice likes tea"),  # zero-width space dropped
    ("\ufb01ne", "fine"),  # ligature
    ("He said \"hi\".", "he said \"hi\""),  # the quote says something
    ("\u4f60\u597d\u3002", "\u4f60\u597d"),  # ideographic full stop
    ("Ready\uff01", "ready"),  # fullwidth exclamation mark
    ("Version 1.2", "version 1.2"),  # inner punctuation stays
    ("(a) list:", "(a) list"),
])
def test_normalise_content(text: str, expected: str) -> None:
    assert normalise_content(text) == expected


def test_normalisation_keeps_what_changes_the_meaning() -> None:
    assert normalise_content("Alice likes tea") != normalise_content("Alice likes coffee")
    assert normalise_content("Alice is 30") != normalise_content("Alice is 31")
    assert normalise_content("Leading dots stay: ...x") == "leading dots stay: ...x"
    assert normalise_content("\U0001f468\u200d\U0001f469") == "\U0001f468\u200d\U0001f469"


def test_ascii_text_takes_the_short_path_to_the_same_form() -> None:
    """ASCII has no format characters, so ASCII text skips the scan for them; text
    with a zero-width character still loses it (the scan runs)."""
    assert normalise_content("Alice\u200b likes tea.") == "alice likes tea"
    assert normalise_content("\u200bAlice likes tea\ufeff") == "alice likes tea"
    assert normalise_content("Alice likes tea.") == "alice likes tea"
    assert normalise_content("!!!") == ""
    assert normalise_content("Growth was 5%") != normalise_content("Growth was 5")
    assert normalise_content("We use C#") != normalise_content("We use C")
    assert normalise_content("value []") != normalise_content("value {}")
    assert normalise_content("Call f()") != normalise_content("Call f")


def test_content_hash_is_the_hash_of_the_normalised_text() -> None:
    assert content_hash("Alice likes tea.") == content_hash("  ALICE likes   tea")
    assert content_hash("Alice likes tea") != content_hash("Alice likes coffee")
    assert len(content_hash("x")) == 64


def _input(content: str, **fields: object) -> MemoryInput:
    return MemoryInput.model_validate({"namespace": "ns", "content": content, **fields})


def test_identity_takes_scope_sensitivity_type_and_key() -> None:
    base = identity_of(_input("Tea.", scope=Scope.USER, user_id="u1"))
    assert base == identity_of(_input("tea", scope=Scope.USER, user_id="u1"))
    for other in ({"scope": Scope.USER, "user_id": "u2"},
                  {"scope": Scope.SESSION, "user_id": "u1", "session_id": "s"},
                  {"scope": Scope.USER, "user_id": "u1", "agent_id": "a"},
                  {"scope": Scope.USER, "user_id": "u1", "sensitivity": Sensitivity.HIGH},
                  {"scope": Scope.USER, "user_id": "u1", "memory_type": "preference"},
                  {"scope": Scope.USER, "user_id": "u1", "key": "drink"}):
        assert identity_of(_input("Tea", **other)) != base, other


def test_groups_keep_the_order_of_first_appearance() -> None:
    batch = [_input("a"), _input("b"), _input("A."), _input("c"), _input("b", key="k")]
    assert groups(batch) == [[0, 2], [1], [3], [4]]


def test_reinforcement_only_adds() -> None:
    soon = datetime(2030, 1, 1, tzinfo=UTC)
    later = datetime(2031, 1, 1, tzinfo=UTC)
    kept = Kept(tags=("a", "b"), confidence=0.5, salience=None, expires_at=soon)
    after = reinforcement(kept, [
        _input("x", tags=("b", "c"), confidence=0.4, salience=0.3, expires_at=later),
        _input("x", tags=("d",), confidence=0.8, salience=0.2, expires_at=soon),
    ])
    assert after == Kept(tags=("a", "b", "c", "d"), confidence=0.8, salience=0.3,
                         expires_at=later)


def test_reinforcement_without_an_expiry_never_expires() -> None:
    kept = Kept(tags=(), confidence=1.0, salience=0.9,
                expires_at=datetime(2030, 1, 1, tzinfo=UTC))
    after = reinforcement(kept, [_input("x", confidence=0.2)])
    assert after.expires_at is None and after.confidence == 1.0 and after.salience == 0.9


def test_reinforced_tags_stay_within_the_limit() -> None:
    kept = Kept(tags=tuple(f"t{i}" for i in range(MAX_TAGS)), confidence=1.0, salience=None,
                expires_at=None)
    after = reinforcement(kept, [_input("x", tags=("new",))])
    assert after.tags == kept.tags


def test_near_duplicates_report_close_neighbours_only() -> None:
    hints = near_duplicates("new", "Grace lives in Lisbon", [
        Claim("close", "Grace is a resident of Lisbon", similarity=0.95),
        Claim("far", "The office has a cat", similarity=0.5),
        Claim("none", "No vector", similarity=None),
        Claim("new", "itself", similarity=1.0),
        Claim("negated", "Grace does not live in Lisbon", similarity=0.97),
        Claim("number", "Grace lived in Lisbon for 3 years", similarity=0.93),
    ])
    assert [(h.memory_id, h.kind) for h in hints] == [
        ("negated", "CONTRADICTS"), ("close", "SUPPORTS"), ("number", "SUPPORTS")]
    assert hints[1].score == 0.95 and "near-duplicate" in hints[1].reason


def test_near_duplicates_with_different_numbers_contradict() -> None:
    (hint,) = near_duplicates("new", "The build needs Java 17",
                              [Claim("old", "The build needs Java 21", similarity=0.96)])
    assert hint.kind == "CONTRADICTS" and "numbers" in hint.reason


def test_only_writes_without_an_id_are_deduplicated() -> None:
    def m(content: str, id: str | None = None) -> MemoryInput:
        return MemoryInput(namespace="ns", content=content, id=id)

    inputs = [m("tea"), m("tea", "own"), m("Tea."), m("coffee"), m("coffee"), m("milk", "x")]
    plan = plan_writes(inputs, [False, False, False, True, False, False])
    assert plan.named == (1, 5)  # stored under their ids, or the same again, or refused
    assert plan.fresh == (3,)  # allowDuplicate: stored as it is
    assert plan.deduped == ((0, 2), (4,))  # grouped by identity, named ones left out
