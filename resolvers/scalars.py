"""Custom scalars.

`Vector` carries an embedding. As a scalar the whole array is checked in one
numpy pass, instead of graphql-core coercing every float as a `[Float!]` item
(which cost more than the database write for a batch of 384-d vectors). It
accepts a JSON array of numbers or, for compact transfers, a base64 string of
little-endian float32 values. Every vector must be one the index can compare
(memlattice.core.vector_checks).

`DateTime` and `JSON` replace strawberry's own scalars of those names, with
the same syntax and more bounds: a DateTime must be an instant of the supported
range (memlattice.core.times); a JSON value may nest at most MAX_JSON_DEPTH levels
(memlattice.core.nesting) and holds no NaN, infinity or lone surrogate
(memlattice.core.json_values), whichever input carries it (metadata, value,
provenance, payload, edge metadata, filters), since no JSON document can hold
them and a stored one would come back as invalid JSON. Both are checked while
variables and literals are coerced, so an input over a bound is VALIDATION
before any resolver runs.
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Any, NewType

import numpy as np
import strawberry
from strawberry.scalars import JSON

from memlattice.core.errors import ValidationError
from memlattice.core.json_values import json_problem
from memlattice.core.nesting import MAX_JSON_DEPTH, check_json
from memlattice.core.times import RANGE_TEXT, parse_instant
from memlattice.core.vector_checks import vector_problem

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


def parse_datetime(value: Any) -> datetime:
    """ISO 8601 text -> an aware UTC datetime of the supported range (else an error
    graphql-core reports as the variable's or literal's VALIDATION error)."""
    if not isinstance(value, str):
        raise TypeError(f"a DateTime is an ISO 8601 string, not {type(value).__name__}")
    return parse_instant(value)


def parse_json(value: Any) -> Any:
    """A JSON input as sent, unless it nests deeper than MAX_JSON_DEPTH levels or
    holds what JSON or UTF-8 cannot carry."""
    check_json(value, "a JSON value")
    problem = json_problem(value)
    if problem is not None:
        raise ValidationError(f"a JSON value holds {problem}")
    return value


Vector = NewType("Vector", tuple[float, ...])

SCALARS: dict[object, Any] = {
    Vector: strawberry.scalar(
        name="Vector",
        serialize=lambda value: list(value),
        parse_value=parse_vector,
        description="An embedding: a JSON array of numbers, or base64 of little-endian float32.",
    ),
    datetime: strawberry.scalar(
        name="DateTime",
        serialize=datetime.isoformat,
        parse_value=parse_datetime,
        description=f"Date with time (ISO 8601); an offset-less time is UTC. Instants from"
                    f" {RANGE_TEXT}.",
    ),
    JSON: strawberry.scalar(
        name="JSON",
        serialize=lambda value: value,
        parse_value=parse_json,
        description=f"Any JSON value (ECMA-404) nested at most {MAX_JSON_DEPTH} levels deep.",
        specified_by_url="https://ecma-international.org/wp-content/uploads/"
                         "ECMA-404_2nd_edition_december_2017.pdf",
    ),
}
