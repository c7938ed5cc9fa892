"""Custom scalars.

`Vector` carries an embedding. As a scalar the whole array is checked in one
numpy pass, instead of graphql-core coercing every float as a `[Float!]` item
(which cost more than the database write for a batch of 384-d vectors). It
accepts a JSON array of numbers or, for compact transfers, a base64 string of
little-endian float32 values. Every vector must be one the index can compare
(memlattice.vector_checks).

`JSON` is strawberry's scalar with one more rule: no NaN, infinity or lone
surrogate (memlattice.json_values), whichever input carries it (metadata, value,
provenance, payload, edge metadata, filters), since no JSON document can
hold them and a stored one would come back as invalid JSON.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, NewType

import numpy as np
import strawberry
from strawberry.scalars import JSON

from memlattice.errors import ValidationError
from memlattice.json_values import json_problem
from memlattice.vector_checks import vector_problem

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
    problem = vector_problem(array)
    if problem is not None:
        raise ValidationError(f"a Vector {problem}")
    return tuple(array.tolist())


def parse_json(value: Any) -> Any:
    """A JSON input as sent, unless it holds what JSON or UTF-8 cannot carry."""
    problem = json_problem(value)
    if problem is not None:
        raise ValidationError(f"a JSON value holds {problem}")
    return value


_ECMA_404 = ("https://ecma-international.org/wp-content/uploads/"
             "ECMA-404_2nd_edition_december_2017.pdf")


Vector = NewType("Vector", tuple)

SCALARS = {
    Vector: strawberry.scalar(
        name="Vector",
        serialize=lambda value: list(value),
        parse_value=parse_vector,
        description="An embedding: a JSON array of numbers, or base64 of little-endian float32.",
    ),
    # Named, described and specified as strawberry's own, so the schema is unchanged.
    JSON: strawberry.scalar(
        name="JSON",
        description=f"The `JSON` scalar type represents JSON values as specified by"
        f" [ECMA-404]({_ECMA_404}).",
        specified_by_url=_ECMA_404,
        serialize=lambda value: value,
        parse_value=parse_json,
    ),
}
