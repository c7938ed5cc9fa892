"""Vector space identities: safe names, no collisions, which spaces a write feeds."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlattice.core.errors import ValidationError
from memlattice.core.vector_spaces import BuildStatus, SpaceState, VectorSpace, requested_space

NAME = re.compile(r"^[a-z0-9_]+$")


@given(st.text(min_size=1, max_size=200), st.integers(min_value=1, max_value=4096))
def test_names_are_always_safe_to_splice_into_cypher(model: str, dimension: int) -> None:
    space = VectorSpace(model, dimension)
    assert NAME.match(space.slug) and NAME.match(space.index)
    assert space.vector_property == f"v_{space.slug}"
    assert len(space.index) < 80


def test_spaces_that_read_alike_still_get_their_own_index() -> None:
    a, b = VectorSpace("text-embedding-3", 512), VectorSpace("text_embedding_3", 512)
    assert a.slug != b.slug and a.index != b.index
    assert VectorSpace("m", 128).index != VectorSpace("m", 256).index
    assert VectorSpace("m", 128) == VectorSpace("m", 128)


@pytest.mark.parametrize("model, dimension", [("", 10), ("m", 0), ("m", 5000), ("x" * 201, 8)])
def test_bad_spaces_are_validation_errors(model: str, dimension: int) -> None:
    with pytest.raises(ValidationError):
        VectorSpace(model, dimension)


def test_the_primary_space_is_not_a_side_space() -> None:
    primary = VectorSpace("l2_supercat", 256)
    assert requested_space("l2_supercat", 256, primary=primary) is None
    assert requested_space("l2_supercat", 128, primary=primary) == VectorSpace("l2_supercat", 128)


def test_writes_feed_the_active_and_the_target_space_once_each() -> None:
    a, b = VectorSpace("a", 8), VectorSpace("b", 8)
    assert SpaceState.primary("ns").side_spaces == ()
    state = SpaceState("ns", active=a, target=b, status=BuildStatus.BUILDING)
    assert state.side_spaces == (a, b)
    assert SpaceState("ns", active=None, target=b, status=BuildStatus.BUILDING).side_spaces == (b,)
    assert SpaceState("ns", active=a, target=a, status=BuildStatus.READY).side_spaces == (a,)
