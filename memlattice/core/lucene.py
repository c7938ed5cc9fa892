"""Turn user text into a safe Lucene query for Neo4j's fulltext index.

User text must never be parsed as Lucene syntax: `foo AND (bar` would error,
and `*:*` or `content:x` would inject operators. Text is cut into words of
letters and digits (any script) that may hold inner dots and apostrophes, so
`3.14` and `don't` reach the analyzer whole, as the indexer saw them; every
other character separates words. Words are lowercased (Lucene's AND/OR/NOT
are upper-case keywords) and escaped all the same, as a second fence. Words are joined as optional terms (`any`, for
ranking) or required ones (`all`, for `forget`).
"""

from __future__ import annotations

import re

from memlattice.core.query_words import content_words

_WORD = re.compile(r"[^\W_]+(?:[.'’][^\W_]+)*", re.UNICODE)
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


def query_any_terms(text: str) -> str | None:
    """`any_terms` of a search's query: its content words only (core.query_words), so
    the fulltext index is asked for what the question is about, not for "what did"."""
    terms = content_words(words(text))
    return " ".join(escape(t) for t in terms) if terms else None


def all_terms(text: str) -> str | None:
    """A conjunction of the words of `text`, or None when it has no word."""
    terms = words(text)
    return " ".join("+" + escape(t) for t in terms) if terms else None
