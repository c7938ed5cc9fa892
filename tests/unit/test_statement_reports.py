"""Who a report is about, and the report in that person's voice (pure)."""

from __future__ import annotations

import pytest

from memlattice.core.statements.of_memory import reports_in, told_statements
from memlattice.core.statements.reports import in_their_voice, reported_person

PEOPLE = frozenset({"ana", "tom", "leah", "haruto lee", "oskar"})


@pytest.mark.parametrize(("text", "speaker", "earlier", "person"), [
    # named as a sentence's subject
    ("Ana quit Siemens last month, she's at Bosch now.", "tom", [], "ana"),
    ("Big news. Haruto Lee has left the insurer.", "tom", [], "haruto lee"),
    # "he" or "she" for the one person the turns just before named
    ("he handed in his notice, he's at Kestrel now", "tom",
     ["did you hear about Haruto?", "no, what"], "haruto lee"),
    # after discourse words, the name is still the sentence's subject
    ("yes! btw Ana left Siemens, she's at Bosch now", "tom", [], "ana"),
    ("oh and Ana moved to Porto", "tom", [], "ana"),
    # but not inside another clause
    ("what Ana said was funny", "tom", [], None),
    # spoken to, not spoken of
    ("Oskar, I'm in for Friday", "leah", [], None),
    ("boo. Oskar I'm in", "leah", [], None),
    ("Ana how's the new job?", "tom", [], None),
    # named, but not as the subject; or two people named
    ("I had lunch with Ana, the place moved to Main Street", "tom", [], None),
    ("Ana and Leah moved the meeting to Friday", "tom", [], None),
    # the pronoun's antecedent is nobody who speaks there, or is ambiguous
    ("she moved to Lyon", "tom", ["my sister called"], None),
    ("she moved to Lyon", "tom", ["Ana and Leah were there"], None),
    # too far back
    ("she moved to Lyon", "tom", ["Ana was asking", "ok", "sure"], None),
    # one's own name is no report
    ("Tom here: I moved to Lyon", "tom", [], None),
])
def test_a_report_is_about_someone_who_speaks_there(text: str, speaker: str,
                                                    earlier: list[str],
                                                    person: str | None) -> None:
    assert reported_person(text, speaker=speaker, earlier=earlier, people=PEOPLE) == person


def test_a_report_in_the_voice_of_the_person_it_is_about() -> None:
    assert in_their_voice("Ana quit Siemens, she's at Bosch now. I was surprised.",
                          "ana") == "I quit Siemens, I'm at Bosch now. someone was surprised."
    assert in_their_voice("Haruto Lee sold his car", "haruto lee") == "I sold my car"


def test_only_a_conversation_s_turns_report() -> None:
    turns = [("leah", "did anyone hear from Ana?", True),
             ("tom", "she moved to Lyon in May", True),
             ("tom", "she moved to Lyon in May", False)]
    assert reports_in(turns, PEOPLE) == [None, "ana", None]


def test_what_a_report_states_is_the_person_s_own_statement() -> None:
    said = told_statements(in_their_voice("she moved to Lyon in May, loving it", "ana"), "ana")
    assert said and all(s.owner == "ana" for s in said)
    assert told_statements("my sister says hi", "ana") == []


def test_names_in_any_alphabet_are_read() -> None:
    assert reported_person("Łukasz sold his car, he drives a Škoda now", speaker="tom",
                           earlier=[], people=frozenset({"łukasz", "tom"})) == "łukasz"
    assert in_their_voice("Łukasz sold his car", "łukasz") == "I sold my car"
