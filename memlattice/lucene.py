"""Turn user text into a safe Lucene query for Neo4j's fulltext index.

User text must never be parsed as Lucene syntax: `foo AND (bar` would error,
and `*:*` or `content:x` would inject operators. Text is split into words
(letters and digits, any script), each word is escaped, and words are joined
as optional terms (`any`, for ranking) or required ones (`all`, for `forget`).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)
_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')
# Lucene's boolean operators are case-sensitive keywords; lowercasing defuses them.
MAX_TERMS = 64


def words(text: str) -> list[str]:
    """Lowercased words, in order, without duplicates, at most MAX_TERMS."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text):
        seen.setdefault(match.group(0).lower(), None)
        if len(seen) >= MAX_TERMS:
            break
    return list(seen)


def escape(term: str) -> str:
    return _SPECIAL.sub(r"\\\1", term)


def any_terms(text: str) -> str | None:
    """A disjunction of the words of `text`, or None when it has no word."""
    terms = words(text)
    return " ".join(escape(t) for t in terms) if terms else None


def all_terms(text: str) -> str | None:
    """A conjunction of the words of `text`, or None when it has no word."""
    terms = words(text)
    return " ".join("+" + escape(t) for t in terms) if terms else None
