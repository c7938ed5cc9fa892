"""described_enum: a domain enum registered for GraphQL with every value described."""

from __future__ import annotations

from enum import StrEnum

import pytest
import strawberry

from memlattice.resolvers.glossary import described_enum


class Colour(StrEnum):
    RED = "red"
    BLUE = "blue"


class Size(StrEnum):
    SMALL = "small"
    LARGE = "large"


described_enum(Colour, description="A colour.", values={
    Colour.RED: "Warm.", Colour.BLUE: "Cold."})


@strawberry.type
class Query:
    colour: Colour = Colour.RED


def test_every_value_gets_its_description_and_keeps_its_python_value() -> None:
    sdl = strawberry.Schema(query=Query).as_str()
    assert '"""Warm."""\n  RED' in sdl and '"""Cold."""\n  BLUE' in sdl
    assert Colour.RED.value == "red"


def test_a_value_without_a_description_is_refused() -> None:
    with pytest.raises(ValueError, match="LARGE"):
        described_enum(Size, description="A size.", values={Size.SMALL: "Small."})
