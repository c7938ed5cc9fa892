"""memlattice.search.information: what a memory says on its own, and how much of
its context it takes."""

from __future__ import annotations

import pytest

from memlattice.search.information import asked_share, rarity
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


@pytest.mark.parametrize(("text", "share"), [
    ("Dario: When is my car due for its service?", 1.0),
    ("Jonas: I switched to an iPhone 15 last week.", 0.0),
    ("Is it true? Yes, I live in Oslo now.", 1 / 3),  # it asks, then tells
    ("", 0.0),
    # a request says what someone wanted done, as a question says what they wanted
    # to know ...
    ("Walter: remind me who I call about the knee", 1.0),
    ("Rafael: can you send the invoice copies to me", 1.0),
    # ... unless it gives a value, or is the speaker's own news
    ("Adebayo: upgrade me to the 4 screen one", 0.0),
    ("Caroline: Let me tell you about the parade!", 0.0),
    ("Ines: Please note my new address is Storgata 5.", 0.0),
    # a command asks a tool, and a line ending in ":" announces; what follows answers
    ("tool: $ terraform output", 1.0),
    ("tool: $ kubectl get deploy gw\nNAME READY AGE\ngw 3/3 212d", 4 / 11),
    ("aws-cli: $ aws redshift describe-clusters -> cluster wh available, AZ eu-west-1b", 4 / 11),
    ("agent: Service catalogue lookup for ingest-worker:", 1.0),
    ("ci: Dockerfile: FROM python:3.11-slim", 0.0),
    ("Grace: I paid $5 for it.", 0.0),
])
def test_the_share_of_a_memory_that_only_asks(text: str, share: float) -> None:
    assert asked_share(text) == pytest.approx(share)


def test_a_memory_that_only_asks_ranks_below_one_that_tells_with_the_same_evidence() -> None:
    from datetime import UTC, datetime

    from memlattice.core.search_config import SearchConfig
    from memlattice.search.ranking import Candidate, base_scores

    now = datetime(2026, 1, 1, tzinfo=UTC)
    same = {"similarity": 0.6, "fts": 2.0, "created_at": now}
    order = base_scores([Candidate(id="asks", asked=1.0, **same),
                         Candidate(id="tells", asked=0.0, **same),
                         Candidate(id="other", similarity=0.1, fts=0.2, created_at=now)],
                        SearchConfig(), now=now, query="what car")
    assert [s.id for s in order][:2] == ["tells", "asks"]
    off = base_scores([Candidate(id="asks", asked=1.0, **same),
                       Candidate(id="tells", asked=0.0, **same)],
                      SearchConfig(question_discount=0.0), now=now, query="what car")
    assert off[0].score == off[1].score

