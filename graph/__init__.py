"""The knowledge graph: the only package that speaks Cypher."""
