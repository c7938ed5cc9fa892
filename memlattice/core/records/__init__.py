"""Typed records: the payload models, their pure rules, and consolidation rules.

Nothing here does I/O; `graph/records.py` stores what these models validate.
"""
