"""The BM25 statistics of each namespace, cached for the searches that score with
them (memlattice.search.lexical).

A search needs its namespace's size and mean length, and the document
frequency of each of its terms. What it lacks, or holds for longer than
`ttl_s`, is read in one round trip before its scores are computed, so a score
never rests on another namespace's data and a namespace's statistics are at
most a minute behind its writes. The mean length is measured on up to a
thousand of the namespace's memories, exact below that size. Statistics move slowly: a term has to gain
a sizeable part of a namespace to move its weight.
"""

from __future__ import annotations

from collections.abc import Mapping

from memlattice.core.remembered import Remembered
from memlattice.graph.lexical_stats import LexicalStatsGraph
from memlattice.search.lexical import Bm25, NamespaceStats, mean_length


class LexicalStatistics:
    def __init__(self, graph: LexicalStatsGraph, *, ttl_s: float = 60.0,
                 max_entries: int = 100_000) -> None:
        self.graph = graph
        self._namespaces: Remembered[str, NamespaceStats] = Remembered(ttl_s, max_entries)
        self._frequencies: Remembered[tuple[str, str], int] = Remembered(ttl_s, max_entries)

    async def bm25(self, namespace: str, words: Mapping[str, str]) -> Bm25:
        """BM25 for a query whose terms are `words` (term -> a word of the query
        that analyzes to it), with the namespace's statistics; reads what is
        missing or stale first."""
        totals_due = self._namespaces.due(namespace)
        due = {t: w for t, w in words.items() if self._frequencies.due((namespace, t))}
        if totals_due or due:
            counts = await self.graph.counts(namespace, due, totals=totals_due)
            if counts.documents is not None:
                self._namespaces.put(namespace, NamespaceStats(
                    documents=counts.documents, mean_length=mean_length(counts.sample or [])))
            for term in due:
                self._frequencies.put((namespace, term), counts.frequencies.get(term, 0))
        stats = self._namespaces.get(namespace) or NamespaceStats(documents=0, mean_length=0.0)
        return Bm25(stats=stats, frequencies={
            t: self._frequencies.get((namespace, t)) or 0 for t in words})
