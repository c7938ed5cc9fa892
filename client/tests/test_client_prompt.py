"""recall_for_prompt's formatting: the budget is a hard limit, the best memories go first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from memlattice_client import Memory, SearchHit, estimate_tokens, format_memories
from memlattice_client._models import MemoryUpdate, UpdateStatus
from memlattice_client._prompt import age

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def hit(content: str, score: float, *, days: int = 0, tags: tuple[str, ...] = (),
        conflicts: tuple[Memory, ...] = (), id: str = "m") -> SearchHit:
    at = NOW - timedelta(days=days)
    memory = Memory(id=id, namespace="n", content=content, tags=tags, created_at=at,
                    updated_at=at, version=1)
    return SearchHit(memory=memory, score=score, conflicts=conflicts)


texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
                min_size=1, max_size=400)
hits_strategy = st.lists(
    st.builds(hit, texts, st.floats(0, 1), days=st.integers(0, 4000),
              tags=st.lists(st.text(min_size=1, max_size=12), max_size=3).map(tuple),
              id=st.uuids().map(str)),
    max_size=15,
)


@settings(max_examples=150, deadline=None)
@given(hits_strategy, st.integers(0, 600))
def test_never_exceeds_the_budget(hits: list[SearchHit], budget: int) -> None:
    block = format_memories(hits, budget, query="what do we know?", now=NOW)
    assert estimate_tokens(block) <= budget or block == ""


@settings(max_examples=100, deadline=None)
@given(hits_strategy, st.integers(40, 600))
def test_kept_memories_are_the_highest_scoring(hits: list[SearchHit], budget: int) -> None:
    block = format_memories(hits, budget, now=NOW, count_tokens=len)
    bullets = [line for line in block.splitlines() if line.startswith("- [")]
    ranked = sorted(hits, key=lambda h: -h.score)
    for line, expected in zip(bullets, ranked):
        assert f"score {expected.score:.2f}" in line
    assert len(bullets) <= len(hits)


def test_a_long_memory_is_cut_not_dropped() -> None:
    long = "Alice keeps a detailed travel diary. " * 200
    block = format_memories([hit(long, 0.9), hit("second memory", 0.5)], 120, now=NOW)
    lines = block.splitlines()
    assert len(lines) == 2
    assert lines[1].startswith("- [2026-06-01, today] Alice keeps a detailed")
    assert "…" in lines[1]
    assert estimate_tokens(block) <= 120


def test_everything_fits_with_dates_tags_scores_and_conflicts() -> None:
    rival = hit("Alice lives in Porto", 0.2).memory
    block = format_memories(
        [hit("Alice moved to Lisbon", 0.8, days=40, tags=("travel",), conflicts=(rival,)),
         hit("Bob likes tea", 0.3, days=400)], 1000, query="Alice", now=NOW)
    assert block.splitlines() == [
        'Relevant memories for "Alice", most relevant first:',
        ('- [2026-04-22, 1 month ago] Alice moved to Lisbon (tags: travel; score 0.80;'
         ' CONFLICTS with "Alice lives in Porto")'),
        "- [2025-04-27, 1 year ago] Bob likes tea (score 0.30)",
    ]


def test_budget_smaller_than_the_header_gives_nothing() -> None:
    assert format_memories([hit("x", 1.0)], 3, now=NOW) == ""


def test_no_hits_says_so() -> None:
    assert format_memories([], 100, now=NOW).endswith("- (no memories found)")


def test_pluggable_counter_is_used() -> None:
    words = format_memories([hit("one two three four five six", 1.0)] * 3, 25,
                            count_tokens=lambda s: len(s.split()), now=NOW)
    assert len(words.split()) <= 25


def test_age_wording() -> None:
    assert age(NOW, NOW) == "today"
    assert age(NOW - timedelta(days=1), NOW) == "1 day ago"
    assert age(NOW - timedelta(days=15), NOW) == "2 weeks ago"
    assert age(NOW - timedelta(days=800), NOW) == "2 years ago"


def test_an_outdated_memory_says_what_replaced_it_and_follows_it() -> None:
    newer = hit("We moved to Tromsø.", 0.8, id="new").memory
    old = hit("I live in Bergen.", 0.8, days=200, id="old")
    old = old.model_copy(update={"outdated_by": newer})
    block = format_memories([hit("We moved to Tromsø.", 0.8, id="new"), old], 200, now=NOW)
    lines = block.splitlines()
    assert "Tromsø" in lines[1] and "OUTDATED" not in lines[1]
    assert 'OUTDATED: replaced by "We moved to Tromsø."' in lines[2]


def link(status: UpdateStatus, proposed_by: str | None = None) -> MemoryUpdate:
    return MemoryUpdate(id="upd-1", status=status, kind="update", confidence=0.9,
                        reason="home: Bergen -> Tromsø", subject="speaker", attribute="home",
                        proposed_by=proposed_by)


def test_an_unconfirmed_link_is_told_as_one_and_a_confirmed_one_as_firm() -> None:
    """The rules' links are right about half the time on data nobody tuned them on: an
    agent is told a candidate may be outdated, and by whose word; a confirmed one is."""
    newer = hit("We moved to Tromsø.", 0.8, id="new").memory
    old = hit("I live in Bergen.", 0.8, days=200, id="old")

    def line(update: MemoryUpdate) -> str:
        marked = old.model_copy(update={"outdated_by": newer, "update": update})
        return format_memories([marked], 200, now=NOW).splitlines()[1]

    inferred = line(link(UpdateStatus.CANDIDATE))
    assert 'MAY BE OUTDATED: a later memory seems to replace it, "We moved to Tromsø."' in inferred
    assert "inferred, not confirmed" in inferred
    assert "proposed by agent-7, not confirmed" in line(link(UpdateStatus.CANDIDATE, "agent-7"))
    confirmed = line(link(UpdateStatus.CONFIRMED))
    assert 'OUTDATED: replaced by "We moved to Tromsø."' in confirmed
    assert "MAY BE" not in confirmed
