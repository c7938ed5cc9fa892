"""Custom scalars.

`Vector` carries an embedding. As a scalar the whole array is checked in one
numpy pass, instead of graphql-core coercing every float as a `[Float!]` item
(which cost more than the database write for a batch of 384-d vectors). It
accepts a JSON array of numbers or, for compact transfers, a base64 string of
little-endian float32 values.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, NewType

import numpy as np
import strawberry

from memlattice.errors import ValidationError

MAX_DIMENSION = 4096


def parse_vector(value: Any) -> tuple[float, ...]:
    if isinstance(value, str):
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise ValidationError("a Vector string must be base64 of float32 values") from None
        if len(raw) % 4:
            raise ValidationError("a base64 Vector must hold a whole number of float32 values")
        array = np.frombuffer(raw, dtype="<f4").astype(np.float64)
    elif isinstance(value, list):
        try:
            array = np.asarray(value)
        except ValueError:  # ragged nesting
            raise ValidationError("a Vector must be a flat list of numbers") from None
        # Booleans, strings, nulls or nested lists give another dtype or shape.
        if array.ndim != 1 or array.dtype.kind not in "iuf":
            raise ValidationError("a Vector must be a flat list of numbers")
        array = array.astype(np.float64)
    else:
        raise ValidationError("a Vector is a list of numbers or a base64 float32 string")
    if array.size == 0 or array.size > MAX_DIMENSION:
        raise ValidationError(f"a Vector must have 1 to {MAX_DIMENSION} values")
    if not np.isfinite(array).all():
        raise ValidationError("a Vector must not contain NaN or infinity")
    return tuple(array.tolist())


Vector = NewType("Vector", tuple)

SCALARS = {
    Vector: strawberry.scalar(
        name="Vector",
        serialize=lambda value: list(value),
        parse_value=parse_vector,
        description="An embedding: a JSON array of numbers, or base64 of little-endian float32.",
    ),
}
