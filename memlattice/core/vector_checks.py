"""Which vectors the index can use: the rule for every embedding and query vector.

Vectors are stored and compared as float32 under cosine similarity. A value
beyond float32 (`1e39`) turns into infinity there; a vector whose float32
norm is zero (all zeros, or values so small they vanish: `1e-60`) or infinite
(values whose squares overflow) has no cosine, so the index skips it and the
memory silently never comes back from vector search. Such vectors are refused
at input, with VALIDATION.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# float(np.finfo(np.float32).max); spelled out so that importing the model (which every
# CLI command does) does not import numpy, which only a vector check needs.
FLOAT32_MAX = 3.4028234663852886e38


def vector_problem(values: Sequence[float] | np.ndarray) -> str | None:
    """Why `values` cannot be a vector of the index, or None when it can."""
    import numpy as np

    array = np.asarray(values, dtype=np.float64)
    if not np.isfinite(array).all():
        return "must not contain NaN or infinity"
    if (np.abs(array) > FLOAT32_MAX).any():
        return f"has a value beyond float32 (|x| > {FLOAT32_MAX:.7g})"
    as32 = array.astype(np.float32)
    with np.errstate(over="ignore", under="ignore"):
        norm = float(np.sqrt(np.sum(as32 * as32, dtype=np.float32)))
    if norm == 0.0:
        return "has no direction (its float32 norm is zero), so cosine cannot compare it"
    if not np.isfinite(norm):
        return "has values too large for a float32 norm, so cosine cannot compare it"
    return None
