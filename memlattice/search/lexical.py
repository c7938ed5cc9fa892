"""Lexical relevance that depends only on the namespace searched: BM25 with the
namespace's own statistics.

Neo4j's fulltext index is one Lucene index for every tenant, and Lucene's BM25
takes its document frequencies and average length from the whole index. A
memory's lexical score then moved with what other tenants had written (6.09
on one server, 5.55 on another for the same memory and query): a statistical
side channel between tenants, and scores nobody could reproduce. So Lucene
only *finds* the candidates (fenced to the namespace); their score is
computed here, from statistics of the namespace alone (graph.lexical_stats):

    score(q, d) = sum over terms t of q and d:
        idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avg|d|))
    idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

with N the namespace's memories, df(t) those of them the fulltext index
matches for t, and |d| the number of index terms of a memory's content (what
Lucene counts as a field's length: stop words do not count).

Terms are what Lucene's English analyzer, which the index is built with,
makes of the text: Unicode words, possessives dropped, lower case, its
stop words removed, Porter stems. Memories match on their content, summary,
key and tags, as the fulltext query does.

Pure: no I/O, so ranking tests and benchmarks score exactly as the service.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from functools import lru_cache
from typing import TYPE_CHECKING

import snowballstemmer

from memlattice.core import embedding_text
from memlattice.core.query_words import content_words

if TYPE_CHECKING:
    from memlattice.search.information import Rarity

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, which the fulltext index drops.
STOP_WORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with",
})
BM25_K1 = 1.2
BM25_B = 0.75

# Words as StandardTokenizer keeps them: letters and digits of any script, with
# inner dots and apostrophes (`3.14`, `don't`); the same cut as memlattice.core.lucene.
_WORD = re.compile(r"[^\W_]+(?:[.'’][^\W_]+)*", re.UNICODE)
_POSSESSIVE = re.compile(r"['’][sS]$")
_STEMMER = snowballstemmer.stemmer("porter")


@lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    stemmed: str = _STEMMER.stemWord(word)
    return stemmed


def terms(text: str) -> list[str]:
    """The index terms of `text`, in order, repeats kept (they are frequencies)."""
    return list(_terms(text))


# A search analyses each candidate's text and its neighbours' (the same turns come
# back as neighbours of several candidates, and in the next search).
@lru_cache(maxsize=16_384)
def _terms(text: str) -> tuple[str, ...]:
    out = []
    for word in _WORD.findall(text):
        # Most words have no apostrophe, and the possessive rule is all they would pay for.
        if "'" in word or "’" in word:
            word = _POSSESSIVE.sub("", word)
        word = word.lower()
        if word and word not in STOP_WORDS:
            out.append(_stem(word))
    return tuple(out)


def query_terms(text: str) -> dict[str, str]:
    """Each distinct term of a query's content words (memlattice.core.query_words:
    its stop words left out unless it has nothing else), with the first word of the
    query that made it (what is sent to the fulltext index to count the term's
    documents)."""
    found: dict[str, str] = {}
    spoken = [m.group(0).lower() for m in _WORD.finditer(text)]
    for word in content_words(spoken):
        stripped = _POSSESSIVE.sub("", word)
        if stripped and stripped not in STOP_WORDS:
            found.setdefault(_stem(stripped), word)
    return found


def length(content: str) -> int:
    """A memory's length for BM25: the index terms of its content."""
    return len(terms(content))


def mean_length(contents: Sequence[str]) -> float:
    """The mean `length` of some memories' contents (0 for none)."""
    return sum(length(c) for c in contents) / len(contents) if contents else 0.0


def document_text(content: str, summary: str | None = None, key: str | None = None,
                  tags: Iterable[str] = ()) -> str:
    """What the fulltext index matches a memory on, as one text."""
    return " ".join([content, summary or "", key or "", *tags])


# Who said a turn is a field of it, like an e-mail's sender, not part of what it
# says: in one text, a question that names the speaker matched every turn of theirs
# and gave the shortest the most (BM25 normalises by length), so "Good idea, yes
# please." outranked what the speaker said about the question's topic. Its vector
# keeps the speaker apart the same way, with the same split.
split_speaker = embedding_text.split_speaker


@dataclass(frozen=True, slots=True)
class NamespaceStats:
    """The namespace's side of BM25: how many memories it holds and their mean length."""

    documents: int
    mean_length: float


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a memory for BM25F: how often it holds each query term, its
    length in index terms, its weight, and the namespace's mean length of such a
    field (what its length is normalised by)."""

    counts: Mapping[str, int]
    length: int
    weight: float = 1.0
    mean_length: float | None = None  # None: the namespace's mean memory length


@dataclass(frozen=True, slots=True)
class Bm25:
    """BM25 for one query in one namespace; BM25F over several fields of a memory.

    One instance serves one search: it remembers what it counted in each text,
    since the same turns come back as candidates and as neighbours of others.
    """

    stats: NamespaceStats
    frequencies: Mapping[str, int]  # term -> the namespace's memories that hold it
    # How rare every term is in the collection (memlattice.search.information), when
    # known: what a memory says on its own sets how much its context counts.
    rarity: Rarity | None = None
    k1: float = BM25_K1
    b: float = BM25_B
    _counted: dict[str, tuple[dict[str, int], int]] = dataclass_field(
        default_factory=dict, compare=False, repr=False)

    def idf(self, term: str) -> float:
        # A term counted before the memory holding it was written still weighs as
        # rare, never negatively (df at least 1, N at least df).
        df = max(1, self.frequencies.get(term, 1))
        n = max(self.stats.documents, df)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def count(self, text: str) -> tuple[dict[str, int], int]:
        """The query terms `text` holds (how often) and its length in index terms."""
        known = self._counted.get(text)
        if known is None:
            found = _terms(text)
            counts: dict[str, int] = {}
            for term in found:
                if term in self.frequencies:
                    counts[term] = counts.get(term, 0) + 1
            known = self._counted[text] = (counts, len(found))
        return known

    def field(self, texts: Iterable[str], weight: float = 1.0,
              mean_length: float | None = None) -> Field:
        """One field made of `texts` (counted once each per search)."""
        counts: dict[str, int] = {}
        size = 0
        for text in texts:
            found, length_ = self.count(text)
            size += length_
            for term, tf in found.items():
                counts[term] = counts.get(term, 0) + tf
        return Field(counts, size, weight, mean_length)

    def speaker_field(self, speaker: str) -> Field:
        """Who said a turn, as a field of its own whose length is not normalised: a
        question that names the speaker matches each of their turns alike, long or
        short (`split_speaker`)."""
        counts, size = self.count(speaker)
        return Field(counts, size, 1.0, float(max(size, 1)))

    def score(self, document_terms: Sequence[str], document_length: int) -> float:
        """Plain BM25 of one text's terms (`document_length` may differ from their
        number when the text holds more than the content, as summary, key, tags)."""
        counts = Counter(t for t in document_terms if t in self.frequencies)
        return self.score_fields([Field(counts, document_length)])

    def score_fields(self, fields: Sequence[Field]) -> float:
        """BM25F (Robertson, Zaragoza and Taylor, 2004): each field's term
        frequencies, normalised by its own length and weighted, are summed before
        saturation, so a term found in two fields counts once, more strongly."""
        weighted: dict[str, float] = {}
        for f in fields:
            if not f.counts or f.weight <= 0:
                continue
            mean = self.stats.mean_length if f.mean_length is None else f.mean_length
            mean = mean if mean > 0 else float(f.length)
            norm = 1.0 - self.b + self.b * f.length / max(mean, 1.0)
            for term, tf in f.counts.items():
                weighted[term] = weighted.get(term, 0.0) + f.weight * tf / norm
        return sum(self.idf(t) * tf * (self.k1 + 1.0) / (tf + self.k1)
                   for t, tf in weighted.items())

    def context_fields(self, neighbours: Sequence[tuple[int, str]], *, hops: int,
                       decay: float, own: float = 1.0) -> list[Field]:
        """A memory's neighbours in its sequence (the turns said before and after
        it, as `(hops away, content)`) as BM25F fields, one per distance, weighted
        `own * decay ** distance`: what was said around a turn is part of what it
        is about ("yes, that one" answers the question before it), as much as the
        turn itself says something (`own`, in [0, 1]: its share of information,
        memlattice.search.information; a reply that says nothing is not what a
        question about its neighbour is after). A distance's field holds up to
        two memories, one each side, so its mean length is twice a memory's."""
        if not neighbours:
            return []
        by_hop: dict[int, list[str]] = {}
        for hop, content in neighbours:
            if 1 <= hop <= hops:
                by_hop.setdefault(hop, []).append(content)
        return [self.field(by_hop[hop], weight=own * decay ** hop,
                           mean_length=2.0 * self.stats.mean_length)
                for hop in sorted(by_hop)]
