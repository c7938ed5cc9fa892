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


def _actions(command: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (sub,) = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_the_top_level_help_lists_every_action_of_keys() -> None:
    text = build_parser().format_help()
    line = next(x for x in text.splitlines() if "memlattice keys " in x)
    listed = line.split("memlattice keys ", 1)[1].split()[0].split("|")
    assert sorted(listed) == sorted(_actions(_commands()["keys"]))


def test_help_examples_carry_no_run_of_stray_spaces() -> None:
    """A backslash that ended an example's line inside the epilog's string joined the
    next line to it, with that line's indent."""
    for name, command in _commands().items():
        examples = command.format_help().split("examples:", 1)[1]
        for line in examples.splitlines():
            assert "  " not in line.strip().split("#", 1)[0].rstrip(), (name, line)


def test_keys_limits_help_says_what_a_burst_is_and_when_changes_hold() -> None:
    limits = _actions(_commands()["keys"])["limits"]
    text = " ".join(limits.format_help().split())
    assert "effective at once" not in text and "within a second" in text
    assert "above the rate" not in text and "bucket's size" in text
