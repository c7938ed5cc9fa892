"""Retrieval figures per question and leave-one-group-out selection, pure.

The LoCoMo benchmark (bench.locomo) scores each question's ranked hits
against its evidence turns and reports the figures per configuration, per
category and per conversation. A configuration that has a parameter is only
credited with what it scores on a conversation its parameter was not chosen
on: `leave_one_out` picks the value on the other conversations and scores it
on the held-out one, which is what a constant picked on dev data will do on
conversations nobody has seen.

No I/O here, so the arithmetic has unit tests of its own
(tests/unit/test_retrieval_metrics.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Scores:
    """One question's figures for one ranked list."""

    recall: float  # share of the evidence in the top k
    hit: float  # 1.0 when any evidence is in the top k
    ndcg: float  # binary-relevance nDCG@k: where in the top k the evidence sits
    precision5: float  # share of the top 5 that is evidence


def score(found: Sequence[str], evidence: frozenset[str], k: int) -> Scores:
    """The figures of a ranked list `found` against the question's `evidence`."""
    if not evidence:
        raise ValueError("a question without evidence cannot be scored")
    top = list(found[:k])
    overlap = len(evidence.intersection(top))
    gain = sum(1.0 / math.log2(rank + 2) for rank, id in enumerate(top) if id in evidence)
    ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(len(evidence), k)))
    head = top[:5]
    return Scores(recall=overlap / len(evidence), hit=1.0 if overlap else 0.0,
                  ndcg=gain / ideal, precision5=sum(id in evidence for id in head) / 5.0)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


@dataclass(frozen=True)
class HeldOut:
    """The value chosen without a group, and what it scores on that group."""

    group: str
    chosen: str
    score: float


def leave_one_out(by_value: Mapping[str, Mapping[str, Sequence[float]]]) -> list[HeldOut]:
    """For each group, the value whose mean over the *other* groups' questions is
    highest (ties: the first value given), and its mean on the held-out group.

    `by_value`: value name -> group -> per-question figures; every value must
    cover the same groups.
    """
    values = list(by_value)
    if not values:
        return []
    groups = sorted(by_value[values[0]])
    out = []
    for held in groups:
        fitted = {v: mean([x for group, xs in by_value[v].items() if group != held for x in xs])
                  for v in values}
        chosen = max(values, key=lambda v: (fitted[v], -values.index(v)))
        out.append(HeldOut(group=held, chosen=chosen, score=mean(by_value[chosen][held])))
    return out
