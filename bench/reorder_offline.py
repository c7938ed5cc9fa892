"""Reorderings of present questions' hits, tried offline on a knowledge-update dump.

    python -m bench.knowledge_update --files ... --dump rules.json
    python -m bench.update_judge --files ... --dump judge.json
    python -m bench.reorder_offline rules.json [judge.json ...]

A dump holds every question's ranked hits as numbers only (turn order, score,
role, speaker index, the hits' pairwise cosines in the server's embedder), so a
reordering can be scored on the blind files without reading them, and on a
run whose links a right judge made (what is left once links are right). Two
reorderings are tried, each only for a question about the present
(`asks_present`, not `asks_past`, no `asOf`), as the service would:

- **recency prior**: each hit's score, scaled to [0, 1] over the list, plus
  `w` times its place in time among the hits (0 the oldest, 1 the newest);
- **restatement first**: within the first three, a later hit of the same
  speaker whose cosine to an earlier one reaches `c` goes before it (the later
  memory says the same thing again, so it says what holds now).

Each parameter is also chosen leaving one file out (fit on the others, scored
on it), since a figure chosen on the files it is scored on says nothing about
unseen ones. Prints current@1, stale-above and keep@3 per setting for the
sealed files, the others, and per file.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench._update_scoring import score_question

Row = dict[str, Any]
Reorder = Callable[[Row], Row]

RECENCY_WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.6)
RESTATE_COSINES = (None, 0.3, 0.4, 0.5, 0.6, 0.7)
WINDOW = 3


def applies(row: Row) -> bool:
    """Whether the service would reorder this question: about the present, no asOf."""
    return bool(row["hits"]) and row["kind"] != "asof" and row["present"] and not row["past"]


def recency_prior(weight: float) -> Reorder:
    def reorder(row: Row) -> Row:
        hits = row["hits"]
        if weight == 0 or not applies(row):
            return row
        scores = [float(h["score"] or 0.0) for h in hits]
        low, span = min(scores), (max(scores) - min(scores)) or 1.0
        times = sorted({h["order"] for h in hits if h["order"] is not None})
        place = {t: i / max(1, len(times) - 1) for i, t in enumerate(times)}
        return {**row, "hits": sorted(hits, reverse=True, key=lambda h: (
            (float(h["score"] or 0.0) - low) / span + weight * place.get(h["order"], 0.0)))}
    return reorder


def restatement_first(cosine: float | None) -> Reorder:
    def reorder(row: Row) -> Row:
        hits, similar = row["hits"], row.get("cosines") or []
        if cosine is None or not applies(row) or not similar:
            return row
        order = list(range(len(hits)))

        def restates(i: int, j: int) -> bool:
            earlier, later = hits[i]["order"], hits[j]["order"]
            return (earlier is not None and later is not None and later > earlier
                    and hits[i]["speaker"] == hits[j]["speaker"] and similar[i][j] >= cosine)

        for _ in range(WINDOW):
            pair = next(((a, b) for a in range(min(WINDOW, len(order)))
                         for b in range(a + 1, min(WINDOW, len(order)))
                         if restates(order[a], order[b])), None)
            if pair is None:
                break
            order.insert(pair[0], order.pop(pair[1]))
        return {**row, "hits": [hits[k] for k in order]}
    return reorder


def figures(rows: Sequence[Row]) -> dict[str, float]:
    """current@1, stale-above and keep@3, scored by bench._update_scoring as the bench
    scores them (a hit's place in the list stands for its id)."""
    tallies: dict[str, list[int]] = {}

    def add(name: str, hit: bool) -> None:
        tally = tallies.setdefault(name, [0, 0])
        tally[0] += hit
        tally[1] += 1

    for row in rows:
        if row["kind"] not in ("present", "keep"):
            continue
        hits = row["hits"]
        ranked = [str(i) for i in range(len(hits))]
        outcome = score_question(
            row["kind"], ranked, [str(i) for i, h in enumerate(hits) if h["role"] == "expected"],
            [str(i) for i, h in enumerate(hits) if h["role"] == "stale"],
            [str(i) for i, h in enumerate(hits) if h["outdated"]])
        if row["kind"] == "present":
            add("current@1", outcome.hit)
            add("stale-above", outcome.stale_above)
        else:
            add("keep@3", outcome.hit)
    return {name: hit / total for name, (hit, total) in tallies.items()}


def objective(values: dict[str, float]) -> float:
    return values.get("current@1", 0) - values.get("stale-above", 0) + values.get("keep@3", 0)


def line(label: str, values: dict[str, float]) -> str:
    return f"  {label:<22}" + "  ".join(
        f"{name} {values[name]:.3f}" for name in ("current@1", "stale-above", "keep@3")
        if name in values)


def report(rows: list[Row], name: str, settings: dict[str, Reorder]) -> None:
    files = sorted({r["file"] for r in rows})
    groups = {"sealed files": [r for r in rows if r["file"].startswith("sealed")],
              "other files": [r for r in rows if not r["file"].startswith("sealed")]}
    for group, members in groups.items():
        if not members:
            continue
        print(f"# {name}: {group} ({len(members)} questions)")
        for label, reorder in settings.items():
            print(line(label, figures([reorder(r) for r in members])))
    print(f"# {name}: each file, its setting chosen on the other files")
    for held in files:
        fit = [r for r in rows if r["file"] != held]
        best = max(settings, key=lambda label: objective(
            figures([settings[label](r) for r in fit])))
        scored = [r for r in rows if r["file"] == held]
        before, after = figures(scored), figures([settings[best](r) for r in scored])
        print(f"  {held:<9} {best:<18} current@1 {before['current@1']:.3f} ->"
              f" {after['current@1']:.3f}  stale-above {before['stale-above']:.3f} ->"
              f" {after['stale-above']:.3f}  keep@3 {before.get('keep@3', 0):.3f} ->"
              f" {after.get('keep@3', 0):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dumps", type=Path, nargs="+",
                        help="--dump files of bench.knowledge_update or bench.update_judge")
    args = parser.parse_args()
    families = {
        "recency prior": {f"w={w}": recency_prior(w) for w in RECENCY_WEIGHTS},
        "restatement first": {f"c={c}": restatement_first(c) for c in RESTATE_COSINES},
    }
    for dump in args.dumps:
        rows = json.loads(dump.read_text())
        for family, settings in families.items():
            report(rows, f"{dump.name}, {family}", settings)


if __name__ == "__main__":
    main()
