"""Forms of statement that notes and chats use besides full sentences (pure):
"label: value" lines, a length of time after a value, readings in their units."""

from __future__ import annotations

import pytest

from memlattice.core.statements.contrast import contrast, profile
from memlattice.core.statements.extract import extract
from memlattice.core.statements.readings import dimension, reading_of


def read(text: str) -> list[tuple[str | None, tuple[str, ...], str, str]]:
    return [(s.owner, s.thing, s.attribute, s.value) for s in extract(text, speaker="kai")]


@pytest.mark.parametrize(("text", "expected"), [
    ("New phone number: 0151 234 5678", ("kai", ("phone", "number"), "phone", "01512345678")),
    ("my new phone number: 0151 234 5678",
     ("kai", ("phone", "number"), "phone", "01512345678")),
    ("Standup: 10:30", (None, ("standup",), "when", "10:30")),
    ("New phone number: 0151 2233 4455, the old one is dead",
     ("kai", ("phone", "number"), "phone", "015122334455")),
    ("Postgres version: 16.2", (None, ("postgr", "version"), "version", "16.2")),
    ("Email: kai@example.com", ("kai", ("email",), "email", "kai@example.com")),
    # a clause after a label is read as it stands
    ("Update: the standup moved to Thursday.", (None, ("standup",), "when", "thursday")),
    ("Heads up: my number is 555-0101", ("kai", ("number",), "phone", "5550101")),
])
def test_a_label_before_one_typed_value_states_it(
    text: str, expected: tuple[str | None, tuple[str, ...], str, str],
) -> None:
    assert read(text) == [expected]


@pytest.mark.parametrize("text", [
    "Todo: Call Ana",  # a note: a name or free text after a label is no attribute's value
    "Status: green",
    "Agenda: 10:30 intro, 11:00 demo",  # more than one value
    "Incident: 2026-04-02, the primary failed over",  # an entry's date
    "Errors: 3",  # a bare number: a count or a reading as often as a setting
    "Ana: I live in Porto",  # someone's quoted words: whose "I" is not known
    "Mine: +34 612 345 678.",  # a pronoun names no attribute
    "The plan for Q3: move to Postgres 16",  # not a label
])
def test_a_label_before_anything_else_states_nothing(text: str) -> None:
    assert read(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("finally moved to porto last month", ("kai", (), "residence", "porto")),
    ("Started at Bosch on Monday.", ("kai", (), "employer", "bosch")),
    ("Upgraded to Postgres 16 last night.", ("kai", ("postgr",), "version", "16")),
])
def test_a_past_tense_sentence_without_its_subject_is_the_voice_s(
    text: str, expected: tuple[str | None, tuple[str, ...], str, str],
) -> None:
    assert read(text) == [expected]


@pytest.mark.parametrize("text", [
    "Needed to move to Porto",  # a wish, not a state
    "Ana, moved to Porto?",  # a question
    "Loved the show!",
    "Moved the standup to Thursday.",  # the standup's time, not the writer's
])
def test_a_subjectless_sentence_states_only_what_the_voice_says_of_itself(text: str) -> None:
    assert read(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("I joined Accenture two weeks ago", "accenture"),
    ("I moved to Porto 3 months ago", "porto"),
    ("we live in Leeds two years now", "leeds"),
    ("The limit is two weeks", "two weeks"),  # the length of time is the value itself
])
def test_a_length_of_time_after_a_value_is_no_part_of_it(text: str, value: str) -> None:
    assert [s.value for s in extract(text, speaker="kai")] == [value]


def test_a_reading_keeps_its_unit_and_knows_what_it_measures() -> None:
    assert reading_of("41", "gb") == "41gb"
    assert reading_of("240ms", "") == "240ms"
    assert reading_of("41", "rabbits") is None
    assert dimension("240ms") == dimension("5s") == "duration"
    assert dimension("0.2%") == dimension("87percent") == "share"


def test_a_reading_is_replaced_only_by_one_of_the_same_measure() -> None:
    # A share of requests that time out is not the timeout setting.
    assert contrast(profile("Gateway logs show 0.2% timeouts.", speaker="ops"),
                    profile("Bumped the upstream timeout to 5s.", speaker="ops"),
                    same_source=True) is None
    verdict = contrast(profile("The upstream timeout is 3000ms on the gateway.", speaker="ops"),
                       profile("Bumped the upstream timeout to 5s.", speaker="ops"),
                       same_source=True)
    assert verdict is not None and verdict.attribute == "reading"
