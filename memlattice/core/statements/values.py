"""What kind of value a statement states, and the value's comparable form.

A value's kind says which attribute a generic verb states ("moved to
Thursday" is a time, "moved to 9200" a number, "upgraded to 16.2" a version),
so that "the standup is at 10am" and "the standup moved to 11:30" compare as the
same attribute without any verb list. Kinds are read from the value's shape
alone (digits, separators, calendar words), which holds for any text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memlattice.core.entities import CALENDAR_WORDS
from memlattice.core.statements.lexicon import COUNT_WORDS, DETERMINERS

_WEEKDAYS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                       "sunday", "mondays", "tuesdays", "wednesdays", "thursdays", "fridays",
                       "saturdays", "sundays", "weekday", "weekdays", "weekend", "weekends"})
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(\.[\w-]+)+$")
_HOST = re.compile(r"^(?:[a-z]+://)?[\w-]+(?:\.[\w-]+)+(?::\d{1,5})?(?:/\S*)?$|"
                   r"^[\w-]+:\d{2,5}$", re.IGNORECASE)
_PHONE = re.compile(r"^\+?[\d()][\d()\s.\-]{5,}\d$")
_TIME = re.compile(r"^\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|h)?$", re.IGNORECASE)
_CLOCK = re.compile(r"^\d{1,2}:\d{2}$|^\d{1,2}(?::\d{2})?(?:am|pm)$", re.IGNORECASE)
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+[a-z0-9\-]*$|^v\d+$", re.IGNORECASE)
_NUMBER = re.compile(r"^[$€£]?\d[\d,]*(?:\.\d+)?[kmb%]?$", re.IGNORECASE)
_MONEY = re.compile(r"^[$€£]\d|^\d[\d,.]*\s*(?:k|m)?\s*(?:usd|eur|gbp|dollars|euros|pounds)$",
                    re.IGNORECASE)

# File types that are no top-level domain: a name ending in one is a file.
_FILE_TYPES = frozenset({"yaml", "yml", "json", "toml", "ini", "cfg", "conf", "txt", "csv",
                         "log", "lock", "tfvars", "tf", "xml", "html", "py", "js", "ts",
                         "java", "rb", "go", "sql", "env", "pem", "key", "crt", "tar", "gz",
                         "zip", "png", "jpg", "pdf", "docx", "xlsx", "md"})

# The attribute a generic verb states, by the kind of its value: a time, a weekday
# and a date are all "when" something happens.
KIND_ATTRIBUTE = {
    "time": "when", "weekday": "when", "date": "when", "phone": "phone", "email": "email",
    "host": "address", "version": "version", "money": "amount", "number": "number",
}


def value_kind(tokens: Sequence[str], originals: Sequence[str]) -> str:
    """The kind of a value, from its words (lower case) and as written."""
    joined = " ".join(tokens)
    if any(_EMAIL.match(t) for t in tokens):
        return "email"
    if any(_CLOCK.match(t) for t in tokens) or (
            len(tokens) >= 2 and _TIME.match(" ".join(tokens[:2])) and tokens[1] in {"am", "pm"}):
        return "time"
    if tokens and tokens[0] in {"noon", "midnight"}:
        return "time"
    if any(t in _WEEKDAYS for t in tokens):
        return "weekday"
    if any(t in CALENDAR_WORDS for t in tokens) or re.search(r"\d{4}-\d{2}-\d{2}", joined):
        return "date"
    if _MONEY.match(joined) or any(t.startswith(("$", "€", "£")) for t in tokens):
        return "money"
    if any(_VERSION.match(t) for t in tokens) or (
            len(tokens) >= 2 and originals[0][:1].isupper() and _NUMBER.match(tokens[-1])
            and not _NUMBER.match(tokens[0])):
        return "version"  # "16.2", "v3", "Postgres 16": a named thing's release
    if any(_HOST.match(t) and not _NUMBER.match(t) and _names_a_host(t) for t in tokens):
        return "host"
    if _PHONE.match(joined) and sum(c.isdigit() for c in joined) >= 7:
        return "phone"
    if tokens and all(_NUMBER.match(t) or t in COUNT_WORDS or t in {"port"} for t in tokens):
        return "number"
    if any(o[:1].isupper() for o in originals):
        return "name"
    return "text"


_MONTHS = {name: number for number, names in enumerate(
    (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
     ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
     ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
     ("december", "dec")), start=1) for name in names}
_DAY = re.compile(r"^(\d{1,2})(?:st|nd|rd|th)?$")
_ISO_DATE = re.compile(r"^\d{4}-(\d{2})-(\d{2})$")


def calendar_date(word: str, neighbour: str) -> str | None:
    """A day of the year as "MM-DD" from a day and its month, whichever comes first
    ("19 March", "March 19th"), or from an ISO date ("2026-03-19"); so "ships
    2 April 2026" and "target release: 2026-03-14" compare as two dates."""
    if not (word[:1].isdigit() or word in _MONTHS):
        return None
    iso = _ISO_DATE.match(word)
    if iso:
        return f"{iso[1]}-{iso[2]}"
    day, month = (_DAY.match(word), _MONTHS.get(neighbour)) if word[:1].isdigit() else (
        _DAY.match(neighbour), _MONTHS.get(word))
    if day is None or month is None or not 1 <= int(day[1]) <= 31:
        return None
    return f"{month:02d}-{int(day[1]):02d}"


def _names_a_host(token: str) -> bool:
    """Whether an address-shaped token names a host: host names hold no underscore
    (RFC 1123; "aws_redshift_cluster.wh" is a resource) and end in no file type
    ("values-prod.yaml" is a file)."""
    if "://" in token:
        return True
    host = re.split(r"[:/]", token, maxsplit=1)[0]
    return "_" not in host and host.rsplit(".", 1)[-1] not in _FILE_TYPES


def product_of(tokens: Sequence[str], originals: Sequence[str]) -> tuple[str, ...]:
    """The named thing a version belongs to ("Postgres 16" -> postgres): a version
    is only comparable with a version of the same thing."""
    return tuple(t for t, o in zip(tokens, originals)
                 if not _VERSION.match(t) and not _NUMBER.match(t) and t not in DETERMINERS
                 and (o[:1].isupper() or t.isalpha()))[:2]


def normalise(tokens: Sequence[str], kind: str) -> str:
    """The value's comparable form: without determiners and adjectives of novelty,
    digits and separators only for numbers and phones."""
    kept = [t for t in tokens if t not in DETERMINERS]
    if kind in {"phone"}:
        return re.sub(r"\D", "", " ".join(kept))
    if kind == "time":  # "06:30" is "6:30", "7:00pm" is "7pm"
        return re.sub(r"^0(?=\d)", "", "".join(kept).replace(".", "").replace(":00", ""))
    if kind == "number":
        words = [str(COUNT_WORDS.get(t, t)).replace(",", "") for t in kept if t != "port"]
        return " ".join(words)
    if kind == "weekday":
        return " ".join(t.rstrip("s") if t.endswith("days") else t for t in kept)
    if kind == "version":
        return " ".join(t.lstrip("v") for t in kept if _VERSION.match(t) or _NUMBER.match(t))
    return " ".join(kept)


def same_value(a: str, b: str) -> bool:
    """Whether two normalised values say the same (one naming the other more fully,
    "Porto" and "Porto Portugal", is the same)."""
    if a == b:
        return True
    wa, wb = set(a.split()), set(b.split())
    return bool(wa and wb) and (wa <= wb or wb <= wa)


def same_names(older: frozenset[tuple[str, ...]],
               newer: frozenset[tuple[str, ...]]) -> set[str]:
    """The words of the names both state, a shorter name matching a longer one it
    begins ("Kenji", "Kenji Sato")."""
    out: set[str] = set()
    for a in older:
        for b in newer:
            short, long = sorted((a, b), key=len)
            if long[:len(short)] == short:
                out.update(long)
    return out


def not_speakers(names: set[str], speakers: set[str]) -> set[str]:
    """The names that are not a speaker's, nor a short form of one ("Mel")."""
    return {n for n in names if not any(s.startswith(n) or n.startswith(s) for s in speakers)}
