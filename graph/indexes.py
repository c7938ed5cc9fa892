"""The names of the memory indexes and the in-index fence of a fulltext query."""

from __future__ import annotations

from memlattice.graph.codec import search_token

VECTOR_INDEX = "memory_embedding"
FULLTEXT_INDEX = "memory_fulltext"


def fenced_lucene(terms: str, namespace: str, scope_keys: tuple[str, ...] | None) -> str:
    """Restrict a (safe, escaped) Lucene query to a namespace and scope chain in-index."""
    query = f"({terms}) AND nsToken:{search_token(namespace)}"
    if scope_keys is not None:
        tokens = " ".join(search_token(k) for k in scope_keys)
        query += f" AND scopeToken:({tokens})"
    return query
