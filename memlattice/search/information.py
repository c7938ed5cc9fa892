"""How much a memory says on its own: the idf mass of its distinct terms.

A conversation turn is scored with the turns around it as weaker BM25F fields
(memlattice.search.lexical.context_fields), so an answer is found by the
question before it. The same fields also lift a turn that says nothing ("Haha,
totally!") whenever the turn beside it matches: the lift then ranks a reply
that carries no information above memories that do, and an agent reads it
first. Context should lift a turn in proportion to what the turn itself
carries, and what a text carries is, in the terms BM25 already uses, the
inverse document frequency of its words: rare words are information, words
every memory holds are not (Sparck Jones 1972; the "idf mass" of a text).

`Rarity` estimates each term's document frequency from the sample of the
collection's contents that the BM25 statistics read anyway (up to a thousand
memories, all of them in a smaller collection; memlattice.graph.lexical_stats),
so it costs no extra round trip. A turn's `own_share` is its idf mass over the
collection's mean idf mass per memory, capped at 1: a turn that says as much
as the average memory, or more, takes its context at full weight; a turn of
two common words takes a small part of it. Nothing here is fitted: the
reference is the collection's own average.

Pure: no I/O.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from memlattice.search.lexical import terms


@dataclass(frozen=True, slots=True)
class Rarity:
    """Document frequencies of every term in a sample of a collection, and the
    sample's mean idf mass per memory."""

    documents: int
    frequencies: Mapping[str, int]
    mean_mass: float

    def idf(self, term: str) -> float:
        """BM25's idf with the sample's counts (a term the sample lacks is rare)."""
        df = self.frequencies.get(term, 0)
        return math.log(1.0 + (self.documents - df + 0.5) / (df + 0.5))

    def mass(self, text: str) -> float:
        """The idf mass of `text`: its distinct terms' idf, summed."""
        return sum(self.idf(t) for t in _distinct_terms(text))

    def own_share(self, text: str) -> float:
        """`text`'s idf mass over the collection's mean, capped at 1 (1 when the
        sample says nothing)."""
        if self.mean_mass <= 0.0:
            return 1.0
        return min(1.0, self.mass(text) / self.mean_mass)


_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_WORD = re.compile(r"\w+")
# A turn's speaker label ("Walter: "), which opens its first sentence: who speaks,
# not what the turn says (memlattice.search.answer_types reads it too).
SPEAKER_LABEL = re.compile(r"^\s*[\w .'-]{1,40}:\s+")
# A sentence that asks the listener to do something: "can you ...", "remind me
# ...", "send me ...". Like a question, it says what someone wanted, not what is
# so; unless it gives a value ("can you change my number to 0176 ..."), which a
# digit or an address shows. ("Let me ..." is left out: it as often opens the
# speaker's news; "please" too: "please note my new address is ...".)
_REQUEST = re.compile(
    r"^\W*(?:(?:hi|hey|ok|okay|oh|so|and|also)\W+)*"
    r"(?:(?:can|could|would|will)\s+you\b"
    r"|(?!(?:i|you|we|they|it|he|she|let|to|for|with|of|about)\b)[a-z]+\s+me\b)"
    r"(?![^\d@]*[\d@])",
    re.IGNORECASE)


# A command line as a terminal shows it: "$ kubectl -n search get deploy gateway".
_ASKS_A_TOOL = re.compile(r"^\s*\$\s+\S")
# What a log writes between a command and its output on one line: "$ aws ... -> ...".
_OUTPUT = re.compile(r"\s(?:->|=>|→)\s")


@lru_cache(maxsize=16_384)
def asked_share(text: str) -> float:
    """The share of `text`'s words that lie in questions (sentences ending in "?")
    and requests ("remind me who I call about the knee", "can you send it to me"),
    in what only announces what follows (a line ending in ":", "Service catalogue
    lookup for ingest-worker:") and in commands ("$ terraform output"), which ask a
    tool: the answer is in what comes next.

    A memory records what was said; a question says what someone wanted to know,
    not what is so, yet it shares a question's words and, in an embedding, its
    form: "When is my car due for its service?" is closer to "What car does Dario
    drive?" than the turn that names the car. Ranking discounts a memory by this
    share (SearchConfig.question_discount), so a turn that only asks yields to one
    that answers; a turn that asks and tells keeps the part that tells."""
    total = asked = 0
    for line in SPEAKER_LABEL.sub("", text, count=1).splitlines():
        if _ASKS_A_TOOL.match(line):  # a command asks a tool; its output answers
            command = _OUTPUT.split(line, maxsplit=1)[0]
            asked += len(_WORD.findall(command))
            total += len(_WORD.findall(line))
            continue
        for sentence in _SENTENCE.findall(line):
            n = len(_WORD.findall(sentence))
            total += n
            if (sentence.rstrip().endswith(("?", ":")) and _WORD.search(sentence)
                    or _REQUEST.match(sentence)):
                asked += n
    return asked / total if total else 0.0


@lru_cache(maxsize=16_384)
def _distinct_terms(text: str) -> frozenset[str]:
    return frozenset(terms(text))


def rarity(sample: Sequence[str]) -> Rarity | None:
    """The rarity of terms in a collection, estimated from `sample` (its
    memories' contents, or a uniform part of them); None for an empty sample."""
    if not sample:
        return None
    distinct = [_distinct_terms(text) for text in sample]
    frequencies = Counter(t for found in distinct for t in found)
    partial = Rarity(documents=len(sample), frequencies=frequencies, mean_mass=0.0)
    masses = [sum(partial.idf(t) for t in found) for found in distinct]
    return Rarity(documents=len(sample), frequencies=frequencies,
                  mean_mass=sum(masses) / len(masses))
