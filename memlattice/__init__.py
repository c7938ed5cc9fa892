"""Memlattice: a Neo4j-backed memory and knowledge service for AI agents."""

__version__ = "0.1.0"
