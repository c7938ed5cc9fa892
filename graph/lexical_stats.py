"""The BM25 statistics (memlattice.search.lexical) of the collection a search
looks at, read in one round trip: a namespace, or the scope chain a scoped
search is fenced to inside it.

Document frequencies come from the fulltext index itself, fenced like the
search, so a term counts a memory exactly when the search would match it
for that term. Counting costs time in proportion to the memories counted, so
the caller caches what it reads (memlattice.search.lexical_stats).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from memlattice.core.lucene import escape
from memlattice.graph.client import GraphClient, Query
from memlattice.graph.indexes import FULLTEXT_INDEX, fenced_lucene


@dataclass(frozen=True, slots=True)
class LexicalCounts:
    """The collection's memories and the contents of up to `sample` of them (None
    when not asked for), and the memories of the collection each term matches."""

    documents: int | None
    sample: list[str] | None
    frequencies: dict[str, int]


def statistics_query(namespace: str, words: Mapping[str, str], *, totals: bool,
                     scope_keys: tuple[str, ...] | None = None, sample: int = 1000) -> Query:
    """Document frequencies of `words` (term -> a word that analyzes to it) in the
    namespace, or in its scope buckets `scope_keys` when given, and when `totals`
    the collection's memories and the contents of up to `sample` of them (their
    mean length in index terms is counted by the caller, with the analyzer Cypher
    does not have):

        CALL () { MATCH (m:Memory) WHERE m.namespace = $namespace
          [AND m.scopeKey IN $scopeKeys] RETURN count(m) AS documents }
        CALL () { MATCH (m:Memory) WHERE m.namespace = $namespace [AND ...]
          WITH m LIMIT $sample RETURN collect(m.content) AS sample }
        CALL () { UNWIND $terms AS t
          CALL (t) { CALL db.index.fulltext.queryNodes(...) YIELD node RETURN count(node) AS df }
          RETURN collect([t.term, df]) AS frequencies }
        RETURN documents, meanLength, frequencies
    """
    parts = ["CYPHER 25"]
    returns = ["frequencies"]
    within = "m.namespace = $namespace"
    if scope_keys is not None:
        within += " AND m.scopeKey IN $scopeKeys"
    if totals:
        parts.append(
            f"CALL () {{ MATCH (m:Memory) WHERE {within}"
            " RETURN count(m) AS documents }\n"
            f"CALL () {{ MATCH (m:Memory) WHERE {within}\n"
            "  WITH m LIMIT $sample RETURN collect(coalesce(m.content, '')) AS sample }")
        returns[:0] = ["documents", "sample"]
    parts.append(
        "CALL () { UNWIND $terms AS t\n"
        f"  CALL (t) {{ CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', t.lucene)"
        " YIELD node RETURN count(node) AS df }\n"
        "  RETURN collect([t.term, df]) AS frequencies }")
    parts.append("RETURN " + ", ".join(returns))
    terms = [{"term": term, "lucene": fenced_lucene(escape(word), namespace, scope_keys)}
             for term, word in words.items()]
    return "\n".join(parts), {"namespace": namespace, "terms": terms, "sample": sample,
                               "scopeKeys": list(scope_keys or ())}


class LexicalStatsGraph:
    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def counts(self, namespace: str, words: Mapping[str, str], *, totals: bool,
                     scope_keys: tuple[str, ...] | None = None) -> LexicalCounts:
        (record,) = await self.client.read(
            statistics_query(namespace, words, totals=totals, scope_keys=scope_keys))
        return LexicalCounts(
            documents=int(record["documents"]) if totals else None,
            sample=[str(c) for c in record["sample"]] if totals else None,
            frequencies={str(t): int(df) for t, df in record["frequencies"]})
