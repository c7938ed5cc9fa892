"""The whole store, read out and written back: the Cypher of `memlattice backup`/`restore`.

`reads` streams every node and relationship of the database, whatever its
labels, types and properties, inside one read transaction; `writes` recreates
them in a fresh database. Neither names a label or relationship type of
Memlattice's own: what the service stores next year is carried the same way.
"""
