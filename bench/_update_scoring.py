"""Pure scoring for bench.knowledge_update: no I/O, so tests/unit checks it.

A scenario's truth is a list of update pairs (newer, older) over its message
ids. A question is scored from the ranked ids the search returned:

- `present`: current@1 when the top hit is the expected (newest) statement;
  stale-above when any statement the expected one replaces, directly or along
  a chain, ranks above it (or is returned while it is not); stale-marked when
  every such statement returned is marked outdated on its hit;
- `past`: past@3 when the expected (earlier) statement is in the top 3;
- `asof`: asof@1 when the top hit is the statement valid at the question's
  `asOf`;
- `keep` (negative scenarios, nothing replaced): keep@3 when the expected
  statement is in the top 3 and not marked outdated.

Links (write-side update candidates): a predicted pair (newer, older) is
correct when it is a truth pair or skips states of a truth chain (for A -> B
-> C the truth is (B, A) and (C, B); (C, A) is also correct, as it says
nothing false, but recall counts only the truth pairs: a detector that links
C to A and not to B has missed B's replacement). Any other pair, including one
between two statements of a negative scenario or with a filler turn, is
wrong. Precision is undefined (None, printed "n/a") with no predicted pair.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

Pair = tuple[str, str]  # (newer, older)

TOP_PAST = 3
TOP_KEEP = 3


def replaced_by(truth: Iterable[Pair], newer: str) -> set[str]:
    """Every statement `newer` replaces, directly or through a chain of updates."""
    older_of: dict[str, set[str]] = {}
    for new, old in truth:
        older_of.setdefault(new, set()).add(old)
    found: set[str] = set()
    frontier = [newer]
    while frontier:
        for old in older_of.get(frontier.pop(), ()):
            if old not in found and old != newer:
                found.add(old)
                frontier.append(old)
    return found


def closure(truth: Iterable[Pair]) -> set[Pair]:
    """The truth pairs and every pair that skips states of a chain (C -> A)."""
    pairs = list(truth)
    return {(new, old) for new in {n for n, _ in pairs} for old in replaced_by(pairs, new)}


def rank(ranked: Sequence[str], wanted: Iterable[str]) -> int | None:
    """0-based position of the first of `wanted` in `ranked`, None when absent."""
    targets = set(wanted)
    return next((i for i, memory in enumerate(ranked) if memory in targets), None)


@dataclass(frozen=True)
class Outcome:
    """One question's result: `hit` for its kind's metric, `stale_above` for present ones."""

    kind: str
    hit: bool
    stale_above: bool = False
    stale_marked: bool | None = None  # present: every returned stale hit marked outdated


def score_question(kind: str, ranked: Sequence[str], expected: Iterable[str],
                   stale: Iterable[str] = (), outdated: Iterable[str] = ()) -> Outcome:
    """Score one question; `stale` are the statements the expected one replaces,
    `outdated` the returned ids the service marked as outdated."""
    expected = set(expected)
    position = rank(ranked, expected)
    if kind == "present":
        stale_position = rank(ranked, stale)
        above = stale_position is not None and (position is None or stale_position < position)
        returned = set(stale) & set(ranked)
        marked = returned <= set(outdated) if returned else None
        return Outcome(kind, position == 0, above, marked)
    if kind == "asof":
        return Outcome(kind, position == 0)
    if kind == "past":
        return Outcome(kind, position is not None and position < TOP_PAST)
    if kind == "keep":
        marked = bool(expected & set(outdated))
        return Outcome(kind, position is not None and position < TOP_KEEP and not marked)
    raise ValueError(f"unknown question kind {kind!r}")


@dataclass
class LinkCounts:
    """Predicted links against truth, summed over scenarios."""

    predicted: int = 0
    correct: int = 0
    truth: int = 0
    found: int = 0

    def add(self, predicted: Iterable[Pair], truth: Iterable[Pair]) -> None:
        predicted_set, truth_set = set(predicted), set(truth)
        accepted = closure(truth_set)
        self.predicted += len(predicted_set)
        self.correct += len(predicted_set & accepted)
        self.truth += len(truth_set)
        self.found += len(predicted_set & truth_set)

    @property
    def precision(self) -> float | None:
        return self.correct / self.predicted if self.predicted else None

    @property
    def recall(self) -> float | None:
        return self.found / self.truth if self.truth else None


@dataclass
class Tally:
    """Question outcomes of one slice (a file, a domain group, all)."""

    outcomes: list[Outcome] = field(default_factory=list)

    def rate(self, kind: str) -> float | None:
        chosen = [o.hit for o in self.outcomes if o.kind == kind]
        return sum(chosen) / len(chosen) if chosen else None

    def stale_above(self) -> float | None:
        chosen = [o.stale_above for o in self.outcomes if o.kind == "present"]
        return sum(chosen) / len(chosen) if chosen else None

    def stale_marked(self) -> float | None:
        chosen = [o.stale_marked for o in self.outcomes if o.stale_marked is not None]
        return sum(chosen) / len(chosen) if chosen else None

    def count(self, kind: str) -> int:
        return sum(1 for o in self.outcomes if o.kind == kind)


def figure(value: float | None) -> str:
    """A ratio for the table, or n/a when nothing was measured."""
    return "n/a" if value is None else f"{value:.3f}"


TURN_GAP = timedelta(minutes=2)


def turn_times(scenario: dict[str, Any]) -> dict[str, datetime]:
    """Message id -> when it was said: its session's `at` plus TURN_GAP per turn before it."""
    times = {}
    for session in scenario["sessions"]:
        start = datetime.fromisoformat(session["at"])
        for number, turn in enumerate(session["turns"]):
            times[turn[0]] = start + number * TURN_GAP
    return times


def scenario_problems(scenario: dict[str, Any]) -> list[str]:
    """What makes a scenario's truth inconsistent (empty when it is sound): ids that do
    not exist, an update whose newer statement is not later, a present question whose
    answer was replaced, a past one whose answer never was, an as-of time at which the
    expected statement was not yet said or already replaced."""
    name = scenario.get("id", "?")
    problems: list[str] = []
    ids = [turn[0] for session in scenario["sessions"] for turn in session["turns"]]
    if len(set(ids)) != len(ids):
        problems.append(f"{name}: repeated message ids")
    times = turn_times(scenario)
    truth = [(u["newer"], u["older"]) for u in scenario.get("updates", [])]
    for newer, older in truth:
        if newer not in times or older not in times:
            problems.append(f"{name}: update {older} -> {newer} names an unknown message")
        elif times[newer] <= times[older]:
            problems.append(f"{name}: update {older} -> {newer} is not later")
    if scenario.get("negative") and truth:
        problems.append(f"{name}: a negative scenario has updates")
    replaced = {older: newer for newer, older in truth}
    for question in scenario["questions"]:
        kind = question["kind"]
        expected = question["expect"] if isinstance(question["expect"], list) else [
            question["expect"]]
        if any(e not in times for e in expected):
            problems.append(f"{name}: {question['q']!r} expects an unknown message")
            continue
        if kind in ("present", "keep") and any(e in replaced for e in expected):
            problems.append(f"{name}: {question['q']!r} expects a replaced statement")
        if kind == "past" and not all(e in replaced for e in expected):
            problems.append(f"{name}: {question['q']!r} expects a statement never replaced")
        if kind == "asof":
            at = datetime.fromisoformat(question["asOf"])
            for e in expected:
                if times[e] > at or (e in replaced and times[replaced[e]] <= at):
                    problems.append(f"{name}: {question['q']!r} {e} is not valid at {at}")
        if kind not in ("present", "past", "asof", "keep"):
            problems.append(f"{name}: unknown question kind {kind!r}")
    return problems
