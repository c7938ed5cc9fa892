"""What a name may be: the rule for every string that names something.

Namespaces, scope ids (agent, user, session, task), keys, tags, ids, kinds,
evidence refs and metadata keys are compared for equality and shown to
people. A name that is empty, blank, or that holds characters nobody can see
(controls, bidi overrides, zero-width marks, line separators, unassigned or
surrogate code points) makes two different names look the same, or one name
match everything (`forget(tag: " ")`), so such names are refused at input:

* not empty, and not blank (only whitespace or invisible characters);
* no leading or trailing whitespace (`"team "` is not `"team"`, yet looks so);
* no character of the Unicode categories Cc (controls, incl. U+007F, U+0085),
  Cf (format: bidi overrides U+202A-U+202E, U+2066-U+2069, zero-width U+200B-
  U+200D, U+FEFF...), Zl / Zp (U+2028, U+2029), Cs (surrogates) or Cn
  (unassigned in the Unicode version of the running Python).

Inner spaces (also U+00A0), every script, emoji and private-use characters
stay allowed. One consequence: emoji ZWJ sequences (U+200D is Cf) are refused
in names, though not in content. Free text (content, summaries, claims) keeps
its controls and format characters; it only must not be blank (`blank`).
"""

from __future__ import annotations

import unicodedata

from memlattice.core.errors import ValidationError

# Categories refused anywhere in a name; Zs (spaces) only at the ends.
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Cn"})


def _invisible(ch: str) -> bool:
    return unicodedata.category(ch) in INVISIBLE_CATEGORIES


def blank(text: str) -> bool:
    """True when `text` has nothing a person could see: only whitespace, controls,
    format characters or separators (`" \\u200b\\t"`)."""
    return all(ch.isspace() or _invisible(ch) or unicodedata.category(ch) == "Zs"
               for ch in text)


def name_problem(value: str) -> str | None:
    """Why `value` cannot be a name, or None when it can."""
    if not value:
        return "must not be empty"
    if blank(value):
        return "must not be blank"
    if value[0].isspace() or value[-1].isspace():
        return "must not begin or end with whitespace"
    # str.isprintable() is False for every C* and Z* character except the ASCII
    # space: a fast pass for the usual name, the per-character look only otherwise.
    if not value.isprintable():
        for ch in value:
            if _invisible(ch):
                return (f"contains the invisible, control or unassigned character"
                        f" U+{ord(ch):04X}")
    return None


def check_name(value: str, what: str = "name") -> str:
    """`value` when it is a valid name; else ValueError (for Pydantic validators)."""
    problem = name_problem(value)
    if problem is not None:
        raise ValueError(f"{what} {problem}")
    return value


def check_visible(value: str, what: str = "text") -> str:
    """`value` when a person could see something in it; else ValueError (free text:
    subjects, objects, steps, summaries of payloads)."""
    if blank(value):
        raise ValueError(f"{what} must not be blank (whitespace or invisible characters)")
    return value


def require_name(value: str, field: str) -> str:
    """`value` when it is a valid name; else the project's ValidationError naming `field`
    (for arguments that reach a service without an input model)."""
    problem = name_problem(value)
    if problem is not None:
        raise ValidationError(f"{field} {problem}", field=field)
    return value


def require_names(**fields: str | None) -> None:
    """Each given argument that names something is a valid name (`require_name`)."""
    for field, value in fields.items():
        if value is not None:
            require_name(value, field)
