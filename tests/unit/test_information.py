"""memlattice.search.information: what a memory says on its own, and how much of
its context it takes."""

from __future__ import annotations

import pytest

from memlattice.search.information import rarity
from memlattice.search.lexical import Bm25, NamespaceStats

SAMPLE = [
    "alice: haha, totally!",
    "bob: totally agree, haha",
    "alice: I adopted a greyhound called Pepper from the shelter in Porto",
    "bob: my sister started a pottery class on Tuesdays",
    "alice: haha yes",
    "bob: the shelter in Porto has cats as well",
]


def test_rare_words_carry_more_than_common_ones() -> None:
    r = rarity(SAMPLE)
    assert r is not None
    assert r.idf("greyhound") > r.idf("haha")
    assert r.mass("alice: I adopted a greyhound called Pepper") > r.mass("alice: haha, totally!")


def test_a_filler_turn_takes_a_small_share_and_a_rich_one_all() -> None:
    r = rarity(SAMPLE)
    assert r is not None
    filler = r.own_share("alice: haha, totally!")
    rich = r.own_share("alice: I adopted a greyhound called Pepper from the shelter in Porto")
    assert 0.0 < filler < 0.5
    assert rich == 1.0


def test_no_sample_no_rarity_and_words_never_seen_are_rare() -> None:
    assert rarity([]) is None
    r = rarity(SAMPLE)
    assert r is not None
    assert r.idf("zeppelin") > r.idf("porto") > r.idf("haha")


def test_context_fields_weigh_as_much_as_the_turn_says() -> None:
    bm25 = Bm25(NamespaceStats(documents=10, mean_length=5.0), {"pepper": 1})
    neighbours = [(1, "alice: Pepper the greyhound"), (2, "bob: and Pepper again")]
    full = bm25.context_fields(neighbours, hops=3, decay=0.5)
    part = bm25.context_fields(neighbours, hops=3, decay=0.5, own=0.2)
    assert [f.weight for f in full] == [0.5, 0.25]
    assert [f.weight for f in part] == pytest.approx([0.1, 0.05])
    assert bm25.score_fields(part) < bm25.score_fields(full)
