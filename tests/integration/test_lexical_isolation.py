"""Lexical scores depend only on the namespace searched (issue: BM25 side channel).

Lucene's own BM25 takes its statistics from the whole fulltext index, which
every tenant shares, so a memory's score moved with other tenants' writes.
Scores now come from the namespace's own statistics (memlattice.search.lexical):
the same memory and query score the same whatever other namespaces hold.
"""

from __future__ import annotations

import uuid
from typing import Any

from memlattice.core.settings import Settings
from memlattice.search.lexical import Bm25, NamespaceStats, document_text, length, terms
from tests.integration._apps import app_with
from tests.integration._support import SEARCH, WRITE_MANY, mem

OWN = [
    "the orchid blooms in early spring",
    "orchid care needs humidity, light and patience with orchids",
    "spring cleaning of the garage took all weekend",
]
QUERY = "orchid spring"


async def lexical_scores(client: Any, namespace: str) -> dict[str, float]:
    """ftsScore per content, from an app whose statistics cache is empty."""
    response = await client.post("/graphql", json={"query": SEARCH, "variables": {"input": {
        "filter": {"namespace": namespace}, "query": QUERY, "mode": "LEXICAL", "limit": 10}}})
    body = response.json()
    assert not body.get("errors"), body
    return {h["memory"]["content"]: h["ftsScore"] for h in body["data"]["search"]}


def expected_scores() -> dict[str, float]:
    """BM25 over the namespace's three memories alone, counted here by hand."""
    own_terms = [set(terms(text)) for text in OWN]
    query = {t for t in terms(QUERY)}
    bm25 = Bm25(
        stats=NamespaceStats(documents=len(OWN),
                             mean_length=sum(length(t) for t in OWN) / len(OWN)),
        frequencies={t: sum(t in d for d in own_terms) for t in query},
    )
    scores = {text: bm25.score(terms(document_text(text)), length(text)) for text in OWN}
    return {text: score for text, score in scores.items() if score > 0}


async def test_scores_do_not_move_with_other_namespaces(settings: Settings) -> None:
    mine, theirs = f"test/{uuid.uuid4().hex[:12]}", f"test/{uuid.uuid4().hex[:12]}"
    async with app_with(settings) as client:
        response = await client.post("/graphql", json={"query": WRITE_MANY, "variables": {
            "inputs": [mem(mine, text) for text in OWN]}})
        assert not response.json().get("errors")
        before = await lexical_scores(client, mine)
        # Another tenant writes a lot about orchids (and at length), which moves
        # every statistic of the shared index: document frequency and mean length.
        response = await client.post("/graphql", json={"query": WRITE_MANY, "variables": {
            "inputs": [mem(theirs, "orchid " * (i % 7 + 1) + f"note number {i} about orchids"
                           " and the many other things that grow in a greenhouse")
                       for i in range(60)]}})
        assert not response.json().get("errors")
    async with app_with(settings) as fresh:  # nothing cached: statistics read anew
        after = await lexical_scores(fresh, mine)
    assert before == after
    expected = expected_scores()
    assert set(after) == set(expected)
    for text, score in expected.items():
        assert abs(after[text] - score) < 1e-9, (text, after[text], score)
