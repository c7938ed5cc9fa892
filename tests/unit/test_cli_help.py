"""`memlattice --help` and every command's help teach: what it does, and examples."""

from __future__ import annotations

import argparse

import pytest

from memlattice.cli import build_parser


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_top_level_help_names_every_command_and_shows_a_first_run() -> None:
    text = build_parser().format_help()
    for name in _commands():
        assert f"memlattice {name}" in text, name
    assert "examples:" in text


@pytest.mark.parametrize("name", sorted(_commands()))
def test_each_command_explains_itself_with_examples(name: str) -> None:
    command = _commands()[name]
    assert command.description and len(command.description.split()) >= 8, name
    text = command.format_help()
    assert "examples:" in text and f"memlattice {name}" in text.split("examples:", 1)[1], name
