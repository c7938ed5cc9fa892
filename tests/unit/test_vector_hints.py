"""Near-duplicate hints by embedding: the pure rules, and the candidate query they read."""

from __future__ import annotations

from datetime import UTC, datetime

from memlattice.core.records.hints import (
    NEAR_DUPLICATE_COSINE,
    Claim,
    agree,
    hints_for,
    negated,
    numbers,
)
from memlattice.core.vector_spaces import VectorSpace
from memlattice.graph import hints

NOW = datetime(2026, 1, 1, tzinfo=UTC)
HIGH = NEAR_DUPLICATE_COSINE + 0.01
LOW = NEAR_DUPLICATE_COSINE - 0.01


def test_a_paraphrase_with_few_shared_words_supports_by_embedding() -> None:
    new = Claim("n", "Alice lives in Lisbon")
    found = hints_for(new, [Claim("1", "Alice is a resident of Lisbon", similarity=HIGH),
                            Claim("2", "Alice is a resident of Lisbon", similarity=LOW),
                            Claim("3", "Alice is a resident of Lisbon")])
    assert [(h.kind, h.memory_id, h.reason) for h in found] == [
        ("SUPPORTS", "1", "near-duplicate claim (embedding)")]
    assert found[0].score == round(HIGH, 4)


def test_word_overlap_still_decides_first_and_contradiction_wins() -> None:
    new = Claim("n", "alice lives in porto", "alice", "lives in", "porto")
    found = hints_for(new, [
        Claim("1", "alice lives in lisbon", "alice", "lives in", "lisbon", similarity=0.99),
        Claim("2", "the alice lives in porto town", similarity=0.99),
    ])
    assert [(h.kind, h.memory_id, h.reason) for h in found] == [
        ("CONTRADICTS", "1", "same subject and predicate, another object"),
        ("SUPPORTS", "2", "near-duplicate claim")]


def test_similar_vectors_that_disagree_are_no_support() -> None:
    """What an averaged word-vector model cannot see: negation, numbers, which object.
    Negation and numbers turn a likeness into a contradiction candidate."""
    cases = [
        (Claim("n", "Alice lives in Lisbon"), Claim("1", "Alice does not live in Lisbon")),
        (Claim("n", "Alice lives in Lisbon"), Claim("1", "Alice isn't living in Lisbon")),
        (Claim("n", "The build requires Java 21"), Claim("1", "The build needs Java 17")),
        (Claim("n", "alice lives in lisbon", "alice", "lives in", "lisbon"),
         Claim("1", "alice resides in porto", "alice", "resides in", "porto")),
        (Claim("n", "alice lives in lisbon", "alice", "lives in", "lisbon"),
         Claim("1", "bob resides in lisbon", "bob", "resides in", "lisbon")),
    ]
    for i, (new, old) in enumerate(cases):
        assert not agree(new, old), (new, old)
        hints = hints_for(new, [Claim(old.id, old.text, old.subject, old.predicate,
                                      old.object, similarity=0.99)])
        if i < 3:
            # Negation or other numbers: worded alike, saying otherwise.
            assert [(h.kind, h.reason.split(", but ")[0]) for h in hints] == [
                ("CONTRADICTS", "near-duplicate wording")], (new, old)
        else:
            # Another subject or object under another predicate: unrelated.
            assert hints == [], (new, old)
    same = (Claim("n", "alice lives in lisbon", "alice", "lives in", "lisbon"),
            Claim("1", "alice is a resident of lisbon", "alice", "is a resident of", "lisbon"))
    assert agree(*same)
    assert agree(Claim("n", "Alice lives in Lisbon"),
                 Claim("1", "alice resident lisbon", "alice", "resident", "lisbon"))


def test_negation_and_number_helpers() -> None:
    assert negated("Alice can't swim") and negated("never again") and negated("NO entry")
    assert not negated("Nothingness is a word") and not negated("Alice knows Nora")
    assert numbers("Java 21 and 1.5, then 2,000") == {"21", "1.5", "2,000"}
    assert numbers("no digits") == frozenset()


def test_candidate_query_searches_the_primary_index_with_in_index_filters() -> None:
    text, params = hints.candidates(
        namespace="ns", id="x", subject_key="s", predicate_key="p", lucene=None, now=NOW,
        clearance=None, probe=hints.HintProbe(vector=[0.1, 0.2]))
    assert text.startswith("CYPHER 25\n")
    assert ("SEARCH m IN (VECTOR INDEX memory_embedding FOR $vector"
            " WHERE m.namespace = $namespace AND m.status = 'active' LIMIT $overfetch)") in text
    assert "(m:Semantic OR m:Fact)" in text
    assert "2 * vector.similarity.cosine(m.embedding, $vector) - 1" in text
    assert params["vector"] == [0.1, 0.2] and params["space"] is None


def test_candidate_query_searches_an_active_side_space() -> None:
    space = VectorSpace("other-model", 64)
    text, params = hints.candidates(
        namespace="ns", id="x", subject_key=None, predicate_key=None, lucene="w", now=NOW,
        clearance=None, probe=hints.HintProbe(vector=[0.5] * 64, space=space))
    assert f"SEARCH v IN (VECTOR INDEX `{space.index}` FOR $vector" in text
    assert "WHERE v.namespace = $namespace LIMIT $overfetch" in text
    assert f"sv.`{space.vector_property}`" in text
    assert params["space"] == space.key


def test_without_a_probe_there_is_no_vector_branch() -> None:
    text, params = hints.candidates(namespace="ns", id="x", subject_key="s", predicate_key="p",
                                    lucene=None, now=NOW, clearance=None)
    assert "VECTOR INDEX" not in text and "null AS similarity" in text
    assert params["vector"] is None


def test_word_overlap_that_disagrees_is_a_contradiction_candidate() -> None:
    new = Claim("n", "The build requires Java 17")
    assert [h.kind for h in hints_for(new, [Claim("1", "The build requires Java 21")])] == [
        "CONTRADICTS"]
    assert [h.kind for h in hints_for(new, [Claim("1", "The build requires Java 17 now")])] == [
        "SUPPORTS"]
    assert [h.kind for h in hints_for(Claim("n", "Alice never drinks coffee at work"),
                                      [Claim("1", "Alice drinks coffee at work")])] == [
        "CONTRADICTS"]
