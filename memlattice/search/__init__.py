"""Recall: ranking, candidate pools, lexical statistics and rerankers.

Pure ranking code sits beside the small caches that feed it; Cypher stays in graph/."""
