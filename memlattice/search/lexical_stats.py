"""The BM25 statistics of each collection searched, cached for the searches that
score with them (memlattice.search.lexical).

The collection is what the search looks at: the namespace, or for a scoped
search the scope chain it is fenced to (a user's or a session's memories and
the levels above them). Statistics of the collection searched are what BM25
means by them: inside one user's memories that user's name is on every other
memory and says little, while across the namespace it is rare and would
outweigh the words the question is really about.

A search needs its collection's size and mean length, and the document
frequency of each of its terms. What it lacks, or holds for longer than
`ttl_s`, is read in one round trip before its scores are computed, so a score
never rests on another namespace's data and the statistics are at most a
minute behind its writes. The mean length is measured on up to a
thousand of the namespace's memories, exact below that size. Statistics move slowly: a term has to gain
a sizeable part of a namespace to move its weight.
"""

from __future__ import annotations

from collections.abc import Mapping

from memlattice.core.remembered import Remembered
from memlattice.graph.lexical_stats import LexicalStatsGraph
from memlattice.search.information import Rarity, rarity
from memlattice.search.lexical import Bm25, NamespaceStats, mean_length

# What a search's statistics are of: a namespace, and its scope buckets or None.
Collection = tuple[str, tuple[str, ...] | None]


class LexicalStatistics:
    def __init__(self, graph: LexicalStatsGraph, *, ttl_s: float = 60.0,
                 max_entries: int = 100_000) -> None:
        self.graph = graph
        self._collections: Remembered[Collection, NamespaceStats] = Remembered(
            ttl_s, max_entries)
        # Read with the totals, from the same sample of contents.
        self._rarities: Remembered[Collection, Rarity | None] = Remembered(ttl_s, max_entries)
        self._frequencies: Remembered[tuple[Collection, str], int] = Remembered(
            ttl_s, max_entries)

    async def bm25(self, namespace: str, words: Mapping[str, str],
                   scope_keys: tuple[str, ...] | None = None) -> Bm25:
        """BM25 for a query whose terms are `words` (term -> a word of the query
        that analyzes to it), with the statistics of the namespace or, when
        `scope_keys` is given, of those scope buckets in it; reads what is
        missing or stale first."""
        collection: Collection = (namespace, tuple(sorted(scope_keys))
                                  if scope_keys is not None else None)
        totals_due = self._collections.due(collection)
        due = {t: w for t, w in words.items() if self._frequencies.due((collection, t))}
        if totals_due or due:
            counts = await self.graph.counts(namespace, due, totals=totals_due,
                                             scope_keys=collection[1])
            if counts.documents is not None:
                self._collections.put(collection, NamespaceStats(
                    documents=counts.documents, mean_length=mean_length(counts.sample or [])))
                self._rarities.put(collection, rarity(counts.sample or []))
            for term in due:
                self._frequencies.put((collection, term), counts.frequencies.get(term, 0))
        stats = self._collections.get(collection) or NamespaceStats(documents=0, mean_length=0.0)
        return Bm25(stats=stats, frequencies={
            t: self._frequencies.get((collection, t)) or 0 for t in words},
            rarity=self._rarities.get(collection))

