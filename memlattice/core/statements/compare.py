"""Whether a newer statement updates (or contradicts) an older one, and how surely.

Two statements are about the same thing when their owners agree (or one names
no owner and the things agree) and their things agree (the same words, or one's
words inside the other's: "number" and "phone number"); they state the same
attribute when the relation is the same. A different value then means one of
two things:

- an **update**: the newer statement says something changed ("now", "moved",
  "new", a verb of change, "not ... anymore"), or comes from the same source as
  the older one (a speaker restating their own fact states its new value);
- a **contradiction**: another source states another value and says nothing
  changed; both cannot hold at once, and nothing says which is right.

A newer statement that denies the older one's value ("I don't live in Bergen
anymore") updates it too. The confidence starts from how exactly subject and
attribute matched; it is what a namespace's automatic superseding compares with
its threshold. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memlattice.core.statements.extract import Statement
from memlattice.core.statements.values import same_value

Kind = Literal["update", "contradiction"]


@dataclass(frozen=True, slots=True)
class Verdict:
    kind: Kind
    confidence: float
    reason: str
    subject: str
    attribute: str
    matched: tuple[str, ...]


def subject_name(s: Statement) -> str:
    """How a link names the subject: "ines", "alice's sister", "alice: phone number"."""
    thing = s.thing_text or " ".join(s.thing)
    if s.owner and thing:
        return f"{s.owner}: {thing}"
    return s.owner or thing


def _things_agree(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[bool, bool]:
    """(agree, exactly)."""
    if a == b:
        return True, True
    if not a or not b:
        return False, False
    sa, sb = set(a), set(b)
    # The head (last word) must be shared: "phone number" and "number" agree,
    # "phone number" and "phone case" do not.
    return (sa <= sb or sb <= sa) and (a[-1] == b[-1]), False


def about_same(a: Statement, b: Statement) -> bool:
    """Whether two statements state the same attribute of the same subject."""
    if a.attribute != b.attribute:
        return False
    if a.owner != b.owner and not ((a.owner is None or b.owner is None) and a.thing and b.thing):
        return False
    return _things_agree(a.thing, b.thing)[0]


def compare(older: Statement, newer: Statement, *, same_source: bool) -> Verdict | None:
    """The verdict on `newer` (written after `older`) against `older`, or None when
    they are not about the same attribute of the same subject, or agree."""
    if older.negated or not about_same(older, newer):
        return None
    owner_exact = older.owner == newer.owner
    exact = _things_agree(older.thing, newer.thing)[1]
    if older.attribute == "count" and "more" in (older.value, newer.value):
        if newer.value != "more":
            return None  # "another cat" and then "two cats": not known to differ
    elif same_value(older.value, newer.value):
        if not newer.negated:
            return None  # the same value again: a repetition, not an update
    elif newer.negated:
        return None  # "not in Oslo" says nothing of "in Bergen"
    confidence = 0.8
    if newer.change or newer.negated:
        confidence += 0.1
    if not exact:
        confidence -= 0.15
    if not owner_exact:
        confidence -= 0.1
    if not (older.framed and newer.framed) and older.attribute in {"value", "number"}:
        confidence -= 0.1
    changed = newer.change or newer.negated
    kind: Kind = "update" if changed or same_source else "contradiction"
    matched = tuple(dict.fromkeys((*older.words, *newer.words)))
    what = ("no longer" if newer.negated
            else f"{older.shown or older.value!r} -> {newer.shown or newer.value!r}")
    reason = (f"{'update' if kind == 'update' else 'conflicting value'} of"
              f" {subject_name(newer)} / {newer.attribute}: {what}"
              + ("" if changed or kind == "contradiction" else " (same source)"))
    return Verdict(kind=kind, confidence=round(min(max(confidence, 0.3), 0.99), 2),
                   reason=reason, subject=subject_name(newer), attribute=newer.attribute,
                   matched=matched)
