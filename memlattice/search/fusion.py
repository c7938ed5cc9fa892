"""Score fusion that a weak signal cannot drag down: the sum of z-scores.

Reciprocal-rank fusion gives every list the same say, so when one signal is
weak for a query (a small embedding model on conversational text, say) its
noise pulls good lexical matches down. Standardising each signal over the
candidates (subtract its mean, divide by its spread) and adding them
(CombSUM of z-scores, Lee 1997; Montague and Aslam 2001) lets the signal
whose scores stand out for this query decide more, with no constant to fit:
a signal that ranks everything alike has a small spread but also no
outliers, while one with a clear winner gives that winner a large z.

Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def zscores(values: Mapping[str, float]) -> dict[str, float]:
    """Each value's distance from the mean in standard deviations (all 0 when the
    values do not vary)."""
    if not values:
        return {}
    # z is scale-free: divide by the largest magnitude first so no square overflows.
    scale = max(abs(v) for v in values.values())
    if not math.isfinite(scale) or scale == 0.0:
        return dict.fromkeys(values, 0.0)
    scaled = {k: v / scale for k, v in values.items()}
    mean = sum(scaled.values()) / len(scaled)
    spread = math.sqrt(sum((v - mean) ** 2 for v in scaled.values()) / len(scaled))
    if spread <= 1e-12:
        return dict.fromkeys(values, 0.0)
    return {k: (v - mean) / spread for k, v in scaled.items()}


def completed(values: Mapping[str, float | None], ids: Sequence[str]) -> dict[str, float]:
    """A signal for every candidate: one it has no value for (a memory without
    an embedding, text with no query term) takes the lowest value seen."""
    known = [v for v in values.values() if v is not None]
    floor = min(known) if known else 0.0
    found = {k: v for k, v in values.items() if v is not None}
    return {k: found.get(k, floor) for k in ids}


def typical_best(pool: int) -> float:
    """How far above the mean the best of `pool` standard normal draws lies, about:
    sqrt(2 ln n), the classic growth of the maximum of n of them (at least 1)."""
    return max(1.0, math.sqrt(2.0 * math.log(pool))) if pool > 1 else 1.0


def fuse_z(signals: Sequence[Mapping[str, float | None]], ids: Sequence[str]) -> dict[str, float]:
    """The sum of the signals' z-scores over `ids`, as a score in (0, 1): the
    standard normal CDF of the sum divided by sqrt(number of signals), which is
    how a sum of that many independent standard scores spreads, and by how far
    the best of a pool this size lies above its mean by chance alone
    (`typical_best`). Without that second scale the top of any pool sat 4 or 5
    standard scores up and every top hit read 1.0000: the scores an agent or a
    person reads lost their spread exactly where the order matters. Now a hit
    as far up as the best of pure noise reads about 0.84, and the order at the
    top stays visible in the numbers. No constant is fitted, candidates keep
    their order, and unlike a min-max rescaling the weakest of a small pool is
    not pushed to 0 (the factors, graph shares and MMR that follow multiply and
    compare these scores)."""
    if not ids:
        return {}
    total = dict.fromkeys(ids, 0.0)
    for signal in signals:
        for k, z in zscores(completed(signal, ids)).items():
            total[k] += z
    spread = math.sqrt(max(len(signals), 1)) * typical_best(len(ids))
    return {k: 0.5 * math.erfc(-v / spread / math.sqrt(2.0)) for k, v in total.items()}
