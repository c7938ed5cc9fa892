"""Changes written as edits: a diff, an arrow, a correction.

Agents store tool output and people correct themselves in forms that say outright
which value replaced which, with no verb of change at all:

- a unified diff (`git diff`, `helm diff`, `kubectl diff`): a line taken out
  ("-UPSTREAM_TIMEOUT_MS=3000") and a line put in ("+UPSTREAM_TIMEOUT_MS=5000");
- an arrow between two values (`region: "eu-west-1" -> "eu-central-1"`, as
  terraform plans and change notes write it);
- a correction ("the port is 8081, not 8080", "typo in the handover doc");
- a setting given a value in a command or a config line, in a memory that says
  it took effect ("applied config: --web.listen-address=:9256", "Setting
  LEDGERD_URL=http://ledgerd:8081 ... deployed").

`read_edits` turns each into what the contrast reading understands: the text
without the lines a diff took out (they hold the old values), the values that
were put in as where the change leads, and a mark of change. It also says what
such text holds that is no statement: a program's output after a shell prompt
has capitals of its own ("NAME  READY  AGE", "Happy Helming!"), which name no
value, and an offer that asks leave to go ahead ("That's the Family plan at
€15.99 a month. Shall I go ahead?") is not yet a state. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A diff's line, taken out or put in; "---" and "+++" name the files.
_REMOVED = re.compile(r"(?m)^\s*-(?!--)(?=\s*\S).*$")
_ADDED = re.compile(r"(?m)^\s*\+(?!\+\+)\s*(\S.*)$")
# An arrow between two values, each quoted or holding a digit: what was on the left
# became what is on the right (not a menu's path, "Settings → Profiles", nor a
# request and its answer, "GET /accounts -> 200").
_VALUE = r"(?:\"[^\"\n]+\"|'[^'\n]+'|[^\s\"']*\d[^\s\"']*)"
_ARROW = re.compile(rf"(?<!\S)({_VALUE})\s+(?:->|→|=>)\s+(?={_VALUE}(?:\s|$|[.,;)]))")
# A value followed by ", not" and another: the first replaces the second.
_CORRECTED = re.compile(r"([\w.:@/%-]*\d[\w.:@/%-]*|\b[A-Z][\w-]+),?\s+not\s+"
                        r"(?:[\w.:@/%-]*\d|[A-Z])")
# A shell prompt opening a line: what follows is a command and its output.
_PROMPT = re.compile(r"(?m)^\s*\$ \S")
# A question asking leave to go ahead: what the memory states is an offer.
_ASKS_LEAVE = re.compile(r"\b(?:go ahead|proceed)\b[^.!?]*\?", re.IGNORECASE)
# A setting given a value in a command or a config line ("--web.listen-address=:9256",
# "LEDGERD_URL=http://ledgerd:8081"), where the memory says it took effect.
_ASSIGNED = re.compile(r"(?:--[\w.-]+|\b[A-Z][A-Z0-9_]*[A-Z0-9])=(\S+)")
_APPLIED = re.compile(r"(?i)\b(?:applied|apply complete|deployed|redeployed|rolled out"
                      r"|reconfigured|now set|set to)\b")
_VALUE_TOKEN = re.compile(r"[\w$€£+][\w$€£'@+\-./:]*[\w%]|\d")


# The marks `read_edits` gives: each replaces a value as a verb of change does.
EDIT_MARKS = frozenset({"+/-", "->", "not", "applied"})


@dataclass(frozen=True, slots=True)
class Edits:
    """A memory's text as the contrast reading takes it, and what its edits say."""

    text: str
    # Marks of change the edits make ("+/-" for a diff, "->" for an arrow).
    marks: tuple[str, ...]
    # Values a diff put in or a correction gave: where the change leads.
    targets: frozenset[str]
    # It offers a state and asks leave to go ahead.
    offer: bool = False


def read_edits(text: str) -> Edits:
    """The edits `text` writes (module docstring); `text` as it is if none."""
    marks: list[str] = []
    targets: set[str] = set()
    added = _ADDED.findall(text)
    if added and _REMOVED.search(text):
        marks.append("+/-")
        text = _ADDED.sub(r"\1", _REMOVED.sub("", text))
        for line in added:
            targets.update(t.strip(".,").lower()
                           for t in _VALUE_TOKEN.findall(line.split("=")[-1]))
    if _ARROW.search(text):
        marks.append("->")
        # "to" is where a change leads
        text = _ARROW.sub(r"\1 to ", text)
    if _APPLIED.search(text):
        assigned = _ASSIGNED.findall(text)
        if assigned:
            marks.append("applied")
            for value in assigned:
                targets.update(t.strip(".,").lower() for t in _VALUE_TOKEN.findall(value))
    for match in _CORRECTED.finditer(text):
        marks.append("not")
        targets.add(match.group(1).strip(".,").lower())
    prompt = _PROMPT.search(text)
    if prompt is not None:  # a program's capitals are its own (module docstring)
        text = text[:prompt.start()] + text[prompt.start():].lower()
    return Edits(text=text, marks=tuple(marks), targets=frozenset(targets),
                 offer=bool(_ASKS_LEAVE.search(text)))
